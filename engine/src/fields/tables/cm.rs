//! Management datagrams and RDMA CM.

use rocescope_parsers::cm::{CmMessage, CmRep, CmReq};

use super::declare::*;
use crate::decode::Network;
use crate::fields::FieldType::{Ipv4, Ipv6};
use crate::fields::names::meaning;
use crate::fields::{Field, Frame, Value, named};

fn req<'a>(f: &Frame<'_, 'a>) -> Option<CmReq<'a>> {
    match f.cm()?.message {
        CmMessage::Req(r) => Some(r),
        _ => None,
    }
}

fn rep<'a>(f: &Frame<'_, 'a>) -> Option<CmRep<'a>> {
    match f.cm()?.message {
        CmMessage::Rep(r) => Some(r),
        _ => None,
    }
}

/// A ConnectRequest carried by RoCEv2 over IPv4.
fn req_over_ipv4<'a>(f: &Frame<'_, 'a>) -> Option<CmReq<'a>> {
    req(f).filter(|_| matches!(f.packet.net, Some(Network::Ipv4(_))))
}

/// A ConnectRequest carried over IPv6 or a GRH.
fn req_over_ipv6<'a>(f: &Frame<'_, 'a>) -> Option<CmReq<'a>> {
    req(f).filter(|_| !matches!(f.packet.net, Some(Network::Ipv4(_))))
}

/// The IPv4 address of an IPv4-mapped GID: its last four bytes.
fn gid_ipv4(gid: [u8; 16]) -> [u8; 4] {
    let [.., a, b, c, d] = gid;
    [a, b, c, d]
}

/// The CM messages that carry only communication IDs, or begin with them.
#[derive(PartialEq)]
enum Cm {
    Rtu,
    Rej,
    Dreq,
    Drep,
}

/// The local (or remote) communication ID of a CM message of kind `kind`.
fn cm_ids<'a>(f: &Frame<'_, 'a>, kind: Cm, local: bool, out: &mut dyn FnMut(Value<'a>)) {
    let ids = match (f.cm().map(|m| &m.message), kind) {
        (Some(CmMessage::Rtu(r)), Cm::Rtu) | (Some(CmMessage::Drep(r)), Cm::Drep) => {
            (r.local_comm_id(), r.remote_comm_id())
        }
        (Some(CmMessage::Rej(r)), Cm::Rej) => (r.local_comm_id(), r.remote_comm_id()),
        (Some(CmMessage::Dreq(r)), Cm::Dreq) => (r.local_comm_id(), r.remote_comm_id()),
        _ => return,
    };
    out(uint(if local { ids.0 } else { ids.1 }))
}

