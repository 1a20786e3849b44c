//! Host-pair partitions. Everything the analysis relates across flows stays within one pair
//! of hosts: the two directions of a connection, PSN pairing, the CM exchange and the path MTU
//! it gives, a packet and its mirror copies. The host pairs of a capture are therefore split
//! into [`PARTITIONS`] fixed groups by a hash of the two addresses, and state shared between
//! flows (the mirror-duplicate table) is kept per group. A partition's analysis then sees the
//! same frames in the same order however the partitions are spread over threads, which is
//! what lets `--threads N` analyse partitions apart and give the report one thread gives.

use std::net::IpAddr;

use crate::decode::Endpoint;

/// Host-pair partitions: a fixed number, so that no result depends on the thread count.
pub const PARTITIONS: usize = 256;

/// The integer a LID stands as: inside 100::/64, IPv6's discard-only prefix (RFC 6666), which
/// no packet's address is in.
const LID_PREFIX: u128 = 0x0100 << 112;

/// An address as one integer, IPv4 addresses mapped into IPv6 and LIDs into [`LID_PREFIX`].
pub fn canonical(address: Endpoint) -> u128 {
    match address {
        Endpoint::Ip(IpAddr::V4(v4)) => u128::from(v4.to_ipv6_mapped()),
        Endpoint::Ip(IpAddr::V6(v6)) => u128::from(v6),
        Endpoint::Lid(lid) => LID_PREFIX | u128::from(lid),
    }
}

/// The partition of the hosts `a` and `b`, in either order.
pub fn of_hosts(a: Endpoint, b: Endpoint) -> usize {
    let (x, y) = (canonical(a), canonical(b));
    let (low, high) = if x <= y { (x, y) } else { (y, x) };
    (mix(low, high) >> (64 - PARTITIONS.trailing_zeros())) as usize
}

/// A 64-bit hash of two 128-bit values (Fibonacci hashing of their folded halves).
pub fn mix(a: u128, b: u128) -> u64 {
    let fold = |v: u128| (v as u64) ^ ((v >> 64) as u64).rotate_left(29);
    (fold(a).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ fold(b)).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_directions_share_a_partition_and_pairs_spread_over_them() {
        let host = |i: u8| Endpoint::Ip(IpAddr::from([10, 1, 0, i]));
        assert_eq!(of_hosts(host(1), host(2)), of_hosts(host(2), host(1)));
        let v4 = Endpoint::Ip(IpAddr::from([192, 0, 2, 1]));
        let mapped = Endpoint::Ip(IpAddr::from(std::net::Ipv4Addr::new(192, 0, 2, 1).to_ipv6_mapped()));
        assert_eq!(of_hosts(v4, host(9)), of_hosts(mapped, host(9)));
        let used: std::collections::HashSet<usize> = (1..=64).map(|i| of_hosts(host(i), host(101))).collect();
        assert!(used.len() >= 48, "64 host pairs fell into only {} partitions", used.len());
        assert!(used.iter().all(|&p| p < PARTITIONS));
    }

    #[test]
    fn a_lid_is_no_address_and_its_pairs_spread_too() {
        let lid = Endpoint::Lid(4);
        assert_ne!(canonical(lid), canonical(Endpoint::Ip(IpAddr::from([0, 0, 0, 4]))));
        assert_ne!(canonical(lid), canonical(Endpoint::Ip(IpAddr::from(std::net::Ipv6Addr::from(4u128)))));
        assert_eq!(of_hosts(lid, Endpoint::Lid(1)), of_hosts(Endpoint::Lid(1), lid));
        let used: std::collections::HashSet<usize> = (1..=64).map(|i| of_hosts(Endpoint::Lid(i), lid)).collect();
        assert!(used.len() >= 48, "64 LID pairs fell into only {} partitions", used.len());
    }
}
