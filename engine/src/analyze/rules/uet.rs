//! The findings of Ultra Ethernet Transport packets.

use crate::analyze::report::finding::{Evidence, kinds};

use super::{About, Rules, plural};

/// Packets whose CRC32C trailer is not the capture's reading of it.
pub(super) fn crc(r: &mut Rules<'_>) {
    let Some(uet) = &r.report.uet else { return };
    let crc = &uet.crc;
    if crc.bad == 0 {
        return;
    }
    let variant = crc.variant.unwrap_or("none");
    r.add(
        About {
            kind: kinds::UET_CRC_BAD,
            cause: "The bytes changed on the way: the CRC32C covers everything from the IP source address to the end of the payload except what switches may rewrite (DSCP, ECN, TTL, the IP checksum), so a mismatch means bit errors on a link (optics, cable, connector), a faulty NIC or switch buffer, or a device rewriting covered fields.",
            action: "Check the FEC and symbol-error counters of every hop the packets crossed (ethtool -S on hosts, interface counters on switches) and clean or replace the optics and cables whose counters grow.",
        },
        format!(
            "{} with a bad CRC32C ({} of {} checked match the capture's reading, {variant})",
            plural(crc.bad as usize, "UET packet"),
            crc.ok,
            crc.ok + crc.bad
        ),
        Evidence { count: crc.bad, ..Evidence::default() },
    );
}
