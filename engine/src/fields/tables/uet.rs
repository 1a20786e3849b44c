//! The fields of Ultra Ethernet Transport packets, under Wireshark's `uet.*` names
//! (`epan/dissectors/packet-uet.c`; ../shared/uet-facts.md §8), read from the layouts
//! docs/decoding.md describes. Masked fields hold their shifted value, as elsewhere.

use rocescope_parsers::uet::ses::{Extension, RequestFormat, ResponseFormat};
use rocescope_parsers::uet::{Pds, SesRequest, SesResponse, Tss};

use super::declare::*;
use crate::decode::UetCrc;
use crate::fields::FieldType::{self, Bytes, Protocol};
use crate::fields::{Base, Field, Frame, Shown, Value, named};

/// A field of the PDS header: `$get` reads an `Option` of an integer from it.
macro_rules! pds {
    ($name:literal, $ty:expr, $base:ident, $mask:expr, $label:literal, $get:expr) => {
        ws!($name, $ty, $base, $mask, $label, |f, out| if let Some(v) = pds(f).and_then($get) {
            out(uint(v))
        })
    };
}

/// A flag bit of the PDS header, where the packet's type has it.
macro_rules! pds_flag {
    ($name:literal, $mask:expr, $label:literal, $has:expr) => {
        ws!($name, BOOL, None, $mask, $label, |f, out| if let Some(p) = pds(f).filter($has) {
            out(Value::Bool(p.flags() & $mask != 0))
        })
    };
}

/// A field of a request header of `$format`: `$get` reads an integer.
macro_rules! request {
    ($format:ident, $name:literal, $ty:expr, $base:ident, $mask:expr, $label:literal, $get:expr) => {
        ws!($name, $ty, $base, $mask, $label, |f, out| if let Some(v) = request(f, RequestFormat::$format).map($get) {
            out(uint(v))
        })
    };
}

/// A field of a request header of `$format` it may lack: `$get` reads an `Option`.
macro_rules! request_maybe {
    ($format:ident, $name:literal, $ty:expr, $base:ident, $mask:expr, $label:literal, $get:expr) => {
        ws!($name, $ty, $base, $mask, $label, |f, out| if let Some(v) =
            request(f, RequestFormat::$format).and_then($get)
        {
            out(uint(v))
        })
    };
}

/// A request flag of `$format`.
macro_rules! request_flag {
    ($format:ident, $name:literal, $mask:expr, $label:literal) => {
        ws!($name, BOOL, None, $mask, $label, |f, out| if let Some(r) = request(f, RequestFormat::$format) {
            out(Value::Bool(r.flags() & $mask != 0))
        })
    };
}

/// A field of a response header: `$get` reads an `Option` of an integer.
macro_rules! response {
    ($name:literal, $ty:expr, $base:ident, $mask:expr, $label:literal, $get:expr) => {
        ws!($name, $ty, $base, $mask, $label, |f, out| if let Some(v) = response(f).and_then($get) {
            out(uint(v))
        })
    };
}

/// A field of the atomic extension, with (`true`) or without compare and swap operands.
macro_rules! atomic {
    ($name:literal, $label:literal, $operands:expr, $get:expr) => {
        ws!($name, U8, Dec, 0, $label, |f, out| if let Some(v) = atomic(f, $operands).and_then($get) {
            out(uint(v))
        })
    };
}

/// A field of the rendezvous extension: `$get` reads an `Option` of an integer.
macro_rules! rendezvous {
    ($name:literal, $ty:expr, $base:ident, $mask:expr, $label:literal, $get:expr) => {
        ws!($name, $ty, $base, $mask, $label, |f, out| if let Some(v) = rendezvous(f).and_then($get) {
            out(uint(v))
        })
    };
}

fn pds<'a>(f: &Frame<'_, 'a>) -> Option<Pds<'a>> {
    f.packet.uet()?.pds()
}

fn tss<'a>(f: &Frame<'_, 'a>) -> Option<Tss<'a>> {
    f.packet.uet()?.tss()
}

fn request<'a>(f: &Frame<'_, 'a>, format: RequestFormat) -> Option<SesRequest<'a>> {
    match f.packet.uet()?.ses()? {
        rocescope_parsers::uet::Ses::Request(r) if r.format() == format => Some(r),
        _ => None,
    }
}

