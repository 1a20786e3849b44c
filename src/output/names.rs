//! Human names for protocol values, shared by the packet list and the decode tree.

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
