//! tshark 4.0's Info column (`_ws.col.Info`): what the last dissector that wrote the column
//! said of the frame. The texts are those Wireshark 4.0's dissectors write:
//!
//! - `packet-infiniband.c` appends the opcode's name from its `OpCodeMap` (a name ends in a
//!   space but `UC RDMA Write First`'s; an opcode it does not know is `Unknown OpCode`, a
//!   CNP's 0x81 among them), then `QP=0x%06x `, then an AETH's NAK code as `[%s] `; a
//!   management datagram of the subnet manager or subnet administration appends its method
//!   and attribute (`SubnGet(SMInfo)`); a CM MAD sets the column to `CM: ` and its
//!   attribute's name;
//! - `packet-macctrl.c` writes `Class Based Flow Control [CBFC] Pause` for PFC and
//!   `Pause: pause_time: %u quanta` for 802.3x PAUSE;
//! - `packet-udp.c` writes `%s → %s Len=%u` (ports, then the payload's length) for a
//!   datagram no dissector above it takes (UET, which this tshark does not know);
//! - `packet-gre.c` writes `Encapsulated %s` with the protocol type's name, `0x%04x (unknown)`
//!   for one it does not know (NVIDIA Spectrum's 0x8949);
//! - `packet-arp.c` writes `Who has %s? Tell %s` and `%s is at %s`;
//! - `packet-icmp.c` writes `Echo (ping) request  id=0x%04x, seq=%u/%u, ttl=%u` (two spaces);
//!   `packet-icmpv6.c` `Echo (ping) request id=0x%04x, seq=%u, hop limit=%u`, `Router
//!   Solicitation`, `Neighbor Solicitation for %s`;
//! - `packet-ip.c` writes the name and number of a protocol no dissector takes (`Unknown
//!   (253)`: UET straight over IP);
//! - `packet-eth.c` leaves `Ethernet II` for an EtherType no dissector takes.
//!
//! A mirror's Info is its inner frame's: the outer dissectors' texts are overwritten.

use std::fmt::{self, Write};
use std::net::Ipv4Addr;

use rocescope_parsers::bth::Bth;
use rocescope_parsers::ethernet::MacAddr;
use rocescope_parsers::mac_control::MacControl;
use rocescope_parsers::spectrum::GRE_PROTO_SPECTRUM;

use crate::decode::{Body, EncapKind, Malformed, Network, Other, Roce};

use super::{Frame, Layer};

/// Writes the frame's Info column as tshark 4.0 writes it; nothing for a frame whose column
/// rocescope does not compose.
pub fn write(out: &mut String, frame: &Frame<'_, '_>) {
    let _ = write_info(out, frame);
}

fn write_info(out: &mut String, frame: &Frame<'_, '_>) -> fmt::Result {
    // tshark knows no NVIDIA Spectrum mirror header: its GRE stops there
    let mut spectrum = false;
    frame.encaps(&mut |kind| spectrum |= matches!(kind, EncapKind::Spectrum(_)));
    if spectrum {
        return write_gre(out, GRE_PROTO_SPECTRUM);
    }
    let p = frame.packet;
    match &p.body {
        Body::Roce(roce) => write_infiniband(out, roce),
        // what tshark writes before it finds a reserved opcode or a length wrong
        Body::Malformed(Malformed { bth: Some(bth), .. }) => write_bth(out, bth),
        Body::Uet(_) if p.udp.is_some() => write_udp(out, frame),
        Body::Uet(_) => write_ip_protocol(out, frame),
        Body::MacControl(control) => write_mac_control(out, control),
        Body::Other(Other::Udp { .. }) => write_udp(out, frame),
        Body::Other(Other::Gre { protocol }) => write_gre(out, *protocol),
        Body::Other(Other::EtherType(_)) => out.write_str("Ethernet II"),
        Body::Other(Other::Arp) => write_arp(out, body_bytes(frame)),
        Body::Other(Other::Icmp) => write_icmp(out, frame),
        Body::Other(Other::Icmpv6) => write_icmpv6(out, frame),
        _ => Ok(()),
    }
}

