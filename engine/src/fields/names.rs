//! Human names for protocol values (Wireshark's value strings), shared by the packet list, the
//! decode tree and the field registry's meanings.

use std::fmt::{self, Write};

/// Writes an opcode name the way the packet list shows it: transport and verb in capitals,
/// message position and qualifiers capitalised, e.g. `RC_RDMA_WRITE_FIRST` → `RC RDMA WRITE First`.
pub fn write_opcode_words(out: &mut impl Write, name: &str) -> fmt::Result {
    for (i, word) in name.split('_').enumerate() {
        if i > 0 {
            out.write_char(' ')?;
        }
        match word {
            "FIRST" => out.write_str("First")?,
            "MIDDLE" => out.write_str("Middle")?,
            "LAST" => out.write_str("Last")?,
            "ONLY" => out.write_str("Only")?,
            "REQUEST" => out.write_str("Request")?,
            "RESPONSE" => out.write_str("Response")?,
            "WITH" => out.write_str("with")?,
            "IMMEDIATE" => out.write_str("Immediate")?,
            "INVALIDATE" => out.write_str("Invalidate")?,
            other => out.write_str(other)?,
        }
    }
    Ok(())
}

/// Per-hop behaviour name of a DSCP value (RFC 2474, 2597, 3246), or `None`.
pub fn dscp_name(dscp: u8) -> Option<&'static str> {
    Some(match dscp {
        0 => "CS0",
        8 => "CS1",
        10 => "AF11",
        12 => "AF12",
        14 => "AF13",
        16 => "CS2",
        18 => "AF21",
        20 => "AF22",
        22 => "AF23",
        24 => "CS3",
        26 => "AF31",
        28 => "AF32",
        30 => "AF33",
        32 => "CS4",
        34 => "AF41",
        36 => "AF42",
        38 => "AF43",
        40 => "CS5",
        46 => "EF",
        48 => "CS6",
        56 => "CS7",
        _ => return None,
    })
}

/// ECN codepoint name (RFC 3168 §5).
pub fn ecn_name(ecn: u8) -> &'static str {
    match ecn & 3 {
        0 => "Not-ECT",
        1 => "ECT(1)",
        2 => "ECT(0)",
        _ => "CE",
    }
}

pub fn ethertype_name(ethertype: u16) -> &'static str {
    use rocescope_parsers::ethernet::*;
    match ethertype {
        ETHERTYPE_IPV4 => "IPv4",
        ETHERTYPE_IPV6 => "IPv6",
        ETHERTYPE_ARP => "ARP",
        ETHERTYPE_VLAN => "802.1Q",
        ETHERTYPE_QINQ => "802.1ad",
        ETHERTYPE_QINQ_LEGACY => "QinQ (0x9100)",
        ETHERTYPE_MAC_CONTROL => "MAC Control",
        ETHERTYPE_LLDP => "LLDP",
        ETHERTYPE_ROCEV1 => "RoCE (v1)",
        ETHERTYPE_MPLS => "MPLS label switched packet",
        ETHERTYPE_MPLS_MULTICAST => "MPLS multicast label switched packet",
        _ => "unknown",
    }
}

pub fn ip_protocol_name(protocol: u8) -> &'static str {
    match protocol {
        1 => "ICMP",
        6 => "TCP",
        17 => "UDP",
        47 => "GRE",
        58 => "ICMPv6",
        _ => "unknown",
    }
}

/// Formats a timestamp difference or epoch time in nanoseconds as seconds with 9 decimals.
pub fn write_seconds(out: &mut impl Write, ns: i64) -> fmt::Result {
    let sign = if ns < 0 { "-" } else { "" };
    let abs = ns.unsigned_abs();
    write!(out, "{sign}{}.{:09}", abs / 1_000_000_000, abs % 1_000_000_000)
}

/// Writes an absolute time (nanoseconds since the epoch) as tshark 4.0's `-T fields` writes a
/// date in UTC: `Nov 14, 2023 22:13:20.123456789 UTC` (the day padded to two places with a
/// space); a time before the epoch as signed epoch seconds.
pub fn write_date(out: &mut impl Write, ns: i64) -> fmt::Result {
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let Ok(since_epoch) = u64::try_from(ns) else { return write_seconds(out, ns) };
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(since_epoch);
    // RFC 3339: 2023-11-14T22:13:20.123456789Z
    let rfc3339 = humantime::format_rfc3339_nanos(time).to_string();
    let part = |range: std::ops::Range<usize>| rfc3339.get(range).unwrap_or_default();
    let month = part(5..7).parse::<usize>().ok().and_then(|m| MONTHS.get(m.wrapping_sub(1))).unwrap_or(&"");
    let day = part(8..10).trim_start_matches('0');
    write!(out, "{month} {day:>2}, {} {} UTC", part(0..4), part(11..rfc3339.len() - 1))
}

/// The meanings of integer fields for the decode tree ([`super::Meaning`]): each appends the
/// name of a value, or nothing when it has none.
pub mod meaning {
    use std::fmt::Write as _;

    use rocescope_parsers::ext::{Aeth, AethKind, NakCode};
    use rocescope_parsers::opcode::{Transport, info};

    fn known(out: &mut String, name: &str) {
        if name != "unknown" {
            out.push_str(name);
        }
    }

    pub fn ethertype(out: &mut String, v: u64) {
        known(out, super::ethertype_name(v as u16));
    }

    pub fn ip_protocol(out: &mut String, v: u64) {
        known(out, super::ip_protocol_name(v as u8));
    }

    pub fn dscp(out: &mut String, v: u64) {
        out.push_str(super::dscp_name(v as u8).unwrap_or(""));
    }

