//! One JSON object per frame (`packets --format jsonl`). The schema is documented in
//! `docs/jsonl-schema.md`; every key is present in every object, `null` when it does not apply.

use std::fmt::Display;

use serde::ser::SerializeSeq;
use serde::{Serialize, Serializer};

use rocescope_parsers::cm::CmMessage;
use rocescope_parsers::mac_control::MacControl;

use crate::analyze::Verdict;
use crate::analyze::seq_class::SeqClass;
use crate::decode::{Body, DecodedFrame};

/// Version of the per-frame JSON schema; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// Serialises a value through its `Display` implementation, without an intermediate string.
struct Disp<T>(T);

impl<T: Display> Serialize for Disp<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Writes `bytes` as lower-case hex digits into `out`, with `separator` between bytes when
/// given; returns the text. Formatting through `fmt` costs several times more per frame.
fn hex_into<'b>(bytes: &[u8], separator: Option<u8>, out: &'b mut [u8; 24]) -> &'b str {
    let mut n = 0;
    for (i, b) in bytes.iter().enumerate() {
        if let (Some(sep), true) = (separator, i > 0) {
            if let Some(slot) = out.get_mut(n) {
                *slot = sep;
            }
            n += 1;
        }
        for digit in [b >> 4, b & 0x0F] {
            if let (Some(slot), Some(h)) = (out.get_mut(n), HEX.get(usize::from(digit))) {
                *slot = *h;
            }
            n += 1;
        }
    }
    std::str::from_utf8(out.get(..n).unwrap_or_default()).unwrap_or_default()
}

/// Four bytes as eight lower-case hex digits, in the given order.
struct Hex4([u8; 4]);

impl Serialize for Hex4 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(hex_into(&self.0, None, &mut [0; 24]))
    }
}

/// A MAC address as `aa:bb:cc:dd:ee:ff`.
struct Mac(rocescope_parsers::ethernet::MacAddr);

impl Serialize for Mac {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(hex_into(&self.0.0, Some(b':'), &mut [0; 24]))
    }
}

struct EncapList<'p, 'a>(&'p DecodedFrame<'a>);

impl Serialize for EncapList<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        let mut result = Ok(());
        self.0.encapsulation_names(&mut |name| {
            if result.is_ok() {
                result = seq.serialize_element(name);
            }
        });
        result?;
        seq.end()
    }
}

#[derive(Serialize)]
struct VlanJson {
    id: u16,
    pcp: u8,
    dei: u8,
    tpid: u16,
}

struct VlanList<'p, 'a>(&'p DecodedFrame<'a>);

impl Serialize for VlanList<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        if let Some(eth) = &self.0.eth {
            for tag in eth.vlans.iter() {
                seq.serialize_element(&VlanJson {
                    id: tag.vid(),
                    pcp: tag.pcp(),
                    dei: u8::from(tag.dei()),
                    tpid: tag.tpid,
                })?;
            }
        }
        seq.end()
    }
}

#[derive(Serialize)]
struct RethJson {
    va: u64,
    rkey: u32,
    dma_len: u32,
}

#[derive(Serialize)]
struct AethJson {
    syndrome: u8,
    msn: u32,
}

#[derive(Serialize)]
struct AtomicJson {
    va: u64,
    rkey: u32,
    swap_add: u64,
    compare: u64,
}

#[derive(Serialize)]
struct AtomicAckJson {
    orig: u64,
}

#[derive(Serialize)]
struct PfcJson {
    opcode: u16,
    class_enable: u16,
    quanta: [u16; 8],
}

#[derive(Serialize)]
struct ErrorJson {
    layer: &'static str,
    reason: Disp<rocescope_parsers::Error>,
}

#[derive(Serialize, Default)]
struct CmJson {
    message: &'static str,
    attribute_id: u16,
    local_comm_id: Option<u32>,
    remote_comm_id: Option<u32>,
    local_qpn: Option<u32>,
    remote_qpn: Option<u32>,
    starting_psn: Option<u32>,
    path_mtu: Option<u32>,
    retry_count: Option<u8>,
    rnr_retry_count: Option<u8>,
    local_ack_timeout: Option<u8>,
    reject_reason: Option<u16>,
}

