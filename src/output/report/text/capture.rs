//! The summary's capture: files, frames by kind, ICRC and ECN totals, UET, native
//! InfiniBand, encapsulations, a doubled mirror, management packets.

use std::io::{self, Write};

use super::ms;
use crate::analyze::report::Report;

/// The capture: files, frames by kind, ICRC and ECN totals, encapsulations.
pub(super) fn write_capture(out: &mut impl Write, r: &Report) -> io::Result<()> {
    let t = &r.roce.totals;
    let files: Vec<&str> = r.roce.inputs.iter().map(|i| i.file.as_str()).collect();
    writeln!(out, "Capture: {}", files.join(", "))?;
    writeln!(out, "  duration {} ms, {} frames, {} bytes", ms(r.roce.capture.duration_ns as u64), t.frames, t.bytes)?;
    // UET packets are non-RoCE frames, counted apart from the other ones
    let uet = r.uet.as_ref().map_or(0, |u| u.packets);
    writeln!(
        out,
        "  RoCE {} (v2 {}, v1 {}{}),{} other {} (PFC {}, PAUSE {}), malformed {}{}, mirror duplicates {}",
        t.roce_packets,
        t.roce_v2,
        t.roce_v1,
        if t.infiniband > 0 { format!(", native InfiniBand {}", t.infiniband) } else { String::new() },
        if uet > 0 { format!(" UET {uet},") } else { String::new() },
        t.non_roce.saturating_sub(uet),
        t.pfc_frames,
        t.pause_frames,
        t.malformed,
        if t.headers_cut > 0 { format!(", cut inside their headers {}", t.headers_cut) } else { String::new() },
        t.mirror_duplicates
    )?;
    // a UET capture without RoCE leaves out the RoCE lines, all zeros
    let roce = uet == 0 || t.roce_packets + t.infiniband > 0;
    if roce {
        writeln!(
            out,
            "  ICRC: {} ok, {} bad, {} unverifiable",
            r.roce.icrc.ok, r.roce.icrc.bad, r.roce.icrc.unverifiable
        )?;
    }
    if let Some(uet) = &r.uet {
        let c = &uet.crc;
        let reading = c.variant.map_or_else(|| "no reading matched".to_string(), |v| format!("reading {v}"));
        let copies = match uet.mirror_duplicates {
            0 => String::new(),
            n => format!(" ({n} mirror duplicates)"),
        };
        writeln!(
            out,
            "  UET: {} packets{copies}; CRC32C: {} ok, {} bad, {} unchecked ({reading})",
            uet.packets, c.ok, c.bad, c.unchecked
        )?;
        super::uet::write_pdcs(out, uet)?;
    }
    if t.infiniband + t.infiniband_link > 0 {
        let ib = &r.roce.infiniband;
        writeln!(
            out,
            "  InfiniBand: {} packets, {} link packets; VCRC {} ok, {} bad, {} unverifiable; FECN {}, BECN {}; ERF records lost {}",
            t.infiniband,
            t.infiniband_link,
            ib.vcrc_ok,
            ib.vcrc_bad,
            ib.vcrc_unverifiable,
            ib.fecn,
            ib.becn,
            ib.erf_records_lost
        )?;
    }
    if roce {
        write_ecn(out, r)?;
    }
    if !r.roce.capture.encapsulations.is_empty() {
        let e: Vec<String> = r.roce.capture.encapsulations.iter().map(|(k, v)| format!("{k} {v}")).collect();
        writeln!(out, "  encapsulations: {}", e.join(", "))?;
    }
    if let Some(d) = r.roce.capture.doubled_mirror.filter(|d| d.doubled) {
        writeln!(
            out,
            "  doubled mirror: {} of the first {} RoCE frames have a byte-identical copy; each packet counts once",
            d.with_identical_copy, d.frames
        )?;
    }
    if r.roce.management.packets > 0 {
        writeln!(out, "  management (QP 0/1, not policy-checked data): {} packets", r.roce.management.packets)?;
    }
    writeln!(out)?;
    Ok(())
}

/// The RoCE packets' ECN marks and the CNPs.
fn write_ecn(out: &mut impl Write, r: &Report) -> io::Result<()> {
    writeln!(
        out,
        "  ECN: {} Not-ECT, {} ECT(0), {} ECT(1), {} CE{}; CNPs {}",
        r.roce.ecn.not_ect,
        r.roce.ecn.ect0,
        r.roce.ecn.ect1,
        r.roce.ecn.ce,
        if r.roce.ecn.outer_ce > 0 {
            format!(" (and {} CE in a VXLAN overlay's outer header only)", r.roce.ecn.outer_ce)
        } else {
            String::new()
        },
        r.roce.cnps
    )?;
    Ok(())
}