    pub fn ecn(out: &mut String, v: u64) {
        out.push_str(super::ecn_name(v as u8));
    }

    /// The opcode's name and transport (`RC RDMA WRITE Only`).
    pub fn opcode(out: &mut String, v: u64) {
        match info(v as u8) {
            Some(info) => {
                let _ = super::write_opcode_words(out, info.name);
            }
            None => {
                let _ = write!(out, "reserved ({})", Transport::of(v as u8).name());
            }
        }
    }

    /// What an AETH syndrome says (IBA 9.7.5.2.1).
    pub fn aeth_syndrome(out: &mut String, v: u64) {
        let _ = match (Aeth { syndrome: v as u8, msn: 0 }).kind() {
            AethKind::Ack { credits: Some(c), .. } => write!(out, "ACK, {c} credits"),
            AethKind::Ack { credits: None, .. } => write!(out, "ACK, credits invalid"),
            AethKind::RnrNak { delay_us, .. } => write!(out, "RNR NAK, retry after {delay_us} µs"),
            AethKind::Nak(code) => write!(out, "NAK, {}", code.describe()),
            AethKind::Reserved => write!(out, "reserved syndrome class"),
        };
    }

    /// The syndrome's class (bits 6:5), as Wireshark names it.
    pub fn aeth_class(out: &mut String, v: u64) {
        out.push_str(["Ack", "RNR Nak", "Reserved", "Nak"][(v & 3) as usize]);
    }

    pub fn nak_code(out: &mut String, v: u64) {
        out.push_str(NakCode::from_value(v as u8).describe());
    }

    pub fn rnr_timer(out: &mut String, v: u64) {
        aeth_syndrome(out, 0x20 | (v & 0x1f));
    }

    pub fn credit_code(out: &mut String, v: u64) {
        aeth_syndrome(out, v & 0x1f);
    }

    /// A CM path MTU code (IBA 14.2.5.6: 1 = 256 bytes … 5 = 4096 bytes).
    pub fn path_mtu(out: &mut String, v: u64) {
        if let Some(bytes) = rocescope_parsers::cm::mtu_bytes(v as u8) {
            let _ = write!(out, "{bytes} bytes");
        }
    }

    /// A local ACK timeout code: 4.096 µs × 2^code (IBA 12.7.34).
    pub fn ack_timeout(out: &mut String, v: u64) {
        if (1..32).contains(&v) {
            let _ = write!(out, "{:.3} ms", 4.096e-3 * (1u64 << v) as f64);
        }
    }

    /// A CM transport service type (IBA 12.6.5).
    pub fn transport_service(out: &mut String, v: u64) {
        out.push_str(["RC", "UC", "RD", "reserved"][(v & 3) as usize]);
    }

    pub fn mac_control_opcode(out: &mut String, v: u64) {
        out.push_str(match v {
            0x0001 => "Pause",
            0x0101 => "Class Based Flow Control [CBFC] Pause",
            _ => "",
        });
    }

    pub fn gre_protocol(out: &mut String, v: u64) {
        out.push_str(match v {
            0x88be => "ERSPAN",
            0x22eb => "ERSPAN III",
            0x6558 => "Transparent Ethernet bridging",
            0x0800 => "IP",
            0x86dd => "IPv6",
            0x8847 => "MPLS label switched packet",
            0x8848 => "MPLS multicast label switched packet",
            0x8949 => "NVIDIA Spectrum mirror",
            _ => "",
        });
    }

    /// What follows an LRH (IBA §7.7.3).
    pub fn lnh(out: &mut String, v: u64) {
        out.push_str(["Raw", "IPv6 (non-IBA)", "IBA local", "IBA global"][(v & 3) as usize]);
    }

    /// The ERF record types rocescope decodes.
    pub fn erf_type(out: &mut String, v: u64) {
        out.push_str(match v {
            2 => "Ethernet",
            21 => "InfiniBand",
            25 => "InfiniBand link",
            _ => "",
        });
    }

    /// A Linux cooked capture's packet type (`PACKET_*` of `<linux/if_packet.h>`).
    pub fn sll_packet_type(out: &mut String, v: u64) {
        out.push_str(match v {
            0 => "Unicast to us",
            1 => "Broadcast",
            2 => "Multicast",
            3 => "Unicast to another host",
            4 => "Sent by us",
            _ => "",
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcode_words() {
        let mut s = String::new();
        write_opcode_words(&mut s, "RC_RDMA_WRITE_FIRST").unwrap();
        assert_eq!(s, "RC RDMA WRITE First");
        s.clear();
        write_opcode_words(&mut s, "RC_SEND_LAST_WITH_IMMEDIATE").unwrap();
        assert_eq!(s, "RC SEND Last with Immediate");
        s.clear();
        write_opcode_words(&mut s, "XRC_RDMA_READ_RESPONSE_MIDDLE").unwrap();
        assert_eq!(s, "XRC RDMA READ Response Middle");
    }

    #[test]
    fn seconds() {
        let mut s = String::new();
        write_seconds(&mut s, 1_500_000_001).unwrap();
        assert_eq!(s, "1.500000001");
        s.clear();
        write_seconds(&mut s, -4_000).unwrap();
        assert_eq!(s, "-0.000004000");
    }

    #[test]
    fn qos_names() {
        assert_eq!(dscp_name(26), Some("AF31"));
        assert_eq!(dscp_name(48), Some("CS6"));
        assert_eq!(dscp_name(27), None);
        assert_eq!(ecn_name(2), "ECT(0)");
        assert_eq!(ecn_name(3), "CE");
    }
}
