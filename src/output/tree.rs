//! The full decode tree of a frame (`packets -V`): one heading per layer, then every field
//! with its value and meaning, indented.

use std::fmt::{self, Write};

use rocescope_parsers::bth::Bth;
use rocescope_parsers::cm::{CmMad, CmMessage};
use rocescope_parsers::ethernet::EthernetFrame;
use rocescope_parsers::ext::{AethKind, ExtHeaders};
use rocescope_parsers::mac_control::MacControl;
use rocescope_parsers::opcode::Transport;

use super::names::{dscp_name, ecn_name, ethertype_name, ip_protocol_name, write_opcode_words};
use crate::decode::{Body, Encap, EncapKind, Link, Network, Packet, Roce};

const IND: &str = "    ";

fn flag(b: bool) -> u8 {
    u8::from(b)
}

/// Writes the decode tree of `p` (frame `number`).
pub fn write_tree(out: &mut impl Write, number: u64, p: &Packet<'_>) -> fmt::Result {
    writeln!(out, "Frame {number}: {} bytes on wire, {} bytes captured", p.orig_len, p.data.len())?;
    write!(out, "{IND}Arrival time: ")?;
    super::write_absolute_time(out, p.ts_ns)?;
    writeln!(out, " ({} ns since the epoch)", p.ts_ns)?;
    match p.link {
        Link::Sll(sll) => {
            writeln!(out, "Linux cooked capture")?;
            writeln!(out, "{IND}Packet type: {}", sll.packet_type())?;
            writeln!(out, "{IND}Link-layer address type: {}", sll.arphrd_type())?;
            writeln!(out, "{IND}Protocol: {} (0x{:04x})", ethertype_name(sll.protocol()), sll.protocol())?;
        }
        Link::RawIp => writeln!(out, "Raw IP (no link-layer header)")?,
        Link::Unsupported(l) => writeln!(out, "Link type {} (not decoded)", l.0)?,
        Link::Ethernet => {}
    }
    for encap in p.encaps.iter() {
        write_encap(out, encap)?;
    }
    if let Some(eth) = &p.eth {
        write_ethernet(out, eth)?;
    }
    if let Some(net) = &p.net {
        write_network(out, net)?;
    }
    if let Some(udp) = &p.udp {
        writeln!(out, "User Datagram Protocol, Src Port: {}, Dst Port: {}", udp.source_port(), udp.destination_port())?;
        writeln!(out, "{IND}Length: {}", udp.length())?;
        writeln!(out, "{IND}Checksum: 0x{:04x}", udp.checksum())?;
    }
    match &p.body {
        Body::Roce(roce) => write_roce(out, roce)?,
        Body::MacControl(mc) => write_mac_control(out, mc)?,
        Body::Malformed(m) => {
            if let Some(bth) = &m.bth {
                write_bth(out, bth)?;
            }
            writeln!(out, "[Malformed frame: {}]", m.error)?;
        }
        Body::Other(_) => {
            out.write_str("Payload: ")?;
            super::summary::write_info(out, p)?;
            out.write_char('\n')?;
        }
    }
    if !p.trailer.bytes.is_empty() {
        let what = if p.trailer.is_fcs() { "Ethernet FCS (valid)" } else { "padding or trailer" };
        writeln!(out, "Trailer: {} bytes, {what}", p.trailer.bytes.len())?;
    }
    Ok(())
}

