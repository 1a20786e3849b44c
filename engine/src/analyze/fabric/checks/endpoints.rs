//! The checks of the hosts' endpoints: the GID NCCL uses (QOS_GID_INDEX) and the MTU on hosts
//! and switches (QOS_MTU).

use std::net::Ipv4Addr;

use super::rules::{GID_INDEX, MTU};
use super::{Fabric, Finding, Mismatch};
use crate::analyze::fabric::devices::Device;
use crate::analyze::fabric::model::{At, GidEntry};
use crate::analyze::finding::Severity;

/// The smallest interface MTU with a RoCE MTU of 4096: 4096 bytes of payload and the headers
/// Linux reserves for them (`iboe_get_mtu`: GRH 40, UDP 8, BTH 12, XRC 4, AtomicETH 28,
/// ICRC 4: 96 bytes).
const ROCE_4096_MIN_MTU: u32 = 4096 + 96;

/// QOS_GID_INDEX: per host, `NCCL_IB_GID_INDEX` naming a RoCE v1 entry, an entry with no IPv4
/// address in an IPv4 fabric, or an index `show_gids` does not list (error; not judged
/// without `show_gids`); or unset where the host gives NCCL settings (info, at the `-1` line,
/// else the host's first NCCL setting).
pub(super) fn gid_index(fabric: &Fabric) -> Vec<Mismatch> {
    let ipv4 = is_ipv4_fabric(fabric);
    fabric.hosts().filter_map(|host| host_gid_index(host, ipv4)).collect()
}

/// An IPv4 fabric: a host is named by an IPv4 address, or a GID table lists an IPv4 entry.
fn is_ipv4_fabric(fabric: &Fabric) -> bool {
    fabric
        .hosts()
        .any(|host| host.name.parse::<Ipv4Addr>().is_ok() || host.config.gids.iter().any(|gid| gid.address.is_some()))
}

fn host_gid_index(host: &Device, ipv4: bool) -> Option<Mismatch> {
    let config = &host.config;
    let Some(index) = &config.nccl_gid_index else { return unset_gid_index(host) };
    if config.gids.is_empty() {
        return None;
    }
    let named: Vec<&GidEntry> = config.gids.iter().filter(|gid| gid.index == index.value).collect();
    let wrong = |gid: &GidEntry| gid.version != "v2" || (ipv4 && gid.address.is_none());
    let message = if named.is_empty() {
        format!("{}: NCCL_IB_GID_INDEX={} is not an index show_gids lists", host.name, index.value)
    } else if let Some(gid) = named.iter().copied().find(|gid| wrong(gid)) {
        let kind =
            if gid.version != "v2" { format!("a RoCE {} entry", gid.version) } else { "not an IPv4 entry".into() };
        format!("{}: NCCL_IB_GID_INDEX={} names {kind} ({} on {})", host.name, index.value, gid.gid, gid.device)
    } else {
        return None;
    };
    let lines = [&index.at].into_iter().chain(named.iter().filter(|gid| wrong(gid)).map(|gid| &gid.at));
    Some(Finding::new(&GID_INDEX, message).blame(&host.name, lines).done())
}

/// Info where a host that gives NCCL settings leaves `NCCL_IB_GID_INDEX` unset (or -1).
fn unset_gid_index(host: &Device) -> Option<Mismatch> {
    let config = &host.config;
    let set_to_auto = config.nccl_other.get("NCCL_IB_GID_INDEX").map(|read| &read.at);
    let first_setting = config.nccl_other.values().map(|read| &read.at).chain(config.nccl_tc.as_ref().map(|tc| &tc.at));
    let line = set_to_auto.or_else(|| first_setting.min_by_key(|at| (&at.file, at.line)))?;
    let message = format!("{}: NCCL_IB_GID_INDEX is not set: NCCL picks the GID itself at init", host.name);
    Some(Finding::new(&GID_INDEX, message).blame(&host.name, [line]).with_severity(Severity::Info).done())
}

/// QOS_MTU: each host whose MTU is below [`ROCE_4096_MIN_MTU`], and each switch whose MTU is
/// below a host's (naming the switch and the hosts above it).
pub(super) fn mtu(fabric: &Fabric) -> Vec<Mismatch> {
    let host_mtus: Vec<(&Device, u32, &At)> =
        fabric.hosts().filter_map(|host| host.config.mtu.as_ref().map(|mtu| (host, mtu.value, &mtu.at))).collect();
    let mut found: Vec<Mismatch> = host_mtus
        .iter()
        .filter(|(_, mtu, _)| *mtu < ROCE_4096_MIN_MTU)
        .map(|(host, mtu, at)| {
            let message =
                format!("{}: MTU {mtu} is below the {ROCE_4096_MIN_MTU} a 4096-byte RoCE MTU needs", host.name);
            Finding::new(&MTU, message).blame(&host.name, [*at]).done()
        })
        .collect();
    for switch in fabric.switches() {
        let Some(mtu) = &switch.config.mtu else { continue };
        let above: Vec<&(&Device, u32, &At)> =
            host_mtus.iter().filter(|(_, host_mtu, _)| *host_mtu > mtu.value).collect();
        if above.is_empty() {
            continue;
        }
        let listed: Vec<String> =
            above.iter().map(|(host, host_mtu, _)| format!("{} ({host_mtu})", host.name)).collect();
        let message = format!("{}: MTU {} is below the MTU of {}", switch.name, mtu.value, listed.join(", "));
        let finding =
            above.iter().fold(Finding::new(&MTU, message).blame(&switch.name, [&mtu.at]), |finding, (host, _, at)| {
                finding.blame(&host.name, [*at])
            });
        found.push(finding.done());
    }
    found
}