fn response<'a>(f: &Frame<'_, 'a>) -> Option<SesResponse<'a>> {
    match f.packet.uet()?.ses()? {
        rocescope_parsers::uet::Ses::Response(r) => Some(r),
        rocescope_parsers::uet::Ses::Request(_) => None,
    }
}

/// A standard request's extension: the atomic one without compare and swap operands, or the
/// one with them (Wireshark names the two apart).
fn atomic<'a>(f: &Frame<'_, 'a>, with_operands: bool) -> Option<Extension<'a>> {
    let e = request(f, RequestFormat::Standard)?.extension()?;
    (e.atomic_opcode().is_some() && e.compare_swap().is_some() == with_operands).then_some(e)
}

fn rendezvous<'a>(f: &Frame<'_, 'a>) -> Option<Extension<'a>> {
    request(f, RequestFormat::Standard)?.extension().filter(|e| e.eager_length().is_some())
}

/// A deferrable send's restart tokens sit in the buffer offset's place.
fn deferrable(r: &SesRequest<'_>) -> bool {
    matches!(r.opcode(), 0x08 | 0x0B)
}

/// What the numbered values mean, by the names the implementations agree on.
mod meaning {
    use rocescope_parsers::uet::names;

    pub fn pds_type(out: &mut String, v: u64) {
        out.push_str(names::pds_type(v as u8));
    }

    /// A meaning function per name table: the value's name, or nothing for a value not assigned.
    macro_rules! meanings {
        ($($table:ident),*) => {
            $(pub fn $table(out: &mut String, v: u64) {
                out.push_str(names::$table(v as u8).unwrap_or(""));
            })*
        };
    }

    meanings!(
        next_header,
        control_type,
        nack_code,
        request_opcode,
        response_opcode,
        return_code,
        amo_opcode,
        amo_datatype
    );
}

fn is_request_or_control(p: &Pds<'_>) -> bool {
    p.psn().is_some()
}

fn is_ack(p: &Pds<'_>) -> bool {
    p.pds_type().is_ack()
}

fn is_nack(p: &Pds<'_>) -> bool {
    p.pds_type().is_nack()
}

fn marks_ecn(p: &Pds<'_>) -> bool {
    is_ack(p) || is_nack(p) || p.pds_type() == rocescope_parsers::uet::PdsType::RudiResponse
}

fn not_uud(p: &Pds<'_>) -> bool {
    p.pds_type() != rocescope_parsers::uet::PdsType::UudRequest
}