fn write_encap(out: &mut impl Write, encap: &Encap<'_>) -> fmt::Result {
    let unknown = || "?".to_string();
    writeln!(
        out,
        "Mirror encapsulation {}, outer Src: {}, Dst: {}",
        encap.kind.name(),
        encap.outer_src().map_or_else(unknown, |a| a.to_string()),
        encap.outer_dst().map_or_else(unknown, |a| a.to_string())
    )?;
    match &encap.kind {
        EncapKind::Erspan1 => writeln!(out, "{IND}ERSPAN type I (no header)"),
        EncapKind::Erspan2(_) | EncapKind::Erspan3(_) => {
            let Some(h) = encap.kind.erspan() else { return Ok(()) };
            writeln!(out, "{IND}Session ID: {}", h.session_id)?;
            writeln!(out, "{IND}Original VLAN: {}", h.vlan)?;
            writeln!(out, "{IND}COS: {}", h.cos)?;
            writeln!(out, "{IND}Truncated by the mirror (T): {}", flag(h.truncated))?;
            if let Some(index) = h.index {
                writeln!(out, "{IND}Encapsulation type (En): {}", h.en_or_bso)?;
                writeln!(out, "{IND}Index: {index}")?;
            }
            if let Some(ts) = h.timestamp {
                writeln!(out, "{IND}Bad/short/oversized (BSO): {}", h.en_or_bso)?;
                writeln!(out, "{IND}Timestamp: {ts} (granularity {})", h.granularity.unwrap_or(0))?;
                writeln!(out, "{IND}Frame type: {}", h.frame_type.unwrap_or(0))?;
                writeln!(out, "{IND}Hardware ID: {}", h.hw_id.unwrap_or(0))?;
                writeln!(out, "{IND}Direction: {}", if h.egress == Some(true) { "egress" } else { "ingress" })?;
                writeln!(out, "{IND}Platform sub-header: {}", flag(h.platform_subheader))?;
            }
            Ok(())
        }
        EncapKind::Vxlan { vni } => writeln!(out, "{IND}VXLAN Network Identifier: {vni}"),
        EncapKind::Gre { protocol, key } => {
            writeln!(out, "{IND}GRE protocol: 0x{protocol:04x}")?;
            if let Some(key) = key {
                writeln!(out, "{IND}Key: 0x{key:08x}")?;
            }
            Ok(())
        }
    }
}

fn write_ethernet(out: &mut impl Write, eth: &EthernetFrame<'_>) -> fmt::Result {
    writeln!(out, "Ethernet II, Src: {}, Dst: {}", eth.header.source(), eth.header.destination())?;
    writeln!(out, "{IND}Destination: {}", eth.header.destination())?;
    writeln!(out, "{IND}Source: {}", eth.header.source())?;
    for tag in eth.vlans.iter() {
        writeln!(
            out,
            "{IND}VLAN tag (TPID 0x{:04x}): PCP {}, DEI {}, VID {}",
            tag.tpid,
            tag.pcp(),
            flag(tag.dei()),
            tag.vid()
        )?;
    }
    writeln!(out, "{IND}Type: {} (0x{:04x})", ethertype_name(eth.ethertype), eth.ethertype)
}

fn write_dscp_ecn(out: &mut impl Write, dscp: u8, ecn: u8) -> fmt::Result {
    write!(out, "{IND}DSCP: {dscp}")?;
    if let Some(name) = dscp_name(dscp) {
        write!(out, " ({name})")?;
    }
    writeln!(out)?;
    writeln!(out, "{IND}ECN: {ecn} ({})", ecn_name(ecn))
}

fn write_network(out: &mut impl Write, net: &Network<'_>) -> fmt::Result {
    match net {
        Network::Ipv4(ip) => {
            writeln!(out, "Internet Protocol Version 4, Src: {}, Dst: {}", net.source(), net.destination())?;
            writeln!(out, "{IND}Header length: {} bytes", ip.header_len())?;
            write_dscp_ecn(out, ip.dscp(), ip.ecn())?;
            writeln!(out, "{IND}Total length: {}", ip.total_length())?;
            writeln!(out, "{IND}Identification: 0x{:04x}", ip.identification())?;
            writeln!(
                out,
                "{IND}Flags: DF={} MF={}, fragment offset {}",
                flag(ip.dont_fragment()),
                flag(ip.more_fragments()),
                ip.fragment_offset()
            )?;
            writeln!(out, "{IND}Time to live: {}", ip.ttl())?;
            writeln!(out, "{IND}Protocol: {} ({})", ip_protocol_name(ip.protocol()), ip.protocol())?;
            writeln!(out, "{IND}Header checksum: 0x{:04x}", ip.checksum())
        }
        Network::Ipv6(ip) => {
            writeln!(out, "Internet Protocol Version 6, Src: {}, Dst: {}", net.source(), net.destination())?;
            write_dscp_ecn(out, ip.dscp(), ip.ecn())?;
            writeln!(out, "{IND}Flow label: 0x{:05x}", ip.flow_label())?;
            writeln!(out, "{IND}Payload length: {}", ip.payload_length())?;
            writeln!(out, "{IND}Next header: {} ({})", ip_protocol_name(ip.next_header()), ip.next_header())?;
            writeln!(out, "{IND}Hop limit: {}", ip.hop_limit())
        }
        Network::Grh(grh) => {
            let grh = grh.fields();
            writeln!(
                out,
                "InfiniBand Global Route Header (RoCEv1), SGID: {}, DGID: {}",
                net.source(),
                net.destination()
            )?;
            writeln!(out, "{IND}Traffic class: {}", grh.traffic_class())?;
            writeln!(out, "{IND}Flow label: 0x{:05x}", grh.flow_label())?;
            writeln!(out, "{IND}Payload length: {}", grh.payload_length())?;
            writeln!(out, "{IND}Next header: 0x{:02x} (BTH)", grh.next_header())?;
            writeln!(out, "{IND}Hop limit: {}", grh.hop_limit())
        }
    }
}