/// The bytes of the frame's last protocol rocescope does not decode (an ARP packet, an ICMP
/// message).
fn body_bytes<'a>(frame: &Frame<'_, 'a>) -> &'a [u8] {
    let mut span = 0..0;
    frame.layers(&mut |layer, at| {
        if layer == Layer::Other {
            span = at;
        }
    });
    frame.packet.data.get(span).unwrap_or_default()
}

/// An InfiniBand packet (RoCE or native): a CM MAD by its attribute, else the opcode's name,
/// the destination QP and what the AETH or the MAD says. What tshark writes for an attribute or
/// method its tables lack is not composed: nothing is written for it.
fn write_infiniband(out: &mut String, roce: &Roce<'_>) -> fmt::Result {
    if let Some(mad) = roce.mad.filter(|_| roce.cm.is_some()) {
        return match cm_attribute(mad.attribute_id()) {
            Some(name) => write!(out, "CM: {name}"),
            None => Ok(()),
        };
    }
    write_bth(out, &roce.ib.bth)?;
    if let Some(aeth) = roce.ib.ext().and_then(|ext| ext.aeth) {
        write_nak(out, aeth.syndrome)?;
    }
    if let Some(mad) = roce.mad {
        let method = mad.method() | if mad.is_response() { 0x80 } else { 0 };
        write_subnet_mad(out, mad.mgmt_class(), method, mad.attribute_id())?;
    }
    Ok(())
}

/// The opcode's name and the destination QP (`RC Send Only QP=0x000202 `).
fn write_bth(out: &mut String, bth: &Bth<'_>) -> fmt::Result {
    out.write_str(opcode_name(bth.opcode()).unwrap_or("Unknown OpCode"))?;
    write!(out, "QP=0x{:06x} ", bth.dest_qp())
}

/// Wireshark's `OpCodeMap`: the opcode's transport and name, then (but for one) a space.
/// Wireshark 4.0 names IBA's Reliable Datagram opcodes (64–85) Dynamically Connected.
fn opcode_name(opcode: u8) -> Option<&'static str> {
    Some(match opcode {
        0 => "RC Send First ",
        1 => "RC Send Middle ",
        2 => "RC Send Last ",
        3 => "RC Send Last Immediate ",
        4 => "RC Send Only ",
        5 => "RC Send Only Immediate ",
        6 => "RC RDMA Write First ",
        7 => "RC RDMA Write Middle ",
        8 => "RC RDMA Write Last ",
        9 => "RC RDMA Write Last Immediate ",
        10 => "RC RDMA Write Only ",
        11 => "RC RDMA Write Only Immediate ",
        12 => "RC RDMA Read Request ",
        13 => "RC RDMA Read Response First ",
        14 => "RC RDMA Read Response Middle ",
        15 => "RC RDMA Read Response Last ",
        16 => "RC RDMA Read Response Only ",
        17 => "RC Acknowledge ",
        18 => "RC Atomic Acknowledge ",
        19 => "RC Compare Swap ",
        20 => "RC Fetch Add ",
        22 => "RC Send Last Invalidate ",
        23 => "RC Send Only Invalidate ",
        32 => "UC Send First ",
        33 => "UC Send Middle ",
        34 => "UC Send Last ",
        35 => "UC Send Last Immediate ",
        36 => "UC Send Only ",
        37 => "UC Send Only Immediate ",
        38 => "UC RDMA Write First",
        39 => "UC RDMA Write Middle ",
        40 => "UC RDMA Write Last ",
        41 => "UC RDMA Write Last Immediate ",
        42 => "UC RDMA Write Only ",
        43 => "UC RDMA Write Only Immediate ",
        64 => "DC Send First ",
        65 => "DC Send Middle ",
        66 => "DC Send Last ",
        67 => "DC Last Immediate ",
        68 => "DC Send Only ",
        69 => "DC Send Only Immediate ",
        70 => "DC RDMA Write First ",
        71 => "DC RDMA Write Middle ",
        72 => "DC RDMA Write Last ",
        73 => "DC RDMA Write Last Immediate ",
        74 => "DC RDMA Write Only ",
        75 => "DC RDMA Write Only Immediate ",
        76 => "DC RDMA Read Request ",
        77 => "DC RDMA Read Response First ",
        78 => "DC RDMA Read Response Middle ",
        79 => "DC RDMA Read Response Last ",
        80 => "DC RDMA Read Response Only ",
        81 => "DC Acknowledge ",
        82 => "DC Atomic Acknowledge ",
        83 => "DC Compare Swap ",
        84 => "DC Fetch Add ",
        85 => "DC Unknown Opcode ",
        100 => "UD Send Only ",
        101 => "UD Send Only Immediate ",
        _ => return None,
    })
}