pub static FIELDS: &[Field] = &[
    ws!("uet", Protocol, None, 0, "Ultra Ethernet Transport", |f, out| if f.packet.uet().is_some() {
        out(ITEM)
    }),
    ws!(
        "uet.pds.entropy",
        U16,
        DecHex,
        0,
        "Entropy",
        |f, out| if let Some(e) = f.packet.uet().and_then(|u| u.entropy) {
            out(uint(e.entropy()))
        }
    ),
    ws!("uet.pds.entropy.rsvd", U16, Hex, 0, "Reserved (entropy)", |f, out| if let Some(e) =
        f.packet.uet().and_then(|u| u.entropy)
    {
        out(uint(e.reserved()))
    }),
    // TSS, as the reference provider lays it out (docs/decoding.md)
    ws!("uet.tss", Bytes, None, 0, "TSS", |f, out| if let Some(t) = tss(f) {
        out(Value::Bytes(t.as_bytes()))
    }),
    ws!("uet.tss.type", U32, Dec, 0xf800_0000, "Type", |f, out| if let Some(t) = tss(f) {
        out(uint(t.tss_type()))
    }),
    ws!("uet.tss.sp", BOOL, None, 0x0400_0000, "SP", |f, out| if let Some(t) = tss(f) {
        out(Value::Bool(t.sp()))
    }),
    ws!("uet.tss.an", BOOL, None, 0x0100_0000, "AN", |f, out| if let Some(t) = tss(f) {
        out(Value::Bool(t.an()))
    }),
    ws!("uet.tss.sdi", U32, Dec, 0x00ff_ffff, "SDI", |f, out| if let Some(t) = tss(f) {
        out(uint(t.sdi()))
    }),
    ws!("uet.tss.ssi", U32, Dec, 0, "SSI", |f, out| if let Some(v) = tss(f).and_then(|t| t.ssi()) {
        out(uint(v))
    }),
    ws!("uet.tss.tsc", U64, Hex, 0, "TSC", |f, out| if let Some(t) = tss(f) {
        out(uint(t.tsc()))
    }),
    // PDS
    ws!("uet.pds", Bytes, None, 0, "PDS Layer", |f, out| if let Some(p) = pds(f) {
        out(Value::Bytes(p.as_bytes()))
    }),
    named(pds!("uet.pds.type", U16, Dec, 0xf800, "Type", |p| Some(p.pds_type() as u8)), meaning::pds_type),
    named(
        pds!("uet.pds.nh", U16, Dec, 0x0780, "Next Hdr", |p| p.ctl_type().is_none().then(|| p.next_header())),
        meaning::next_header,
    ),
    named(pds!("uet.pds.ctl_type", U16, Dec, 0x0780, "Ctl Type", |p| p.ctl_type()), meaning::control_type),
    pds!("uet.pds.flags", U16, Hex, 0x007f, "Flags", |p| Some(p.flags())),
    pds_flag!("uet.pds.flags.m", 0x20, "ECN Marked (M)", marks_ecn),
    pds_flag!("uet.pds.flags.retx", 0x10, "Retransmitted (RETX)", not_uud),
    pds_flag!("uet.pds.flags.ar", 0x08, "ACK Request (AR)", is_request_or_control),
    pds_flag!("uet.pds.flags.p", 0x08, "Probe Packet (P)", is_ack),
    pds_flag!("uet.pds.flags.nt", 0x08, "NACK Type (NT)", is_nack),
    pds_flag!("uet.pds.flags.syn", 0x04, "New PDC (SYN)", is_request_or_control),
    pds!("uet.pds.flags.req", U8, Dec, 0x6, "Request (REQ)", |p| p.ack_request()),
    pds!("uet.pds.clear_psn", U32, Dec, 0, "Clear PSN", |p| p.clear_psn()),
    pds!("uet.pds.psn", U32, Dec, 0, "PSN", |p| p.psn()),
    pds!("uet.pds.ack_psn", U32, Dec, 0, "ACK PSN", |p| p.ack_psn()),
    pds!("uet.pds.cack_psn", U32, Dec, 0, "Cumulative ACK PSN", |p| p.cack_psn()),
    pds!("uet.pds.spdcid", U16, Dec, 0, "Source PDC ID", |p| p.spdcid()),
    pds!("uet.pds.dpdcid", U16, Dec, 0, "Destination PDC ID", |p| p.dpdcid()),
    pds!("uet.pds.pdc_mode", U8, Dec, 0, "PDC Mode", |p| p.pdc_info()),
    pds!("uet.pds.psn_offset", U16, Dec, 0x0fff, "PSN offset", |p| p.psn_offset()),
    pds!("uet.pds.start_psn", U32, Dec, 0, "Start PSN", |p| p.start_psn()),
    pds!("uet.pds.cc_state.ccc_id", U8, Dec, 0, "CCC ID", |p| p.ccc_id()),
    pds!("uet.pds.cc_state.credit_target", U24, Hex, 0, "Credit Target", |p| p.credit_target()),
    pds!("uet.pds.ctrl_probe_opaque", U16, Hex, 0, "Probe Opaque", |p| p.probe_opaque()),
    pds!("uet.pds.ctrl_payload", U32, Hex, 0, "Payload", |p| p.ctl_type().and(p.payload())),
    named(pds!("uet.pds.nack.code", U8, Dec, 0, "NACK Code", |p| p.nack_code()), meaning::nack_code),
    pds!("uet.pds.nack.vendor_code", U8, Dec, 0, "Vendor Code", |p| p.nack_vendor_code()),
    pds!("uet.pds.nack.psn", U32, Dec, 0, "NACK PSN", |p| p.nack_psn()),
    pds!("uet.pds.nack.max_recv_psn_plus_1", U32, Dec, 0, "Payload (Max Recvd PSN + 1)", |p| p
        .nack_code()
        .and(p.payload())),
    pds!("uet.pds.ack.cc_type", U8, Dec, 0xf0, "CC Type", |p| p.cc_type()),
    pds!("uet.pds.ack.mpr", U8, Dec, 0, "Maximum PSN range (MPR)", |p| p.mpr()),
    pds!("uet.pds.ack.sack_offset", U16, Dec, 0, "SACK Offset", |p| p.sack_psn_offset().map(|o| o as u16)),
    pds!("uet.pds.ack.sack_bitmap", U64, Hex, 0, "SACK BITMAP", |p| p.sack_bitmap()),
    ws!("uet.pds.ack.cc_state", Bytes, None, 0, "CC State", |f, out| if let Some(b) =
        pds(f).filter(|p| p.cc_state().is_some()).and_then(|p| p.as_bytes().get(24..32))
    {
        out(Value::Bytes(b))
    }),
    ws!("uet.pds.ack.ccx_state", Bytes, None, 0, "CCX State", |f, out| if let Some(b) =
        pds(f).and_then(|p| p.ccx_state())
    {
        out(Value::Bytes(b))
    }),
    pds!("uet.pds.ack.cc_state.service_time", U16, Dec, 0, "Service Time", |p| p.nscc().map(|n| n.service_time)),
    ws!("uet.pds.ack.cc_state.rc", BOOL, None, 0x80, "Restore Cwnd", |f, out| if let Some(n) =
        pds(f).and_then(|p| p.nscc())
    {
        out(Value::Bool(n.restore_cwnd))
    }),
    pds!("uet.pds.ack.cc_state.rcv_cwnd_pend", U8, Dec, 0x7f, "Cwnd Penalty", |p| p.nscc().map(|n| n.rcv_cwnd_pend)),
    pds!("uet.pds.ack.cc_state.rcvd_bytes", U24, Dec, 0, "Received Byte Count", |p| p.nscc().map(|n| n.rcvd_bytes)),
    pds!("uet.pds.ack.cc_state.credit", U24, Dec, 0, "Credit", |p| p.credit().map(|c| c.0)),
    pds!("uet.pds.ack.cc_state.ooo_count", U16, Dec, 0, "Out Of Order Count", |p| p
        .nscc()
        .map(|n| n.ooo_count)
        .or(p.credit().map(|c| c.1))),
    pds!("uet.pds.rudi.pkt_id", U32, Dec, 0, "RUDI ID", |p| p.packet_id()),
    // SES
    ws!("uet.ses", Bytes, None, 0, "SES", |f, out| if let Some(s) = f.packet.uet().and_then(|u| u.ses()) {
        out(Value::Bytes(s.as_bytes()))
    }),
    named(
        ws!("uet.ses.std.opcode", U8, Dec, 0x3f, "Opcode", |f, out| if let Some(r) =
            f.packet.uet().and_then(|u| u.ses()).and_then(|s| match s {
                rocescope_parsers::uet::Ses::Request(r) => Some(r),
                rocescope_parsers::uet::Ses::Response(_) => None,
            }) {
            out(uint(r.opcode()))
        }),
        meaning::request_opcode,
    ),
    request!(Standard, "uet.ses.std.ver", U8, Dec, 0xc0, "Version", |r| r.version()),
    request!(Standard, "uet.ses.std.flags", U8, Hex, 0, "Flags", |r| r.flags()),
    request_flag!(Standard, "uet.ses.std.dc", 0x20, "Delivery Complete (DC)"),
    request_flag!(Standard, "uet.ses.std.ie", 0x10, "Initiator Error (IE)"),
    request_flag!(Standard, "uet.ses.std.rel", 0x08, "Relative"),
    request_flag!(Standard, "uet.ses.std.hd", 0x04, "Header Data"),
    request_flag!(Standard, "uet.ses.std.eom", 0x02, "End of Msg(EOM)"),
    request_flag!(Standard, "uet.ses.std.som", 0x01, "Start of Msg(SOM)"),
    request_maybe!(Standard, "uet.ses.std.message_id", U16, Dec, 0, "Message ID", |r| r.message_id()),
    request!(Standard, "uet.ses.std.index_generation", U8, Dec, 0, "Index Generation", |r| r.ri_generation()),
    request!(Standard, "uet.ses.std.job_id", U32, Dec, 0, "Job ID", |r| r.job_id()),
    request!(Standard, "uet.ses.std.pidonfep", U16, Dec, 0x0fff, "PIDonFEP", |r| r.pid_on_fep()),
    request!(Standard, "uet.ses.std.resource_index", U16, Dec, 0x0fff, "Resource Index (RI)", |r| r.resource_index()),
    request_maybe!(Standard, "uet.ses.std.buffer_offset", U64, DecHex, 0, "Buffer Offset", |r| r
        .buffer_offset()
        .filter(|_| !deferrable(&r))),
    request_maybe!(Standard, "uet.ses.std.restart_token", U64, Hex, 0, "Restart Token", |r| r
        .buffer_offset()
        .filter(|_| deferrable(&r))),
    request_maybe!(Standard, "uet.ses.std.initiator", U32, Hex, 0, "Initiator", |r| r.initiator()),
    request_maybe!(Standard, "uet.ses.std.mem_key_match_bits", U64, Hex, 0, "Memory Key/Match Bits", |r| r
        .memory_key()),
    request_maybe!(Standard, "uet.ses.std.header_data", U64, Hex, 0, "Header Data", |r| r.header_data()),
    request_maybe!(Standard, "uet.ses.std.payload_length", U32, Dec, 0x3fff, "Payload Length", |r| r
        .continuation()
        .map(|c| c.0)),
    request_maybe!(Standard, "uet.ses.std.message_offset", U32, Dec, 0, "Message Offset", |r| r
        .continuation()
        .map(|c| c.1)),
    request!(Standard, "uet.ses.std.request_length", U32, Dec, 0, "Request Length", |r| r.request_length()),
    // the extensions of a standard request
    ws!("uet.ses.atomic_op_ext_hdr", Bytes, None, 0, "Atomic Operation Extension Header", |f, out| if let Some(
        Extension::Atomic(b),
    ) =
        atomic(f, false)
    {
        out(Value::Bytes(b))
    }),
    named(
        atomic!("uet.ses.atomic_op_ext_hdr.atomic_opcode", "Atomic Opcode", false, |e| e.atomic_opcode()),
        meaning::amo_opcode,
    ),
    named(
        atomic!("uet.ses.atomic_op_ext_hdr.atomic_data_type", "Atomic Data type", false, |e| e.atomic_datatype()),
        meaning::amo_datatype,
    ),
    atomic!("uet.ses.atomic_op_ext_hdr.sem_ctl", "Semantic Control", false, |e| e.semantic_control()),
    ws!("uet.ses.comp_swap_ext_hdr", Bytes, None, 0, "Compare and Swap Operation Atomic Header", |f, out| if let Some(
        Extension::Atomic(b),
    ) =
        atomic(f, true)
    {
        out(Value::Bytes(b))
    }),
    named(
        atomic!("uet.ses.comp_swap_ext_hdr.atomic_opcode", "Atomic Opcode", true, |e| e.atomic_opcode()),
        meaning::amo_opcode,
    ),
    named(
        atomic!("uet.ses.comp_swap_ext_hdr.atomic_data_type", "Atomic Data type", true, |e| e.atomic_datatype()),
        meaning::amo_datatype,
    ),
    atomic!("uet.ses.comp_swap_ext_hdr.sem_ctl", "Semantic Control", true, |e| e.semantic_control()),
    ws!("uet.ses.comp_swap_ext_hdr.comp_value", Bytes, None, 0, "Compare Value", |f, out| if let Some((c, _)) =
        atomic(f, true).and_then(|e| e.compare_swap())
    {
        out(Value::Bytes(c))
    }),
    ws!("uet.ses.comp_swap_ext_hdr.swap_value", Bytes, None, 0, "Swap Value", |f, out| if let Some((_, s)) =
        atomic(f, true).and_then(|e| e.compare_swap())
    {
        out(Value::Bytes(s))
    }),
    ws!("uet.ses.rendv_ext_hdr", Bytes, None, 0, "Rendezvous Extension Header", |f, out| if let Some(
        Extension::Rendezvous(b),
    ) = rendezvous(f)
    {
        out(Value::Bytes(b))
    }),
    rendezvous!("uet.ses.rendv_ext_hdr.eager_length", U32, Dec, 0, "Eager Length", |e| e.eager_length()),
    rendezvous!("uet.ses.rendv_ext_hdr.read_pid_on_fep", U16, Dec, 0, "Read PIDonFEP", |e| e
        .read_resource()
        .map(|r| r.1)),
    rendezvous!("uet.ses.rendv_ext_hdr.read_resource_index", U16, Dec, 0x0fff, "Read Resource Index", |e| e
        .read_resource()
        .map(|r| r.2)),
    rendezvous!("uet.ses.rendv_ext_hdr.read_offset", U64, Hex, 0, "Read Offset", |e| e.read_offset()),
    rendezvous!("uet.ses.rendv_ext_hdr.read_match_bits", U64, Hex, 0, "Read Match Bits", |e| e.read_memory_key()),
    // small and medium requests
    request!(Small, "uet.ses.small_req.flags", U8, Hex, 0, "Flags", |r| r.flags()),
    request_flag!(Small, "uet.ses.small_req.flags.dc", 0x20, "Delivery Complete (DC)"),
    request_flag!(Small, "uet.ses.small_req.flags.ie", 0x10, "Initiator Error (IE)"),
    request_flag!(Small, "uet.ses.small_req.flags.rel", 0x08, "Relative"),
    request_flag!(Small, "uet.ses.small_req.eom", 0x02, "End of Msg(EOM)"),
    request_flag!(Small, "uet.ses.small_req.som", 0x01, "Start of Msg(SOM)"),
    request!(Small, "uet.ses.small_req.req_length", U16, Dec, 0x3fff, "Request Length", |r| r.request_length()),
    request!(Small, "uet.ses.small_req.index_generation", U8, Dec, 0, "Index Generation", |r| r.ri_generation()),
    request!(Small, "uet.ses.small_req.job_id", U24, Dec, 0, "Job ID", |r| r.job_id()),
    request!(Small, "uet.ses.small_req.pidonfep", U16, Dec, 0x0fff, "PIDonFEP", |r| r.pid_on_fep()),
    request!(Small, "uet.ses.small_req.resource_index", U16, Dec, 0x0fff, "Resource Index", |r| r.resource_index()),
    request_maybe!(Small, "uet.ses.small_req.buffer_offset", U64, DecHex, 0, "Buffer Offset", |r| r.buffer_offset()),
    request!(Medium, "uet.ses.med_req.flags", U8, Hex, 0, "Flags", |r| r.flags()),
    request_flag!(Medium, "uet.ses.med_req.flags.dc", 0x20, "Delivery Complete (DC)"),
    request_flag!(Medium, "uet.ses.med_req.flags.ie", 0x10, "Initiator Error (IE)"),
    request_flag!(Medium, "uet.ses.med_req.flags.rel", 0x08, "Relative"),
    request_flag!(Medium, "uet.ses.med_req.flags.hd", 0x04, "HD"),
    request_flag!(Medium, "uet.ses.med_req.eom", 0x02, "End of Msg(EOM)"),
    request_flag!(Medium, "uet.ses.med_req.som", 0x01, "Start of Msg(SOM)"),
    request!(Medium, "uet.ses.med_req.req_length", U16, Dec, 0x3fff, "Request Length", |r| r.request_length()),
    request!(Medium, "uet.ses.med_req.resource_index_generation", U8, Dec, 0, "Resource Index Generation", |r| r
        .ri_generation()),
    request!(Medium, "uet.ses.med_req.job_id", U24, Dec, 0, "Job ID", |r| r.job_id()),
    request!(Medium, "uet.ses.med_req.pidonfep", U16, Dec, 0x0fff, "PIDonFEP", |r| r.pid_on_fep()),
    request!(Medium, "uet.ses.med_req.resource_index", U16, Dec, 0x0fff, "Resource Index", |r| r.resource_index()),
    request_maybe!(Medium, "uet.ses.med_req.buffer_offset", U64, DecHex, 0, "Buffer Offset", |r| r.buffer_offset()),
    request_maybe!(Medium, "uet.ses.med_req.header_data", U64, DecHex, 0, "Header Data", |r| r.header_data()),
    request_maybe!(Medium, "uet.ses.med_req.initiator", U32, Hex, 0, "Initiator", |r| r.initiator()),
    request_maybe!(Medium, "uet.ses.med_req.mem_key_match_bits", U64, Hex, 0, "Match Bits/Memory Key", |r| r
        .memory_key()),
    // responses
    response!("uet.ses.rsp.list", U8, Dec, 0xc0, "List", |r| Some(r.list())),
    named(response!("uet.ses.rsp.opcode", U8, Dec, 0x3f, "Opcode", |r| Some(r.opcode())), meaning::response_opcode),
    response!("uet.ses.rsp.ver", U8, Dec, 0xc0, "Version", |r| Some(r.version())),
    named(
        response!("uet.ses.rsp.return_code", U8, Dec, 0x3f, "Return Code", |r| Some(r.return_code())),
        meaning::return_code,
    ),
    response!("uet.ses.rsp.message_id", U16, Dec, 0, "Response Message ID", |r| r.message_id()),
    response!("uet.ses.rsp.resource_index_gen", U8, Dec, 0, "Resource Index generation", |r| Some(r.ri_generation())),
    response!("uet.ses.rsp.job_id", U32, Dec, 0, "Job ID", |r| Some(r.job_id())),
    response!("uet.ses.rsp.mod_length", U32, Dec, 0, "Modified Length", |r| r.modified_length()),
    response!("uet.ses.rsp.read_req_message_id", U16, Dec, 0, "Message ID", |r| r.read().map(|d| d.0)),
    response!("uet.ses.rsp.payload_length", U16, Dec, 0x3fff, "Payload Length", |r| r.payload_length()),
    response!("uet.ses.rsp.message_offset", U32, Dec, 0, "Message Offset", |r| r.read().map(|d| d.1)),
    Field {
        name: "rocescope.uet.original_request_psn",
        ty: U32,
        base: Base::Dec,
        mask: 0,
        label: "Original request PSN",
        blurb: "the PSN of the request a small read-data response answers (Wireshark decodes only its first 4 bytes)",
        shown: Shown::Line,
        get: |f, out| {
            if let Some(v) = response(f).and_then(|r| r.original_request_psn()) {
                out(uint(v))
            }
        },
    },
    Field {
        name: "rocescope.uet.response_format",
        ty: FieldType::String,
        base: Base::None,
        mask: 0,
        label: "Response format",
        blurb: "the SES response header next_hdr chose: plain, data or data_small",
        shown: Shown::Line,
        get: |f, out| {
            if let Some(r) = response(f) {
                out(Value::Str(match r.format() {
                    ResponseFormat::Plain => "plain",
                    ResponseFormat::Data => "data",
                    ResponseFormat::DataSmall => "data_small",
                }))
            }
        },
    },
    Field {
        name: "rocescope.uet.crc.status",
        ty: FieldType::String,
        base: Base::None,
        mask: 0,
        label: "CRC32C",
        blurb: "the frame's CRC verdict: ok (the trailer matched a reading of the CRC, in rocescope.uet.crc.variant), bad (it matched none of the four readings, so it is wrong whichever the capture uses) or unchecked (encrypted, cut, no IP header)",
        shown: Shown::Line,
        get: |f, out| {
            if let Some(u) = f.packet.uet() {
                out(Value::Str(u.crc.name()))
            }
        },
    },
    Field {
        name: "rocescope.uet.crc.variant",
        ty: FieldType::String,
        base: Base::None,
        mask: 0,
        label: "CRC32C reading",
        blurb: "the reading of the CRC the trailer matched: crc32c_le, crc32c_be, crc32c_raw_le or crc32c_raw_be (docs/decoding.md)",
        shown: Shown::Line,
        get: |f, out| {
            if let Some(UetCrc::Matched(v)) = f.packet.uet().map(|u| u.crc) {
                out(Value::Str(v.name()))
            }
        },
    },
    Field {
        name: "rocescope.uet.crc.computed",
        ty: U32,
        base: Base::Hex,
        mask: 0,
        label: "CRC32C computed",
        blurb: "the CRC-32C of the covered bytes, where the trailer matched no reading",
        shown: Shown::Line,
        get: |f, out| {
            if let Some(UetCrc::NoVariant { computed, .. }) = f.packet.uet().map(|u| u.crc) {
                out(uint(computed))
            }
        },
    },
    Field {
        name: "rocescope.uet.trailer",
        ty: Bytes,
        base: Base::None,
        mask: 0,
        label: "Trailer",
        blurb: "the CRC32C that ends a packet without TSS, or the AES-GCM tag of an encrypted one; absent when the capture cut the packet",
        shown: Shown::Line,
        get: |f, out| {
            if let Some(t) = f.packet.uet().and_then(|u| u.trailer()) {
                out(Value::Bytes(t))
            }
        },
    },
];
