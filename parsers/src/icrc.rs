//! The Invariant CRC (IBA §7.8.1; RoCEv2 annex A17.4.1; Linux `rxe_icrc.c`).
//!
//! CRC-32 (IEEE 802.3 polynomial, as for the Ethernet FCS) over: eight 0xFF bytes standing in
//! for the absent LRH; the IP header (RoCEv2) or GRH (RoCEv1) with the fields that routers may
//! change set to all ones; the UDP header with its checksum set to ones (RoCEv2); the BTH with
//! byte 4 (FECN, BECN, resv6) set to ones; then the extended headers, payload and pad bytes
//! unchanged. Masked fields: IPv4 TOS, TTL and header checksum; IPv6 / GRH traffic class, flow
//! label and hop limit. The ICRC travels least-significant byte first.

use crate::bth::BTH_LEN;

/// `crc32(8 × 0xFF)`: seeding the hasher with it is the same as hashing the LRH stand-in.
pub const SEED: u32 = 0x2144_DF1C;

/// The largest IPv4 header (IHL 15).
const MAX_IPV4_HEADER: usize = 60;

/// Transport bytes copied after the masked headers, so that both CRC updates are long enough
/// for crc32fast's carry-less-multiply path (short inputs take a much slower one).
const SIMD_MIN: usize = 64;

/// The longest masked prefix: an IPv4 header with options, UDP, BTH, and [`SIMD_MIN`] more.
const MAX_PREFIX: usize = MAX_IPV4_HEADER + 8 + BTH_LEN + SIMD_MIN;

/// Hashes `prefix` (the masked network and UDP headers, already written to the front of
/// `buf`) followed by the masked BTH and the rest of the transport packet. The headers are
/// hashed as one contiguous buffer: CRC hardware paths are far cheaper on one long input than
/// on several short ones.
fn finish(buf: &mut [u8; MAX_PREFIX], prefix_len: usize, ib_without_icrc: &[u8]) -> u32 {
    finish_from(SEED, buf, prefix_len, ib_without_icrc)
}

/// [`finish`] from the CRC `initial` of what came before the prefix.
fn finish_from(initial: u32, buf: &mut [u8; MAX_PREFIX], prefix_len: usize, ib_without_icrc: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new_with_initial(initial);
    let (bth, rest) = match ib_without_icrc.split_first_chunk::<BTH_LEN>() {
        Some((bth, rest)) => (bth.as_slice(), rest),
        None => (ib_without_icrc, &[][..]),
    };
    let end = prefix_len + bth.len();
    if let Some(slot) = buf.get_mut(prefix_len..end) {
        slot.copy_from_slice(bth);
        if let Some(b) = slot.get_mut(4).filter(|_| bth.len() == BTH_LEN) {
            *b = 0xFF;
        }
    }
    let moved = rest.len().min(SIMD_MIN);
    let (head, tail) = rest.split_at(moved);
    if let Some(slot) = buf.get_mut(end..end + moved) {
        slot.copy_from_slice(head);
    }
    hasher.update(buf.get(..end + moved).unwrap_or_default());
    hasher.update(tail);
    hasher.finalize()
}

/// Writes the UDP header with its checksum masked at `buf[at..at + 8]`.
fn put_masked_udp(buf: &mut [u8; MAX_PREFIX], at: usize, udp: &[u8; 8]) {
    if let Some(slot) = array_at::<8>(buf, at) {
        *slot = *udp;
        slot[6] = 0xFF;
        slot[7] = 0xFF;
    }
}

/// `buf[at..at + N]` as an array, so that fixed indexes into it are checked at compile time.
fn array_at<const N: usize>(buf: &mut [u8; MAX_PREFIX], at: usize) -> Option<&mut [u8; N]> {
    buf.get_mut(at..at + N).and_then(|s| s.try_into().ok())
}

/// ICRC of a RoCEv2 packet over IPv4. `ip_header` is the whole IPv4 header (options included,
/// at most 60 bytes are used), `ib_without_icrc` runs from the BTH to the last pad byte.
pub fn rocev2_ipv4(ip_header: &[u8], udp: &[u8; 8], ib_without_icrc: &[u8]) -> u32 {
    let mut buf = [0u8; MAX_PREFIX];
    let len = ip_header.len().min(MAX_IPV4_HEADER);
    if let (Some(slot), Some(ip)) = (buf.get_mut(..len), ip_header.get(..len)) {
        slot.copy_from_slice(ip);
        for at in [1, 8, 10, 11] {
            if let Some(b) = slot.get_mut(at) {
                *b = 0xFF;
            }
        }
    }
    put_masked_udp(&mut buf, len, udp);
    finish(&mut buf, len + 8, ib_without_icrc)
}

/// Writes an IPv6 header or GRH with traffic class, flow label (bytes 0–3 become
/// 0x6F FF FF FF with version 6) and hop limit (byte 7) set to ones: the masking shared by
/// the IPv6 header and the GRH.
fn put_masked_ipv6_shape(buf: &mut [u8; MAX_PREFIX], header: &[u8; 40]) {
    if let Some(slot) = array_at::<40>(buf, 0) {
        *slot = *header;
        slot[0] |= 0x0F;
        slot[1] = 0xFF;
        slot[2] = 0xFF;
        slot[3] = 0xFF;
        slot[7] = 0xFF;
    }
}