/// A NAK's code in brackets (`[PSN Sequence Error] `); nothing for an ACK or an RNR NAK.
fn write_nak(out: &mut String, syndrome: u8) -> fmt::Result {
    if syndrome >> 5 & 0x03 != 0x03 {
        return Ok(());
    }
    let code = syndrome & 0x1f;
    match code {
        0 => out.write_str("[PSN Sequence Error] "),
        1 => out.write_str("[Invalid Request] "),
        2 => out.write_str("[Remote Access Error] "),
        3 => out.write_str("[Remote Operational Error] "),
        4 => out.write_str("[Invalid RD Request] "),
        _ => write!(out, "[Unknown ({code})] "),
    }
}

/// Wireshark's `CM_Attributes`.
fn cm_attribute(id: u16) -> Option<&'static str> {
    Some(match id {
        0x0001 => "ClassPortInfo",
        0x0010 => "ConnectRequest",
        0x0011 => "MsgRcptAck",
        0x0012 => "ConnectReject",
        0x0013 => "ConnectReply",
        0x0014 => "ReadyToUse",
        0x0015 => "DisconnectRequest",
        0x0016 => "DisconnectReply",
        0x0017 => "ServiceIDResReq",
        0x0018 => "ServiceIDResReqResp",
        0x0019 => "LoadAlternatePath",
        0x001a => "AlternatePathResponse",
        _ => return None,
    })
}

/// Management classes whose MADs Wireshark names in the Info column.
const SUBNET_MANAGEMENT_LID_ROUTED: u8 = 0x01;
const SUBNET_MANAGEMENT_DIRECTED_ROUTE: u8 = 0x81;
const SUBNET_ADMINISTRATION: u8 = 0x03;

/// A subnet manager's or subnet administration's MAD: its method, then its attribute in
/// parentheses (`SubnGet(SMInfo)`); nothing for another class, or a method or attribute
/// Wireshark's tables lack.
fn write_subnet_mad(out: &mut String, class: u8, method: u8, attribute: u16) -> fmt::Result {
    let (method, attribute) = match class {
        SUBNET_MANAGEMENT_LID_ROUTED | SUBNET_MANAGEMENT_DIRECTED_ROUTE => {
            (subnet_management_method(method), subnet_management_attribute(attribute))
        }
        SUBNET_ADMINISTRATION => (subnet_administration_method(method), subnet_administration_attribute(attribute)),
        _ => return Ok(()),
    };
    match (method, attribute) {
        (Some(method), Some(attribute)) => write!(out, "{method}({attribute})"),
        _ => Ok(()),
    }
}

/// Wireshark's `SUBM_Methods`, without the parenthesis.
fn subnet_management_method(method: u8) -> Option<&'static str> {
    Some(match method {
        0x01 => "SubnGet",
        0x02 => "SubnSet",
        0x81 => "SubnGetResp",
        0x05 => "SubnTrap",
        0x07 => "SubnTrapResp",
        _ => return None,
    })
}

/// Wireshark's `SUBM_Attributes`, the names in their parentheses.
fn subnet_management_attribute(attribute: u16) -> Option<&'static str> {
    Some(match attribute {
        0x0001 => "ClassPortInfo",
        0x0002 => "Notice",
        0x0003 => "InformInfo",
        0x0010 => "NodeDescription",
        0x0011 => "NodeInfo",
        0x0012 => "SwitchInfo",
        0x0014 => "GUIDInfo",
        0x0015 => "PortInfo",
        0x0016 => "P_KeyTable",
        0x0017 => "SLtoVLMapptingTable",
        0x0018 => "VLArbitrationTable",
        0x0019 => "LinearForwardingTable",
        0x001a => "RandomForwardingTable",
        0x001b => "MulticastForwardingTable",
        0x001c => "LinkSpeedWidthPairsTable",
        0x0020 => "SMInfo",
        0x0030 => "VendorDiag",
        0x0031 => "LedInfo",
        _ => return None,
    })
}

