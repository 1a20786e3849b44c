//! The fabric configuration's room: the QoS configuration of hosts and switches, read from what
//! their tools print, in one model per device ([`model`]): the hosts' readers ([`host`]:
//! `mlnx_qos`, `show_gids`, NCCL settings, `mlxconfig`, the NIC's ECN sysfs, `ip link`) and the
//! switches' ([`switch`]: SONiC `config_db.json`, Cumulus NVUE YAML, Arista EOS running-config).
//! Each recognises its format by the text alone. [`devices`] groups the files given per device,
//! [`policy`] derives the policy a capture is judged by, [`checks`] checks the devices against
//! each other and a capture, [`report`] is what the report shows and [`rules`] its findings.

pub mod checks;
pub mod devices;
pub mod host;
pub mod model;
pub mod policy;
pub mod report;
pub mod rules;
#[cfg(test)]
mod samples;
pub mod switch;

use crate::analyze::roce::report::model::RoceReport;
use checks::{Seen, SeenDscp};
use devices::Device;
use report::FabricReport;

/// The fabric section of the report: the devices read, the policy they give, and what the
/// checks find of them and, where the capture's RoCE section is given, of the capture.
pub fn analyse(devices: &[Device], capture: Option<&RoceReport>) -> FabricReport {
    let policy = policy::fabric_policy(devices);
    let seen = capture.map(seen_in);
    let checks = checks::check(devices, &policy, seen.as_ref());
    report::fabric_report(devices, &policy, checks)
}

/// What the capture shows of the marking: each DSCP each host's data packets and CNPs carry.
fn seen_in(roce: &RoceReport) -> Seen {
    let of_class = |class: &str| {
        let seen = roce.policy.dscps_seen.iter().filter(move |s| s.class == class);
        seen.map(|s| SeenDscp { dscp: s.dscp, first_frame: s.first_frame.get(), sender: s.sender.to_string() })
            .collect()
    };
    Seen { data: of_class("data"), cnps: of_class("cnp") }
}