pub static FIELDS: &[Field] = &[
    // management datagrams and RDMA CM
    ws!("infiniband.mad.baseversion", U8, Hex, 0, "Base Version", |f, out| if let Some(m) = f.mad() {
        out(uint(m.base_version()))
    }),
    ws!("infiniband.mad.mgmtclass", U8, Hex, 0, "Management Class", |f, out| if let Some(m) = f.mad() {
        out(uint(m.mgmt_class()))
    }),
    ws!("infiniband.mad.classversion", U8, Hex, 0, "Class Version", |f, out| if let Some(m) = f.mad() {
        out(uint(m.class_version()))
    }),
    // the whole byte, the response bit (0x80) included, as Wireshark shows it
    ws!("infiniband.mad.method", U8, Hex, 0, "Method", |f, out| if let Some(m) = f.mad() {
        out(uint(m.method() | (u8::from(m.is_response()) << 7)))
    }),
    ws!("infiniband.mad.status", U16, Hex, 0, "Status", |f, out| if let Some(m) = f.mad() {
        out(uint(m.status()))
    }),
    ws!("infiniband.mad.transactionid", U64, Hex, 0, "Transaction ID", |f, out| if let Some(m) = f.mad() {
        out(uint(m.transaction_id()))
    }),
    ws!("infiniband.mad.attributeid", U16, Hex, 0, "Attribute ID", |f, out| if let Some(m) = f.mad() {
        out(uint(m.attribute_id()))
    }),
    ws!("infiniband.mad.attributemodifier", U32, Hex, 0, "Attribute Modifier", |f, out| if let Some(m) = f.mad() {
        out(uint(m.attribute_modifier()))
    }),
    // ConnectRequest; Wireshark names its local communication ID `infiniband.cm.req`
    ws!("infiniband.cm.req", U32, Hex, 0, "Local Communication ID", |f, out| if let Some(r) = req(f) {
        out(uint(r.local_comm_id()))
    }),
    ws!("infiniband.cm.req.serviceid", U64, Hex, 0, "ServiceID", |f, out| if let Some(r) = req(f) {
        out(uint(r.service_id()))
    }),
    ws!("infiniband.cm.req.localcaguid", U64, Hex, 0, "Local CA GUID", |f, out| if let Some(r) = req(f) {
        out(uint(r.local_ca_guid()))
    }),
    ws!("infiniband.cm.req.localqkey", U32, Hex, 0, "Local Q_Key", |f, out| if let Some(r) = req(f) {
        out(uint(r.local_qkey()))
    }),
    ws!("infiniband.cm.req.localqpn", U24, Hex, 0, "Local QPN", |f, out| if let Some(r) = req(f) {
        out(uint(r.local_qpn()))
    }),
    ws!("infiniband.cm.req.responderres", U8, Hex, 0, "Responder Resources", |f, out| if let Some(r) = req(f) {
        out(uint(r.responder_resources()))
    }),
    ws!("infiniband.cm.req.initdepth", U8, Hex, 0, "Initiator Depth", |f, out| if let Some(r) = req(f) {
        out(uint(r.initiator_depth()))
    }),
    named(
        ws!(
            "infiniband.cm.req.transpsvctype",
            U8,
            Hex,
            0x6,
            "Transport Service Type",
            |f, out| if let Some(r) = req(f) {
                out(uint(r.transport_service_type()))
            }
        ),
        meaning::transport_service,
    ),
    ws!("infiniband.cm.req.startpsn", U24, Hex, 0, "Starting PSN", |f, out| if let Some(r) = req(f) {
        out(uint(r.starting_psn()))
    }),
    ws!("infiniband.cm.req.retrcount", U8, Hex, 0x7, "Retry Count", |f, out| if let Some(r) = req(f) {
        out(uint(r.retry_count()))
    }),
    ws!("infiniband.cm.req.pkey", U16, Hex, 0, "Partition Key", |f, out| if let Some(r) = req(f) {
        out(uint(r.pkey()))
    }),
    named(
        ws!("infiniband.cm.req.pppmtu", U8, Hex, 0xf0, "Path Packet Payload MTU", |f, out| if let Some(r) = req(f) {
            out(uint(r.path_mtu_code()))
        }),
        meaning::path_mtu,
    ),
    ws!("infiniband.cm.req.rnrretrcount", U8, Hex, 0x7, "RNR Retry Count", |f, out| if let Some(r) = req(f) {
        out(uint(r.rnr_retry_count()))
    }),
    ws!("infiniband.cm.req.maxcmretr", U8, Hex, 0xf0, "Max CM Retries", |f, out| if let Some(r) = req(f) {
        out(uint(r.max_cm_retries()))
    }),
    ws!("infiniband.cm.req.srq", U8, Hex, 0x8, "SRQ", |f, out| if let Some(r) = req(f) {
        out(uint(r.srq()))
    }),
    // tshark 4.0 shows the GIDs of a request carried over IPv4 as IPv4 addresses (their last
    // four bytes), and those carried over IPv6 as IPv6 addresses
    ws!("infiniband.cm.req.prim_localgid", Ipv6, None, 0, "Primary Local Port GID", |f, out| if let Some(r) =
        req_over_ipv6(f)
    {
        out(Value::Ipv6(r.primary_local_gid()))
    }),
    ws!("infiniband.cm.req.prim_remotegid", Ipv6, None, 0, "Primary Remote Port GID", |f, out| if let Some(r) =
        req_over_ipv6(f)
    {
        out(Value::Ipv6(r.primary_remote_gid()))
    }),
    ws!("infiniband.cm.req.prim_localgid_ipv4", Ipv4, None, 0, "Primary Local Port GID", |f, out| if let Some(r) =
        req_over_ipv4(f)
    {
        out(Value::Ipv4(gid_ipv4(r.primary_local_gid())))
    }),
    ws!("infiniband.cm.req.prim_remotegid_ipv4", Ipv4, None, 0, "Primary Remote Port GID", |f, out| if let Some(r) =
        req_over_ipv4(f)
    {
        out(Value::Ipv4(gid_ipv4(r.primary_remote_gid())))
    }),
    ws!("infiniband.cm.req.prim_flowlabel", U32, Hex, 0xffff_f000, "Primary Flow Label", |f, out| if let Some(r) =
        req(f)
    {
        out(uint(r.primary_flow_label()))
    }),
    ws!("infiniband.cm.req.prim_tfcclass", U8, Hex, 0, "Primary Traffic Class", |f, out| if let Some(r) = req(f) {
        out(uint(r.primary_traffic_class()))
    }),
    ws!("infiniband.cm.req.prim_hoplim", U8, Hex, 0, "Primary Hop Limit", |f, out| if let Some(r) = req(f) {
        out(uint(r.primary_hop_limit()))
    }),
    ws!("infiniband.cm.req.prim_sl", U8, Hex, 0xf0, "Primary SL", |f, out| if let Some(r) = req(f) {
        out(uint(r.primary_sl()))
    }),
    named(
        ws!(
            "infiniband.cm.req.prim_localacktout",
            U8,
            Hex,
            0xf8,
            "Primary Local ACK Timeout",
            |f, out| if let Some(r) = req(f) {
                out(uint(r.local_ack_timeout()))
            }
        ),
        meaning::ack_timeout,
    ),
    // ConnectReply
    ws!("infiniband.cm.rep", U32, Hex, 0, "Local Communication ID", |f, out| if let Some(r) = rep(f) {
        out(uint(r.local_comm_id()))
    }),
    ws!("infiniband.cm.rep.remotecommid", U32, Hex, 0, "Remote Communication ID", |f, out| if let Some(r) = rep(f) {
        out(uint(r.remote_comm_id()))
    }),
    ws!("infiniband.cm.rep.localqkey", U32, Hex, 0, "Local Q_Key", |f, out| if let Some(r) = rep(f) {
        out(uint(r.local_qkey()))
    }),
    ws!("infiniband.cm.rep.localqpn", U24, Hex, 0, "Local QPN", |f, out| if let Some(r) = rep(f) {
        out(uint(r.local_qpn()))
    }),
    ws!("infiniband.cm.rep.startpsn", U24, Hex, 0, "Starting PSN", |f, out| if let Some(r) = rep(f) {
        out(uint(r.starting_psn()))
    }),
    ws!("infiniband.cm.rep.respres", U8, Hex, 0, "Responder Resources", |f, out| if let Some(r) = rep(f) {
        out(uint(r.responder_resources()))
    }),
    ws!("infiniband.cm.rep.initdepth", U8, Hex, 0, "Initiator Depth", |f, out| if let Some(r) = rep(f) {
        out(uint(r.initiator_depth()))
    }),
    ws!("infiniband.cm.rep.tgtackdelay", U8, Hex, 0xf8, "Target ACK Delay", |f, out| if let Some(r) = rep(f) {
        out(uint(r.target_ack_delay()))
    }),
    ws!("infiniband.cm.rep.rnrretrcount", U8, Hex, 0xe0, "RNR Retry Count", |f, out| if let Some(r) = rep(f) {
        out(uint(r.rnr_retry_count()))
    }),
    ws!("infiniband.cm.rep.srq", U8, Hex, 0x10, "SRQ", |f, out| if let Some(r) = rep(f) {
        out(uint(r.srq()))
    }),
    ws!("infiniband.cm.rep.localcaguid", U64, Hex, 0, "Local CA GUID", |f, out| if let Some(r) = rep(f) {
        out(uint(r.local_ca_guid()))
    }),
    // ReadyToUse, ConnectReject, DisconnectRequest, DisconnectReply
    ws!("infiniband.cm.rtu.localcommid", U32, Hex, 0, "Local Communication ID", |f, out| cm_ids(f, Cm::Rtu, true, out)),
    ws!("infiniband.cm.rtu.remotecommid", U32, Hex, 0, "Remote Communication ID", |f, out| cm_ids(
        f,
        Cm::Rtu,
        false,
        out
    )),
    ws!("infiniband.cm.rej.localcommid", U32, Hex, 0, "Local Communication ID", |f, out| cm_ids(f, Cm::Rej, true, out)),
    ws!("infiniband.cm.rej.remotecommid", U32, Hex, 0, "Remote Communication ID", |f, out| cm_ids(
        f,
        Cm::Rej,
        false,
        out
    )),
    ws!("infiniband.cm.rej.msgrej", U8, Hex, 0xc0, "Message REJected", |f, out| if let Some(CmMessage::Rej(r)) =
        f.cm().map(|m| &m.message)
    {
        out(uint(r.message_rejected()))
    }),
    ws!("infiniband.cm.rej.reason", U16, Hex, 0, "Reason", |f, out| if let Some(CmMessage::Rej(r)) =
        f.cm().map(|m| &m.message)
    {
        out(uint(r.reason()))
    }),
    ws!("infiniband.cm.dreq.localcommid", U32, Hex, 0, "Local Communication ID", |f, out| cm_ids(
        f,
        Cm::Dreq,
        true,
        out
    )),
    ws!("infiniband.cm.dreq.remotecommid", U32, Hex, 0, "Remote Communication ID", |f, out| cm_ids(
        f,
        Cm::Dreq,
        false,
        out
    )),
    // Wireshark registers the DisconnectRequest's remote QPN under the request's name
    ws!("infiniband.cm.req.remoteqpneecn", U24, Hex, 0, "Remote QPN/EECN", |f, out| if let Some(CmMessage::Dreq(r)) =
        f.cm().map(|m| &m.message)
    {
        out(uint(r.remote_qpn()))
    }),
    ws!("infiniband.cm.drsp.localcommid", U32, Hex, 0, "Local Communication ID", |f, out| cm_ids(
        f,
        Cm::Drep,
        true,
        out
    )),
    ws!("infiniband.cm.drsp.remotecommid", U32, Hex, 0, "Remote Communication ID", |f, out| cm_ids(
        f,
        Cm::Drep,
        false,
        out
    )),
];
