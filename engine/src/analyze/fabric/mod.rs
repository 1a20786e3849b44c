//! The fabric configuration's room: the QoS configuration of hosts and switches, read from what
//! their tools print, in one model per device ([`model`]): the hosts' readers ([`host`]:
//! `mlnx_qos`, `show_gids`, NCCL settings, `mlxconfig`, the NIC's ECN sysfs, `ip link`) and the
//! switches' ([`switch`]: SONiC `config_db.json`, Cumulus NVUE YAML, Arista EOS running-config).
//! Each recognises its format by the text alone. [`devices`] groups the files given per device,
//! [`policy`] derives the policy a capture is judged by, [`checks`] checks the devices against
//! each other and a capture, and [`report`] is what the report shows.

pub mod checks;
pub mod devices;
pub mod host;
pub mod model;
pub mod policy;
pub mod report;
#[cfg(test)]
mod samples;
pub mod switch;
