//! The one-line summary of a frame: protocol, source, destination and info, as in Wireshark's
//! packet list.

use std::fmt::{self, Write};

use rocescope_parsers::cm::CmMessage;
use rocescope_parsers::ext::{AethKind, ExtHeaders};
use rocescope_parsers::mac_control::{MacControl, Pfc};
use rocescope_parsers::opcode::CNP;

use rocescope_parsers::uet::{Ses, names};

use crate::decode::{Body, DecodedFrame, IcrcStatus, Link, Network, Other, Roce, UetFrame};
use crate::fields::names::{ethertype_name, write_opcode_words};

/// The protocol column.
pub fn protocol(p: &DecodedFrame<'_>) -> &'static str {
    match &p.body {
        Body::Roce(r) if r.cm.is_some() => "RDMA-CM",
        Body::Roce(r) if r.is_native() => "InfiniBand",
        Body::Roce(r) if r.version == 1 => "RoCEv1",
        Body::Roce(_) => "RoCEv2",
        Body::Uet(_) => "UET",
        Body::MacControl(MacControl::Pfc(_)) => "PFC",
        Body::MacControl(_) => "PAUSE",
        Body::Malformed(_) => "Malformed",
        Body::Other(other) => match other {
            Other::Arp => "ARP",
            Other::Lldp => "LLDP",
            Other::EtherType(_) => "Ethernet",
            Other::Tcp { .. } => "TCP",
            Other::Udp { .. } => "UDP",
            Other::Icmp => "ICMP",
            Other::Icmpv6 => "ICMPv6",
            Other::Gre { .. } => "GRE",
            Other::MplsPayload => "MPLS",
            Other::MacControl { .. } => "MAC-Ctrl",
            Other::InfinibandNonIba { .. } => "InfiniBand",
            Other::InfinibandLink { .. } => "InfiniBand Link",
            Other::ErfType(_) => "ERF",
            Other::UnsupportedLink(_) => "Link",
            Other::IpFragment | Other::IpProtocol(_) => match p.net {
                Some(Network::Ipv6(_)) => "IPv6",
                _ => "IPv4",
            },
        },
    }
}

/// Writes the source and destination columns' contents: IP addresses (or GIDs, or LIDs), else
/// MAC addresses, else the cooked-capture link address.
pub fn write_endpoints(src: &mut impl Write, dst: &mut impl Write, p: &DecodedFrame<'_>) -> fmt::Result {
    if let Some(net) = p.net {
        write!(src, "{}", net.source())?;
        write!(dst, "{}", net.destination())
    } else if let Some(eth) = p.eth {
        write!(src, "{}", eth.header.source())?;
        write!(dst, "{}", eth.header.destination())
    } else if let Link::Sll(sll) = p.link {
        for (i, b) in sll.link_address().iter().enumerate() {
            write!(src, "{}{b:02x}", if i > 0 { ":" } else { "" })?;
        }
        Ok(())
    } else {
        Ok(())
    }
}

/// The info column.
pub fn write_info(out: &mut impl Write, p: &DecodedFrame<'_>) -> fmt::Result {
    for encap in p.encaps.iter() {
        write!(out, "[{}] ", encap.kind.name())?;
    }
    match &p.body {
        Body::Roce(roce) => write_roce(out, roce),
        Body::Uet(uet) => write_uet(out, uet),
        Body::MacControl(MacControl::Pfc(pfc)) => write_pfc(out, pfc),
        Body::MacControl(MacControl::Pause { quanta: 0 }) => out.write_str("PAUSE XON (0 quanta)"),
        Body::MacControl(MacControl::Pause { quanta }) => write!(out, "PAUSE {quanta} quanta"),
        Body::MacControl(MacControl::Other { opcode }) | Body::Other(Other::MacControl { opcode }) => {
            write!(out, "MAC Control opcode 0x{opcode:04x}")
        }
        Body::Malformed(m) => {
            write!(out, "Malformed: {}", m.error)?;
            if let Some(bth) = m.bth {
                write!(out, " (opcode 0x{:02x} QP=0x{:06x} PSN={})", bth.opcode(), bth.dest_qp(), bth.psn())?;
            }
            Ok(())
        }
        Body::Other(other) => write_other(out, other),
    }
}

fn write_other(out: &mut impl Write, other: &Other) -> fmt::Result {
    match other {
        Other::Arp => out.write_str("ARP"),
        Other::Lldp => out.write_str("LLDP"),
        Other::EtherType(t) => write!(out, "EtherType 0x{t:04x} ({})", ethertype_name(*t)),
        Other::IpFragment => out.write_str("IP fragment (not reassembled)"),
        Other::Tcp { sport, dport } => write!(out, "{sport} → {dport}"),
        Other::Udp { sport, dport } => write!(out, "{sport} → {dport}"),
        Other::Icmp => out.write_str("ICMP"),
        Other::Icmpv6 => out.write_str("ICMPv6"),
        Other::IpProtocol(proto) => write!(out, "IP protocol {proto}"),
        Other::Gre { protocol } => write!(out, "GRE protocol 0x{protocol:04x}"),
        Other::MplsPayload => out.write_str("MPLS payload neither IP nor an Ethernet frame"),
        Other::MacControl { opcode } => write!(out, "MAC Control opcode 0x{opcode:04x}"),
        Other::InfinibandNonIba { lnh: 0 } => out.write_str("Raw packet (LNH 0, no IBA transport)"),
        Other::InfinibandNonIba { lnh } => write!(out, "IPv6 over InfiniBand (LNH {lnh}, not decoded)"),
        Other::InfinibandLink { operand: 0 } => out.write_str("Link packet: Normal Flow Control"),
        Other::InfinibandLink { operand: 1 } => out.write_str("Link packet: Flow Control Init"),
        Other::InfinibandLink { operand } => write!(out, "Link packet: reserved operand {operand}"),
        Other::ErfType(t) => write!(out, "ERF record type {t} not decoded"),
        Other::UnsupportedLink(l) => write!(out, "link type {l} not decoded"),
    }
}

/// A UET packet: its PDS type and what identifies it (PSN and PDC ids, the ACK's PSNs, the
/// NACK's code), its flags, then its SES header's operation.
fn write_uet(out: &mut impl Write, uet: &UetFrame<'_>) -> fmt::Result {
    let Some(pds) = uet.pds() else {
        let sdi = uet.tss().map_or(0, |t| t.sdi());
        return write!(out, "TSS SDI={sdi} (encrypted)");
    };
    out.write_str(pds.pds_type().name())?;
    if let Some(ctl) = pds.ctl_type() {
        write!(out, " {}", names::control_type(ctl).unwrap_or("reserved"))?;
    }
    if let Some(code) = pds.nack_code() {
        write!(out, " {}", names::nack_code(code).unwrap_or("reserved"))?;
    }
    let numbers = [
        ("PSN", pds.psn()),
        ("CACK_PSN", pds.cack_psn()),
        ("ACK_PSN", pds.ack_psn()),
        ("NACK_PSN", pds.nack_psn()),
        ("SACK_BASE", pds.sack_base()),
        ("Start_PSN", pds.start_psn()),
        ("SPDCID", pds.spdcid().map(u32::from)),
        ("DPDCID", pds.dpdcid().map(u32::from)),
        ("PKT_ID", pds.packet_id()),
    ];
    for (name, value) in numbers {
        if let Some(v) = value {
            write!(out, " {name}={v}")?;
        }
    }
    let flags =
        [("RETX", pds.retx()), ("AR", pds.ar()), ("SYN", pds.syn()), ("M", pds.ecn_marked()), ("P", pds.probe())];
    for (name, set) in flags {
        if set {
            write!(out, " [{name}]")?;
        }
    }
    write!(out, " CRC {}", uet.crc.name())?;
    match uet.ses() {
        Some(Ses::Request(r)) => write!(out, " | {}", names::request_opcode(r.opcode()).unwrap_or("reserved opcode")),
        Some(Ses::Response(r)) => write!(
            out,
            " | {} {}",
            names::response_opcode(r.opcode()).unwrap_or("reserved opcode"),
            names::return_code(r.return_code()).unwrap_or("reserved return code")
        ),
        None => Ok(()),
    }
}

fn write_pfc(out: &mut impl Write, pfc: &Pfc) -> fmt::Result {
    out.write_str("PFC")?;
    let mut any = false;
    for priority in 0..8u8 {
        if let Some(quanta) = pfc.pause_quanta(priority) {
            out.write_str(if any { ", " } else { " " })?;
            any = true;
            if quanta == 0 {
                write!(out, "P{priority} XON")?;
            } else {
                write!(out, "P{priority} XOFF {quanta} quanta")?;
            }
        }
    }
    if !any {
        out.write_str(" (no class enabled)")?;
    }
    Ok(())
}

fn write_roce(out: &mut impl Write, roce: &Roce<'_>) -> fmt::Result {
    let bth = roce.ib.bth;
    let ext = roce.ib.ext().unwrap_or_default();
    let (qp, psn) = (bth.dest_qp(), bth.psn());
    if let Some(cm) = &roce.cm {
        write_cm(out, &cm.message)?;
    } else if let (Some(aeth), false) = (ext.aeth, roce.ib.info.payload) {
        // ACK, ATOMIC ACK and the NAKs: name them by syndrome.
        match aeth.kind() {
            AethKind::Ack { credits, .. } => {
                out.write_str(if ext.atomic_ack_eth.is_some() { "ATOMIC ACK" } else { "ACK" })?;
                write!(out, " QP=0x{qp:06x} PSN={psn} MSN={}", aeth.msn)?;
                match credits {
                    Some(c) => write!(out, " credits={c}")?,
                    None => out.write_str(" credits=unlimited")?,
                }
                if let Some(a) = ext.atomic_ack_eth {
                    write!(out, " orig=0x{:x}", a.orig)?;
                }
            }
            AethKind::RnrNak { delay_us, .. } => write!(
                out,
                "RNR NAK QP=0x{qp:06x} PSN={psn} MSN={} timer={}.{:02} ms",
                aeth.msn,
                delay_us / 1000,
                (delay_us % 1000) / 10
            )?,
            AethKind::Nak(code) => write!(out, "NAK {} QP=0x{qp:06x} PSN={psn} MSN={}", code.describe(), aeth.msn)?,
            AethKind::Reserved => {
                write!(out, "AETH reserved syndrome 0x{:02x} QP=0x{qp:06x} PSN={psn}", aeth.syndrome)?
            }
        }
    } else if bth.opcode() == CNP {
        write!(out, "CNP QP=0x{qp:06x}")?;
    } else {
        write_opcode_words(out, roce.ib.info.name)?;
        write!(out, " QP=0x{qp:06x} PSN={psn}")?;
        write_request_extras(out, &ext)?;
    }
    if bth.ack_req() {
        out.write_str(" AckReq")?;
    }
    if bth.fecn() {
        out.write_str(" FECN")?;
    }
    if bth.becn() && bth.opcode() != CNP {
        out.write_str(" BECN")?;
    }
    write!(out, " ICRC {}", roce.icrc.name())?;
    match roce.vcrc {
        Some(v) if v.status != IcrcStatus::Ok => write!(out, " VCRC {}", v.status.name()),
        _ => Ok(()),
    }
}

fn write_request_extras(out: &mut impl Write, ext: &ExtHeaders) -> fmt::Result {
    if let Some(deth) = ext.deth {
        write!(out, " SrcQP=0x{:06x}", deth.src_qp)?;
    }
    if let Some(reth) = ext.reth {
        write!(out, " len={}", reth.dma_len)?;
    }
    if let Some(aeth) = ext.aeth {
        write!(out, " MSN={}", aeth.msn)?;
    }
    if let Some(imm) = ext.imm {
        write!(out, " Imm=0x{imm:08x}")?;
    }
    Ok(())
}

fn write_cm(out: &mut impl Write, message: &CmMessage<'_>) -> fmt::Result {
    write!(out, "CM {}", message.name())?;
    match message {
        CmMessage::Req(req) => write!(
            out,
            " QPN=0x{:06x} StartPSN={} MTU={} retry={} rnr_retry={} ack_timeout={}",
            req.local_qpn(),
            req.starting_psn(),
            req.path_mtu().unwrap_or(0),
            req.retry_count(),
            req.rnr_retry_count(),
            req.local_ack_timeout()
        ),
        CmMessage::Rep(rep) => write!(out, " QPN=0x{:06x} StartPSN={}", rep.local_qpn(), rep.starting_psn()),
        CmMessage::Rej(rej) => write!(out, " reason={}", rej.reason()),
        CmMessage::Dreq(dreq) => write!(out, " RemoteQPN=0x{:06x}", dreq.remote_qpn()),
        _ => Ok(()),
    }
}