fn write_bth(out: &mut impl Write, bth: &Bth<'_>) -> fmt::Result {
    writeln!(out, "InfiniBand Base Transport Header")?;
    write!(out, "{IND}OpCode: 0x{:02x} ", bth.opcode())?;
    match bth.opcode_info() {
        Some(info) => {
            write_opcode_words(out, info.name)?;
            writeln!(out, " ({})", Transport::of(bth.opcode()).name())?;
        }
        None => writeln!(out, "reserved (no transport defines it)")?,
    }
    writeln!(out, "{IND}Solicited Event: {}", flag(bth.solicited()))?;
    writeln!(out, "{IND}MigReq: {}", flag(bth.mig_req()))?;
    writeln!(out, "{IND}Pad Count: {}", bth.pad_count())?;
    writeln!(out, "{IND}Transport Header Version: {}", bth.tver())?;
    writeln!(out, "{IND}Partition Key: 0x{:04x}", bth.pkey())?;
    writeln!(out, "{IND}FECN: {}", flag(bth.fecn()))?;
    writeln!(out, "{IND}BECN: {}", flag(bth.becn()))?;
    writeln!(out, "{IND}Reserved (6 bits): {}", bth.resv6())?;
    writeln!(out, "{IND}Destination QP: 0x{:06x} ({})", bth.dest_qp(), bth.dest_qp())?;
    writeln!(out, "{IND}Acknowledge Request: {}", flag(bth.ack_req()))?;
    writeln!(out, "{IND}Reserved (7 bits): {}", bth.resv7())?;
    writeln!(out, "{IND}Packet Sequence Number: {} (0x{:06x})", bth.psn(), bth.psn())
}

fn write_ext(out: &mut impl Write, ext: &ExtHeaders) -> fmt::Result {
    if let Some(h) = ext.rdeth {
        writeln!(out, "Reliable Datagram ETH\n{IND}EE Context: {}", h.ee_context)?;
    }
    if let Some(h) = ext.deth {
        writeln!(
            out,
            "Datagram ETH\n{IND}Queue Key: 0x{:08x}\n{IND}Source QP: 0x{:06x} ({})",
            h.qkey, h.src_qp, h.src_qp
        )?;
    }
    if let Some(h) = ext.xrceth {
        writeln!(out, "XRC ETH\n{IND}XRC SRQ: 0x{:06x}", h.xrc_srq)?;
    }
    if let Some(h) = ext.feth {
        writeln!(out, "Flush ETH\n{IND}Placement type: {}\n{IND}Selectivity: {}", h.placement_type(), h.selectivity())?;
    }
    if let Some(h) = ext.reth {
        writeln!(
            out,
            "RDMA ETH\n{IND}Virtual Address: 0x{:016x}\n{IND}Remote Key: 0x{:08x}\n{IND}DMA Length: {}",
            h.va, h.rkey, h.dma_len
        )?;
    }
    if let Some(h) = ext.atomic_eth {
        writeln!(
            out,
            "Atomic ETH\n{IND}Virtual Address: 0x{:016x}\n{IND}Remote Key: 0x{:08x}\n{IND}Swap (or Add) Data: 0x{:016x}\n{IND}Compare Data: 0x{:016x}",
            h.va, h.rkey, h.swap_add, h.compare
        )?;
    }
    if let Some(h) = ext.aeth {
        writeln!(out, "ACK ETH\n{IND}Syndrome: 0x{:02x}", h.syndrome)?;
        match h.kind() {
            AethKind::Ack { credit_code, credits: Some(c) } => {
                writeln!(out, "{IND}Meaning: ACK, credit code {credit_code} = {c} credits")?
            }
            AethKind::Ack { credit_code, credits: None } => {
                writeln!(out, "{IND}Meaning: ACK, credit code {credit_code} (invalid / unlimited)")?
            }
            AethKind::RnrNak { timer_code, delay_us } => {
                writeln!(out, "{IND}Meaning: RNR NAK, timer code {timer_code} = {delay_us} µs")?
            }
            AethKind::Nak(code) => writeln!(out, "{IND}Meaning: NAK, {}", code.describe())?,
            AethKind::Reserved => writeln!(out, "{IND}Meaning: reserved syndrome class")?,
        }
        writeln!(out, "{IND}Message Sequence Number: {}", h.msn)?;
    }
    if let Some(h) = ext.atomic_ack_eth {
        writeln!(out, "AtomicAck ETH\n{IND}Original Remote Data: 0x{:016x}", h.orig)?;
    }
    if let Some(imm) = ext.imm {
        writeln!(out, "Immediate Data: 0x{imm:08x}")?;
    }
    if let Some(h) = ext.ieth {
        writeln!(out, "Invalidate ETH\n{IND}Remote Key: 0x{:08x}", h.rkey)?;
    }
    Ok(())
}