/// Wireshark's `SUBA_Methods`, without the parenthesis.
fn subnet_administration_method(method: u8) -> Option<&'static str> {
    Some(match method {
        0x01 => "SubnAdmGet",
        0x81 => "SubnAdmGetResp",
        0x02 => "SubnAdmSet",
        0x06 => "SubnAdmReport",
        0x86 => "SubnAdmReportResp",
        0x12 => "SubnAdmGetTable",
        0x92 => "SubnAdmGetTableResp",
        0x13 => "SubnAdmGetTraceTable",
        0x14 => "SubnAdmGetMulti",
        0x94 => "SubnAdmGetMultiResp",
        0x15 => "SubnAdmDelete",
        0x95 => "SubnAdmDeleteResp",
        _ => return None,
    })
}

/// Wireshark's `SUBA_Attributes`, the names in their parentheses.
fn subnet_administration_attribute(attribute: u16) -> Option<&'static str> {
    Some(match attribute {
        0x0001 => "ClassPortInfo",
        0x0002 => "Notice",
        0x0003 => "InformInfo",
        0x0011 => "NodeRecord",
        0x0012 => "PortInfoRecord",
        0x0013 => "SLtoVLMappingTableRecord",
        0x0014 => "SwitchInfoRecord",
        0x0015 => "LinearForwardingTableRecord",
        0x0016 => "RandomForwardingTableRecord",
        0x0017 => "MulticastForwardingTableRecord",
        0x0018 => "SMInfoRecord",
        0x0019 => "LinkSpeedWidthPairsTableRecord",
        0x00f3 => "InformInfoRecord",
        0x0020 => "LinkRecord",
        0x0030 => "GuidInfoRecord",
        0x0031 => "ServiceRecord",
        0x0033 => "P_KeyTableRecord",
        0x0035 => "PathRecord",
        0x0036 => "VLArbitrationTableRecord",
        0x0038 => "MCMemberRecord",
        0x0039 => "TraceRecord",
        0x003a => "MultiPathRecord",
        0x003b => "ServiceAssociationRecord",
        _ => return None,
    })
}

/// PFC or 802.3x PAUSE.
fn write_mac_control(out: &mut String, control: &MacControl) -> fmt::Result {
    match control {
        MacControl::Pfc(_) => out.write_str("Class Based Flow Control [CBFC] Pause"),
        MacControl::Pause { quanta } => write!(out, "Pause: pause_time: {quanta} quanta"),
        MacControl::Other { .. } => Ok(()),
    }
}

/// The innermost UDP datagram: its ports and its payload's length, by its length field.
fn write_udp(out: &mut String, frame: &Frame<'_, '_>) -> fmt::Result {
    let Some(udp) = frame.packet.udp else { return Ok(()) };
    let payload = udp.length().saturating_sub(8);
    write!(out, "{} → {} Len={payload}", udp.source_port(), udp.destination_port())
}

/// An IPv4 packet of a protocol tshark does not know (UET straight over IP): `Unknown` and
/// the protocol's number.
fn write_ip_protocol(out: &mut String, frame: &Frame<'_, '_>) -> fmt::Result {
    match frame.packet.net {
        Some(Network::Ipv4(ip)) => write!(out, "Unknown ({})", ip.protocol()),
        _ => Ok(()),
    }
}

/// A GRE packet whose protocol type tshark does not follow.
fn write_gre(out: &mut String, protocol: u16) -> fmt::Result {
    write!(out, "Encapsulated 0x{protocol:04x} (unknown)")
}

/// `N` bytes of `bytes` from `at`, where there are that many.
fn array<const N: usize>(bytes: &[u8], at: usize) -> Option<[u8; N]> {
    bytes.get(at..at.checked_add(N)?)?.try_into().ok()
}