/// ICRC of a RoCEv2 packet over IPv6 (the fixed 40-byte header; extension headers are not
/// covered).
pub fn rocev2_ipv6(ip_header: &[u8; 40], udp: &[u8; 8], ib_without_icrc: &[u8]) -> u32 {
    let mut buf = [0u8; MAX_PREFIX];
    put_masked_ipv6_shape(&mut buf, ip_header);
    put_masked_udp(&mut buf, 40, udp);
    finish(&mut buf, 48, ib_without_icrc)
}

/// ICRC of a RoCEv1 packet: the GRH takes the place of IP and UDP.
pub fn rocev1(grh: &[u8; 40], ib_without_icrc: &[u8]) -> u32 {
    let mut buf = [0u8; MAX_PREFIX];
    put_masked_ipv6_shape(&mut buf, grh);
    finish(&mut buf, 40, ib_without_icrc)
}

/// ICRC of a native InfiniBand packet (the LRH is there: nothing stands in for it), `packet`
/// from the LRH up to the ICRC. Without a GRH (LNH 2) the LRH is covered with its VL bits set
/// to ones; with one (LNH 3) the whole LRH is set to ones and the GRH masked as RoCEv1's; the
/// BTH's byte 4 is set to ones in both (IBA §7.8.1; checked on every frame of a real capture,
/// `../shared/protocol-facts.md` §15.4). `None` for other LNH values or a packet too short.
pub fn native(packet: &[u8]) -> Option<u32> {
    let (lrh, rest) = packet.split_first_chunk::<8>()?;
    match lrh[1] & 0x03 {
        2 => {
            let mut buf = [0u8; MAX_PREFIX];
            let slot = array_at::<8>(&mut buf, 0)?;
            *slot = *lrh;
            slot[0] |= 0xF0;
            Some(finish_from(0, &mut buf, 8, rest))
        }
        3 => {
            let (grh, ib) = rest.split_first_chunk::<40>()?;
            Some(rocev1(grh, ib))
        }
        _ => None,
    }
}

/// The ICRC as it appears on the wire for a computed value (least-significant byte first).
pub const fn to_wire(icrc: u32) -> [u8; 4] {
    icrc.to_le_bytes()
}