fn write_roce(out: &mut impl Write, roce: &Roce<'_>) -> fmt::Result {
    write_bth(out, &roce.ib.bth)?;
    match &roce.ib.ext() {
        Some(ext) => write_ext(out, ext)?,
        None => writeln!(out, "[Extended transport headers cut by the snap length]")?,
    }
    if let Some(cm) = &roce.cm {
        write_cm(out, cm)?;
    }
    writeln!(out, "Payload: {} bytes ({} captured)", roce.ib.payload_len, roce.ib.payload.len())?;
    write!(out, "Invariant CRC: ")?;
    match roce.ib.icrc() {
        Some(wire) => write!(out, "{:02x}{:02x}{:02x}{:02x} on the wire", wire[0], wire[1], wire[2], wire[3])?,
        None => write!(out, "not captured")?,
    }
    match roce.icrc_computed {
        Some(c) => {
            let [a, b, cc, d] = c.to_le_bytes();
            writeln!(out, ", computed {a:02x}{b:02x}{cc:02x}{d:02x}: {}", roce.icrc.name())
        }
        None => writeln!(out, ": {}", roce.icrc.name()),
    }
}

fn write_cm(out: &mut impl Write, cm: &CmMad<'_>) -> fmt::Result {
    let h = &cm.header;
    writeln!(out, "Management Datagram (class 0x{:02x}, version {})", h.mgmt_class(), h.class_version())?;
    writeln!(out, "{IND}Method: 0x{:02x}{}", h.method(), if h.is_response() { " (response)" } else { "" })?;
    writeln!(out, "{IND}Status: 0x{:04x}", h.status())?;
    writeln!(out, "{IND}Transaction ID: 0x{:016x}", h.transaction_id())?;
    writeln!(out, "{IND}Attribute: {} (0x{:04x})", cm.message.name(), h.attribute_id())?;
    match &cm.message {
        CmMessage::Req(r) => {
            writeln!(out, "CM ConnectRequest")?;
            writeln!(out, "{IND}Local Communication ID: 0x{:08x}", r.local_comm_id())?;
            writeln!(out, "{IND}Service ID: 0x{:016x}", r.service_id())?;
            writeln!(out, "{IND}Local CA GUID: 0x{:016x}", r.local_ca_guid())?;
            writeln!(out, "{IND}Local Q_Key: 0x{:08x}", r.local_qkey())?;
            writeln!(out, "{IND}Local QPN: 0x{:06x}", r.local_qpn())?;
            writeln!(
                out,
                "{IND}Responder resources: {}, initiator depth: {}",
                r.responder_resources(),
                r.initiator_depth()
            )?;
            writeln!(out, "{IND}Transport service type: {}", r.transport_service_type())?;
            writeln!(out, "{IND}Starting PSN: {} (0x{:06x})", r.starting_psn(), r.starting_psn())?;
            writeln!(out, "{IND}Retry count: {}", r.retry_count())?;
            writeln!(out, "{IND}RNR retry count: {}", r.rnr_retry_count())?;
            writeln!(out, "{IND}Partition key: 0x{:04x}", r.pkey())?;
            writeln!(out, "{IND}Path MTU: {} (code {})", r.path_mtu().unwrap_or(0), r.path_mtu_code())?;
            writeln!(out, "{IND}Max CM retries: {}, SRQ: {}", r.max_cm_retries(), flag(r.srq()))?;
            writeln!(out, "{IND}Primary local GID: {}", std::net::Ipv6Addr::from(r.primary_local_gid()))?;
            writeln!(out, "{IND}Primary remote GID: {}", std::net::Ipv6Addr::from(r.primary_remote_gid()))?;
            writeln!(
                out,
                "{IND}Primary flow label: 0x{:05x}, traffic class: {}, hop limit: {}, SL: {}",
                r.primary_flow_label(),
                r.primary_traffic_class(),
                r.primary_hop_limit(),
                r.primary_sl()
            )?;
            let t = r.local_ack_timeout();
            writeln!(out, "{IND}Local ACK timeout: {t} (4.096 µs × 2^{t})")
        }
        CmMessage::Rep(r) => {
            writeln!(out, "CM ConnectReply")?;
            write_comm_ids(out, r.local_comm_id(), r.remote_comm_id())?;
            writeln!(out, "{IND}Local Q_Key: 0x{:08x}", r.local_qkey())?;
            writeln!(out, "{IND}Local QPN: 0x{:06x}", r.local_qpn())?;
            writeln!(out, "{IND}Starting PSN: {} (0x{:06x})", r.starting_psn(), r.starting_psn())?;
            writeln!(
                out,
                "{IND}Responder resources: {}, initiator depth: {}",
                r.responder_resources(),
                r.initiator_depth()
            )?;
            writeln!(out, "{IND}Target ACK delay: {}", r.target_ack_delay())?;
            writeln!(out, "{IND}RNR retry count: {}, SRQ: {}", r.rnr_retry_count(), flag(r.srq()))?;
            writeln!(out, "{IND}Local CA GUID: 0x{:016x}", r.local_ca_guid())
        }
        CmMessage::Rej(r) => {
            writeln!(out, "CM ConnectReject")?;
            write_comm_ids(out, r.local_comm_id(), r.remote_comm_id())?;
            writeln!(out, "{IND}Message rejected: {}", r.message_rejected())?;
            writeln!(out, "{IND}Reason: {}", r.reason())
        }
        CmMessage::Dreq(r) => {
            writeln!(out, "CM DisconnectRequest")?;
            write_comm_ids(out, r.local_comm_id(), r.remote_comm_id())?;
            writeln!(out, "{IND}Remote QPN: 0x{:06x}", r.remote_qpn())
        }
        CmMessage::Rtu(r) | CmMessage::Drep(r) => {
            writeln!(out, "CM {}", cm.message.name())?;
            write_comm_ids(out, r.local_comm_id(), r.remote_comm_id())
        }
        CmMessage::Other { .. } => Ok(()),
    }
}

