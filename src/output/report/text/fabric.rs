//! The summary's fabric configuration (`analyze --config`, `rocescope fabric`): the policy the
//! configurations give, each value with its source, and each device's QoS on one line.

use std::io::{self, Write};

use crate::analyze::fabric::checks::listed;
use crate::analyze::fabric::report::{DeviceReport, EcnReport, FabricReport};

pub fn write_fabric(out: &mut impl Write, fabric: &FabricReport) -> io::Result<()> {
    let p = &fabric.policy;
    let priority = p.data_priority.map_or_else(|| "-".to_string(), |prio| prio.to_string());
    writeln!(out)?;
    writeln!(out, "Fabric configuration ({} devices)", fabric.devices.len())?;
    writeln!(
        out,
        "  data DSCP {} ({}) on priority {priority} ({})",
        p.data_dscp, p.data_dscp_source, p.data_priority_source
    )?;
    writeln!(
        out,
        "  CNP DSCP {} ({}), priority {} ({})",
        p.cnp_dscp, p.cnp_dscp_source, p.cnp_priority, p.cnp_priority_source
    )?;
    writeln!(out, "  lossless priorities {} ({})", listed(&p.lossless_priorities), p.lossless_priorities_source)?;
    writeln!(
        out,
        "  {:<16} {:<6} {:<5} {:<10} {:<7} {:<26} {:<6} {:<6} watchdog",
        "device", "kind", "trust", "data DSCP", "PFC", "ECN (prio:min-max bytes)", "CNP", "MTU"
    )?;
    for device in &fabric.devices {
        write_device(out, device, p.data_dscp)?;
    }
    Ok(())
}

/// One device's line; a device whose files name no QoS says what it runs instead.
fn write_device(out: &mut impl Write, d: &DeviceReport, data_dscp: u8) -> io::Result<()> {
    if !d.configured {
        let note = d.note.as_deref().unwrap_or("no QoS configured");
        return writeln!(out, "  {:<16} {:<6} {note}", d.name, d.kind);
    }
    let or_dash = |v: Option<String>| v.unwrap_or_else(|| "-".to_string());
    let data = d.dscp_to_priority.get(&data_dscp).map(|prio| format!("{data_dscp}→{prio}"));
    let ecn: Vec<String> = d.ecn.iter().filter(|e| e.enabled).map(ecn_marking).collect();
    let cnp = match (d.cnp_dscp, d.cnp_priority) {
        (None, None) => None,
        (dscp, prio) => {
            Some(format!("{}/{}", or_dash(dscp.map(|v| v.to_string())), or_dash(prio.map(|v| v.to_string()))))
        }
    };
    writeln!(
        out,
        "  {:<16} {:<6} {:<5} {:<10} {:<7} {:<26} {:<6} {:<6} {}",
        d.name,
        d.kind,
        d.trust.unwrap_or("-"),
        or_dash(data),
        or_dash(d.pfc_priorities.as_deref().map(listed)),
        if ecn.is_empty() { "-".to_string() } else { ecn.join(" ") },
        or_dash(cnp),
        or_dash(d.mtu.map(|m| m.to_string())),
        or_dash(d.pfc_watchdog.map(|on| if on { "on" } else { "off" }.to_string())),
    )
}

/// `3:150000-1500000,100%`: a priority's ECN thresholds in bytes and its probability.
fn ecn_marking(e: &EcnReport) -> String {
    let bytes = |b: Option<u64>| b.map_or_else(|| "?".to_string(), |b| b.to_string());
    let probability = e.probability.map_or(String::new(), |p| format!(",{p}%"));
    format!("{}:{}-{}{probability}", e.priority, bytes(e.min_bytes), bytes(e.max_bytes))
}