fn cm_json(attribute_id: u16, message: &CmMessage<'_>) -> CmJson {
    let base = CmJson { message: message.name(), attribute_id, ..CmJson::default() };
    match message {
        CmMessage::Req(r) => CmJson {
            local_comm_id: Some(r.local_comm_id()),
            local_qpn: Some(r.local_qpn()),
            starting_psn: Some(r.starting_psn()),
            path_mtu: r.path_mtu(),
            retry_count: Some(r.retry_count()),
            rnr_retry_count: Some(r.rnr_retry_count()),
            local_ack_timeout: Some(r.local_ack_timeout()),
            ..base
        },
        CmMessage::Rep(r) => CmJson {
            local_comm_id: Some(r.local_comm_id()),
            remote_comm_id: Some(r.remote_comm_id()),
            local_qpn: Some(r.local_qpn()),
            starting_psn: Some(r.starting_psn()),
            rnr_retry_count: Some(r.rnr_retry_count()),
            ..base
        },
        CmMessage::Rej(r) => CmJson {
            local_comm_id: Some(r.local_comm_id()),
            remote_comm_id: Some(r.remote_comm_id()),
            reject_reason: Some(r.reason()),
            ..base
        },
        CmMessage::Dreq(r) => CmJson {
            local_comm_id: Some(r.local_comm_id()),
            remote_comm_id: Some(r.remote_comm_id()),
            remote_qpn: Some(r.remote_qpn()),
            ..base
        },
        CmMessage::Rtu(r) | CmMessage::Drep(r) => {
            CmJson { local_comm_id: Some(r.local_comm_id()), remote_comm_id: Some(r.remote_comm_id()), ..base }
        }
        CmMessage::Other { .. } => base,
    }
}

/// A frame, its number and what the analysis concluded about it, serialised as one JSON
/// object.
pub struct FrameJson<'p, 'a> {
    pub number: u64,
    pub packet: &'p DecodedFrame<'a>,
    pub verdict: &'p Verdict,
}

/// Writes the members of one JSON object. Keys are constants that need no escaping, so they
/// are written as they are; values go through serde. (serde_json escapes every key of every
/// object, which was a quarter of the per-frame cost.)
struct Object<'o> {
    out: &'o mut Vec<u8>,
    empty: bool,
}

impl<'o> Object<'o> {
    fn new(out: &'o mut Vec<u8>) -> Self {
        out.push(b'{');
        Object { out, empty: true }
    }

    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> serde_json::Result<()> {
        if !std::mem::take(&mut self.empty) {
            self.out.push(b',');
        }
        self.out.push(b'"');
        self.out.extend_from_slice(key.as_bytes());
        self.out.extend_from_slice(b"\":");
        serde_json::to_writer(&mut *self.out, value)
    }

    fn end(self) -> serde_json::Result<()> {
        self.out.push(b'}');
        Ok(())
    }
}

impl FrameJson<'_, '_> {
    /// Appends the frame's JSON object to `out`.
    pub fn write_to(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        let mut o = Object::new(out);
        o.serialize_field("frame", &self.number)?;
        write_link_and_network(&mut o, self.packet)?;
        write_transport(&mut o, self.packet)?;
        write_body(&mut o, self.packet)?;
        write_verdict(&mut o, self.verdict)?;
        o.end()
    }
}

/// Time, lengths, kind, tunnels, VLANs, addresses, IP marking and UDP ports.
fn write_link_and_network(o: &mut Object<'_>, p: &DecodedFrame<'_>) -> serde_json::Result<()> {
    o.serialize_field("ts_ns", &p.ts_ns)?;
    o.serialize_field("len", &p.orig_len)?;
    o.serialize_field("caplen", &p.data.len())?;
    o.serialize_field("kind", p.kind().name())?;
    o.serialize_field("encap", &EncapList(p))?;
    o.serialize_field("vlan", &VlanList(p))?;
    o.serialize_field("src_mac", &p.src_mac().map(Mac))?;
    o.serialize_field("dst_mac", &p.dst_mac().map(Mac))?;
    o.serialize_field("src_ip", &p.src_ip().map(Disp))?;
    o.serialize_field("dst_ip", &p.dst_ip().map(Disp))?;
    o.serialize_field("slid", &p.lrh.map(|l| l.slid()))?;
    o.serialize_field("dlid", &p.lrh.map(|l| l.dlid()))?;
    o.serialize_field("ttl", &p.net.and_then(|n| n.ttl()))?;
    o.serialize_field("dscp", &p.net.and_then(|n| n.dscp()))?;
    o.serialize_field("ecn", &p.net.and_then(|n| n.ecn()))?;
    o.serialize_field("udp_sport", &p.udp.map(|u| u.source_port()))?;
    o.serialize_field("udp_dport", &p.udp.map(|u| u.destination_port()))?;
    Ok(())
}