fn write_comm_ids(out: &mut impl Write, local: u32, remote: u32) -> fmt::Result {
    writeln!(out, "{IND}Local / remote Communication ID: 0x{local:08x} / 0x{remote:08x}")
}

fn write_mac_control(out: &mut impl Write, mc: &MacControl) -> fmt::Result {
    match mc {
        MacControl::Pfc(pfc) => {
            writeln!(out, "MAC Control: Priority-based Flow Control (802.1Qbb), opcode 0x0101")?;
            writeln!(out, "{IND}Class-enable vector: 0x{:04x}", pfc.class_enable)?;
            for priority in 0..8u8 {
                let quanta = pfc.quanta.get(usize::from(priority)).copied().unwrap_or(0);
                let state = match pfc.pause_quanta(priority) {
                    None => "not enabled",
                    Some(0) => "XON",
                    Some(_) => "XOFF",
                };
                writeln!(out, "{IND}Priority {priority}: {quanta} quanta ({state})")?;
            }
            Ok(())
        }
        MacControl::Pause { quanta } => {
            writeln!(out, "MAC Control: PAUSE (802.3x), opcode 0x0001")?;
            writeln!(out, "{IND}Pause time: {quanta} quanta{}", if *quanta == 0 { " (XON)" } else { "" })
        }
        MacControl::Other { opcode } => writeln!(out, "MAC Control: opcode 0x{opcode:04x}"),
    }
}