/// Does a trailer after the end of an Ethernet frame hold a valid FCS for `frame`?
/// (The FCS is CRC-32 of the frame from the destination MAC to the end of its payload,
/// least-significant byte first, IEEE 802.3 §3.2.9.)
pub fn is_ethernet_fcs(frame: &[u8], trailer: &[u8]) -> bool {
    <[u8; 4]>::try_from(trailer).is_ok_and(|fcs| crc32fast::hash(frame).to_le_bytes() == fcs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    #[test]
    fn seed_is_crc_of_eight_ff_bytes() {
        assert_eq!(crc32fast::hash(&[0xFF; 8]), SEED);
        // and the kernel's raw-register seed is its complement
        assert_eq!(!SEED, 0xDEBB_20E3);
    }

    /// Frame 54 of the reference capture clean_rc_write.pcap (an RC ACK built and checked by an
    /// independent implementation); its ICRC on the wire is 3d 01 0e 3a.
    const IPV4_ACK: &str = "0200000100010200000100020800456a0030110a4000401115450a0100020a010001c54912b7001c0000\
                            1100ffff00002cf800216ef20a0000063d010e3a";

    /// Frame 4 of the reference capture encap_ipv6.pcap: an RC ACK over IPv6 with flow label
    /// 0x11acf and a non-zero UDP checksum; its ICRC on the wire is ce 34 47 1d.
    const IPV6_ACK: &str = "02000009000102000009000286dd66a11acf001c1140fd0000000000000900000000000000\
                            02fd000000000000090000000000000001f01b12b7001cecf31100ffff000024b60000abcf\
                            1f000001ce34471d";

    #[test]
    fn rocev2_ipv4_ack_from_the_reference_capture() {
        let frame = hex(IPV4_ACK);
        let ip = &frame[14..34];
        let udp: [u8; 8] = frame[34..42].try_into().unwrap();
        let ib = &frame[42..frame.len() - 4];
        let icrc = rocev2_ipv4(ip, &udp, ib);
        assert_eq!(to_wire(icrc), [0x3d, 0x01, 0x0e, 0x3a]);
    }

    #[test]
    fn masked_fields_do_not_change_the_icrc() {
        let frame = hex(IPV4_ACK);
        let udp: [u8; 8] = frame[34..42].try_into().unwrap();
        let ib = frame[42..frame.len() - 4].to_vec();
        let reference = rocev2_ipv4(&frame[14..34], &udp, &ib);
        let mut ip = frame[14..34].to_vec();
        ip[1] = 0x6b; // CE mark
        ip[8] = 1; // TTL
        ip[10] = 0x12; // checksum
        let mut udp2 = udp;
        udp2[6] = 0x55; // UDP checksum
        let mut ib2 = ib.clone();
        ib2[4] = 0xC0; // FECN + BECN
        assert_eq!(rocev2_ipv4(&ip, &udp2, &ib2), reference);
        // ...while a PSN change does
        let mut ib3 = ib;
        ib3[11] ^= 1;
        assert_ne!(rocev2_ipv4(&frame[14..34], &udp, &ib3), reference);
    }

    #[test]
    fn rocev2_ipv6_ack_from_the_reference_capture() {
        let frame = hex(IPV6_ACK);
        let ip: [u8; 40] = frame[14..54].try_into().unwrap();
        let udp: [u8; 8] = frame[54..62].try_into().unwrap();
        let ib = &frame[62..frame.len() - 4];
        let icrc = rocev2_ipv6(&ip, &udp, ib);
        assert_eq!(to_wire(icrc), [0xce, 0x34, 0x47, 0x1d]);
        // traffic class, flow label and hop limit are masked; addresses are not
        let mut ip2 = ip;
        ip2[1] = 0x0f;
        ip2[3] = 0x00;
        ip2[7] = 1;
        assert_eq!(rocev2_ipv6(&ip2, &udp, ib), icrc);
        let mut ip3 = ip;
        ip3[39] = 3;
        assert_ne!(rocev2_ipv6(&ip3, &udp, ib), icrc);
    }

    #[test]
    fn rocev1_masks_grh_like_ipv6() {
        let mut grh = [0u8; 40];
        grh[0] = 0x60;
        grh[6] = 0x1b;
        grh[7] = 64;
        let ib = [0x04u8, 0, 0xff, 0xff, 0, 0, 0, 1, 0, 0, 0, 1];
        let a = rocev1(&grh, &ib);
        grh[1] = 0xAB;
        grh[7] = 1;
        assert_eq!(rocev1(&grh, &ib), a);
        // independent formulation: plain CRC-32 of the LRH stand-in and the masked bytes
        let mut all = vec![0xFF; 8];
        let mut masked = grh;
        masked[0] = 0x6F;
        masked[1] = 0xFF;
        masked[2] = 0xFF;
        masked[3] = 0xFF;
        masked[7] = 0xFF;
        all.extend_from_slice(&masked);
        let mut masked_bth = ib;
        masked_bth[4] = 0xFF;
        all.extend_from_slice(&masked_bth);
        assert_eq!(crc32fast::hash(&all), a);
    }

    #[test]
    fn native_infiniband_masks_the_vl_without_a_grh_and_the_whole_lrh_with_one() {
        // an IBA-local ACK: LRH (VL 3, LNH 2), BTH, AETH
        let lrh = [0x30, 0x02, 0x00, 0x01, 0x00, 0x07, 0x00, 0x04];
        let bth = [0x11, 0x00, 0xFF, 0xFF, 0x00, 0x00, 0x04, 0x08, 0x00, 0x00, 0x00, 0x2A];
        let aeth = [0x1F, 0x00, 0x00, 0x01];
        let packet: Vec<u8> = [&lrh[..], &bth, &aeth].concat();
        // by hand: the LRH with VL = 15, the BTH with byte 4 = 0xFF, hashed from zero
        let mut masked = packet.clone();
        masked[0] |= 0xF0;
        masked[8 + 4] = 0xFF;
        assert_eq!(native(&packet), Some(crc32fast::hash(&masked)));
        // the VL and FECN/BECN do not change it; the DLID does
        let mut hop = packet.clone();
        hop[0] = 0x70;
        hop[8 + 4] = 0xC0;
        assert_eq!(native(&hop), native(&packet));
        hop[3] = 0x02;
        assert_ne!(native(&hop), native(&packet));
        // with a GRH: the LRH is all ones, as the RoCEv1 stand-in
        let mut global = lrh;
        global[1] = 0x03;
        let grh = [0x60; 40];
        let packet: Vec<u8> = [&global[..], &grh, &bth, &aeth].concat();
        let ib: Vec<u8> = [&bth[..], &aeth].concat();
        assert_eq!(native(&packet), Some(rocev1(&grh, &ib)));
        global[2] = 0x99;
        assert_eq!(native(&[&global[..], &grh, &bth, &aeth].concat()), native(&packet));
        // raw packets have no ICRC; too short a packet has none
        assert_eq!(native(&[0x00, 0x00, 0, 1, 0, 4, 0, 4]), None);
        assert_eq!(native(&[0x00, 0x03, 0, 1, 0, 4, 0, 4, 0x60]), None);
    }

    #[test]
    fn ethernet_fcs_detection() {
        let frame = hex(IPV4_ACK);
        let fcs = crc32fast::hash(&frame).to_le_bytes();
        assert!(is_ethernet_fcs(&frame, &fcs));
        assert!(!is_ethernet_fcs(&frame, &[0, 0, 0, 0]));
        assert!(!is_ethernet_fcs(&frame, &fcs[..3]));
    }
}
