//! Host-pair partitions. Everything the analysis relates across flows stays within one pair
//! of hosts: the two directions of a connection, PSN pairing, the CM exchange and the path MTU
//! it gives, a packet and its mirror copies. The host pairs of a capture are therefore split
//! into [`PARTITIONS`] fixed groups by a hash of the two addresses, and state shared between
//! flows (the mirror-duplicate table) is kept per group. A partition's analysis then sees the
//! same frames in the same order however the partitions are spread over threads, which is
//! what lets `--threads N` analyse partitions apart and give the report one thread gives.

use std::net::IpAddr;

/// Host-pair partitions: a fixed number, so that no result depends on the thread count.
pub const PARTITIONS: usize = 256;

/// An address as one integer, IPv4 addresses mapped into IPv6.
pub fn canonical(address: IpAddr) -> u128 {
    match address {
        IpAddr::V4(v4) => u128::from(v4.to_ipv6_mapped()),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

/// The partition of the hosts `a` and `b`, in either order.
pub fn of_hosts(a: IpAddr, b: IpAddr) -> usize {
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
        let host = |i: u8| IpAddr::from([10, 1, 0, i]);
        assert_eq!(of_hosts(host(1), host(2)), of_hosts(host(2), host(1)));
        let v4 = IpAddr::from([192, 0, 2, 1]);
        let mapped = IpAddr::from(std::net::Ipv4Addr::new(192, 0, 2, 1).to_ipv6_mapped());
        assert_eq!(of_hosts(v4, host(9)), of_hosts(mapped, host(9)));
        let used: std::collections::HashSet<usize> = (1..=64).map(|i| of_hosts(host(i), host(101))).collect();
        assert!(used.len() >= 48, "64 host pairs fell into only {} partitions", used.len());
        assert!(used.iter().all(|&p| p < PARTITIONS));
    }
}