/// An Ethernet-over-IPv4 ARP request or reply (`Who has 10.0.0.2? Tell 10.0.0.1`).
fn write_arp(out: &mut String, arp: &[u8]) -> fmt::Result {
    const REQUEST: u16 = 1;
    const REPLY: u16 = 2;
    let (Some(op), Some(sender_mac), Some(sender_ip), Some(target_ip)) =
        (array(arp, 6).map(u16::from_be_bytes), array(arp, 8), array::<4>(arp, 14), array::<4>(arp, 24))
    else {
        return Ok(());
    };
    let (sender_ip, target_ip) = (Ipv4Addr::from(sender_ip), Ipv4Addr::from(target_ip));
    match op {
        REQUEST => write!(out, "Who has {target_ip}? Tell {sender_ip}"),
        REPLY => write!(out, "{sender_ip} is at {}", MacAddr(sender_mac)),
        _ => Ok(()),
    }
}

/// An ICMP echo request (`Echo (ping) request  id=0x0001, seq=1/256, ttl=64`): the sequence
/// number read big- then little-endian, the IPv4 header's TTL.
fn write_icmp(out: &mut String, frame: &Frame<'_, '_>) -> fmt::Result {
    const ECHO_REQUEST: u8 = 8;
    let icmp = body_bytes(frame);
    let Some(Network::Ipv4(ip)) = frame.packet.net else { return Ok(()) };
    let (Some(&ECHO_REQUEST), Some(id), Some(seq)) = (icmp.first(), array(icmp, 4), array(icmp, 6)) else {
        return Ok(());
    };
    let id = u16::from_be_bytes(id);
    let (seq_be, seq_le) = (u16::from_be_bytes(seq), u16::from_le_bytes(seq));
    write!(out, "Echo (ping) request  id=0x{id:04x}, seq={seq_be}/{seq_le}, ttl={}", ip.ttl())
}

/// An ICMPv6 echo request, router solicitation or neighbor solicitation; nothing for other
/// messages (a reply's Info names its request's frame, which a lone frame cannot say).
fn write_icmpv6(out: &mut String, frame: &Frame<'_, '_>) -> fmt::Result {
    const ECHO_REQUEST: u8 = 128;
    const ROUTER_SOLICITATION: u8 = 133;
    const NEIGHBOR_SOLICITATION: u8 = 135;
    let icmp = body_bytes(frame);
    let Some(Network::Ipv6(ip)) = frame.packet.net else { return Ok(()) };
    match icmp.first() {
        Some(&ECHO_REQUEST) => {
            let (Some(id), Some(seq)) = (array(icmp, 4), array(icmp, 6)) else { return Ok(()) };
            let (id, seq) = (u16::from_be_bytes(id), u16::from_be_bytes(seq));
            write!(out, "Echo (ping) request id=0x{id:04x}, seq={seq}, hop limit={}", ip.hop_limit())
        }
        Some(&ROUTER_SOLICITATION) => out.write_str("Router Solicitation"),
        Some(&NEIGHBOR_SOLICITATION) => match array::<16>(icmp, 8) {
            Some(target) => write!(out, "Neighbor Solicitation for {}", std::net::Ipv6Addr::from(target)),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nak(syndrome: u8) -> String {
        let mut out = String::new();
        write_nak(&mut out, syndrome).expect("writes");
        out
    }

    #[test]
    fn opcodes_and_naks_read_as_wiresharks_tables_spell_them() {
        assert_eq!(opcode_name(6), Some("RC RDMA Write First "));
        assert_eq!(opcode_name(38), Some("UC RDMA Write First"), "Wireshark's name lacks its space");
        assert_eq!(opcode_name(67), Some("DC Last Immediate "));
        assert_eq!(opcode_name(0x81), None, "a CNP is an opcode Wireshark 4.0 does not know");
        assert_eq!(nak(0x60), "[PSN Sequence Error] ");
        assert_eq!(nak(0x62), "[Remote Access Error] ");
        assert_eq!(nak(0x65), "[Unknown (5)] ");
        assert_eq!(nak(0x00), "", "an ACK");
        assert_eq!(nak(0x2e), "", "an RNR NAK");
    }
}