/// The RoCE transport: BTH, extended headers, ICRC and CM.
fn write_transport(o: &mut Object<'_>, p: &DecodedFrame<'_>) -> serde_json::Result<()> {
    let roce = p.roce();
    let bth = roce.map(|r| r.ib.bth);
    let ext = roce.and_then(|r| r.ib.ext()).unwrap_or_default();
    let bit = |f: fn(&rocescope_parsers::bth::Bth<'_>) -> bool| bth.map(|b| u8::from(f(&b)));
    o.serialize_field("roce", &roce.map(|r| r.version))?;
    o.serialize_field("opcode", &bth.map(|b| b.opcode()))?;
    o.serialize_field("opcode_name", &roce.map(|r| r.ib.info.name))?;
    o.serialize_field("se", &bit(|b| b.solicited()))?;
    o.serialize_field("m", &bit(|b| b.mig_req()))?;
    o.serialize_field("pad", &bth.map(|b| b.pad_count()))?;
    o.serialize_field("tver", &bth.map(|b| b.tver()))?;
    o.serialize_field("pkey", &bth.map(|b| b.pkey()))?;
    o.serialize_field("fecn", &bit(|b| b.fecn()))?;
    o.serialize_field("becn", &bit(|b| b.becn()))?;
    o.serialize_field("dst_qp", &bth.map(|b| b.dest_qp()))?;
    o.serialize_field("ack_req", &bit(|b| b.ack_req()))?;
    o.serialize_field("psn", &bth.map(|b| b.psn()))?;
    o.serialize_field("src_qp", &ext.deth.map(|d| d.src_qp))?;
    o.serialize_field("qkey", &ext.deth.map(|d| d.qkey))?;
    o.serialize_field("ee_context", &ext.rdeth.map(|d| d.ee_context))?;
    o.serialize_field("xrc_srq", &ext.xrceth.map(|x| x.xrc_srq))?;
    o.serialize_field("reth", &ext.reth.map(|r| RethJson { va: r.va, rkey: r.rkey, dma_len: r.dma_len }))?;
    o.serialize_field("aeth", &ext.aeth.map(|a| AethJson { syndrome: a.syndrome, msn: a.msn }))?;
    o.serialize_field("imm", &ext.imm)?;
    o.serialize_field("ieth_rkey", &ext.ieth.map(|i| i.rkey))?;
    o.serialize_field(
        "atomic",
        &ext.atomic_eth.map(|a| AtomicJson { va: a.va, rkey: a.rkey, swap_add: a.swap_add, compare: a.compare }),
    )?;
    o.serialize_field("atomic_ack", &ext.atomic_ack_eth.map(|a| AtomicAckJson { orig: a.orig }))?;
    o.serialize_field("payload_len", &roce.map(|r| r.ib.payload_len))?;
    o.serialize_field("icrc", &roce.map(|r| r.icrc.name()))?;
    o.serialize_field("icrc_wire", &roce.and_then(|r| r.ib.icrc()).map(Hex4))?;
    o.serialize_field("icrc_computed", &roce.and_then(|r| r.icrc_computed).map(|c| Hex4(c.to_le_bytes())))?;
    o.serialize_field("vcrc", &roce.and_then(|r| r.vcrc).map(|v| v.status.name()))?;
    o.serialize_field("cm", &roce.and_then(|r| r.cm).map(|cm| cm_json(cm.header.attribute_id(), &cm.message)))?;
    Ok(())
}

/// PFC and PAUSE frames, and the reason a frame is malformed.
fn write_body(o: &mut Object<'_>, p: &DecodedFrame<'_>) -> serde_json::Result<()> {
    let (pfc, pause) = match &p.body {
        Body::MacControl(MacControl::Pfc(pfc)) => {
            (Some(PfcJson { opcode: 0x0101, class_enable: pfc.class_enable, quanta: pfc.quanta }), None)
        }
        Body::MacControl(MacControl::Pause { quanta }) => (None, Some(*quanta)),
        _ => (None, None),
    };
    o.serialize_field("pfc", &pfc)?;
    o.serialize_field("pause_quanta", &pause)?;
    let error = match &p.body {
        Body::Malformed(m) => Some(ErrorJson { layer: m.error.layer.name(), reason: Disp(m.error) }),
        _ => None,
    };
    o.serialize_field("error", &error)?;
    Ok(())
}

/// The analysis's final verdict.
fn write_verdict(o: &mut Object<'_>, v: &Verdict) -> serde_json::Result<()> {
    o.serialize_field("flow", &v.flow)?;
    o.serialize_field("seq_class", &v.seq.map(SeqClass::name))?;
    o.serialize_field(
        "gap_missing",
        &match v.seq {
            Some(SeqClass::Gap { missing }) => missing,
            _ => 0,
        },
    )?;
    o.serialize_field("mirror_duplicate", &v.mirror_duplicate)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_are_valid_json_with_keys_in_order() {
        let mut out = Vec::new();
        let mut o = Object::new(&mut out);
        o.serialize_field("a", &1u8).unwrap();
        o.serialize_field("b", &Some("x\"y")).unwrap();
        o.serialize_field("c", &None::<u32>).unwrap();
        o.end().unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), r#"{"a":1,"b":"x\"y","c":null}"#);
    }

    #[test]
    fn hex_text() {
        assert_eq!(hex_into(&[0x3d, 0x01, 0x0e, 0x3a], None, &mut [0; 24]), "3d010e3a");
        assert_eq!(hex_into(&[2, 0, 0, 0xab, 0, 0xff], Some(b':'), &mut [0; 24]), "02:00:00:ab:00:ff");
    }
}
