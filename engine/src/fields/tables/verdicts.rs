//! What decoding and the analysis concluded about a frame: malformed, the flow, the sequence class.

use super::declare::*;
use crate::analyze::seq_class::SeqClass;
use crate::decode::Body;
use crate::fields::FieldType::{self};
use crate::fields::{Field, Frame, Value};

/// The sequence class the analysis gave the frame.
fn seq_class(f: &Frame<'_, '_>) -> Option<SeqClass> {
    f.verdict.and_then(|v| v.seq)
}

pub static FIELDS: &[Field] = &[
    own!(
        "rocescope.malformed",
        FieldType::String,
        None,
        "Malformed",
        "present on malformed frames: the layer whose decoding failed and why (\"bth: truncated, needs 12 bytes, 7 available\")",
        |f, out| if let Body::Malformed(m) = &f.packet.body {
            out(Value::Error(m.error))
        }
    ),
    own!(
        "rocescope.malformed.layer",
        FieldType::String,
        None,
        "Malformed at layer",
        "the layer whose decoding failed (bth, ipv4, udp, ext_header, …)",
        |f, out| if let Body::Malformed(m) = &f.packet.body {
            out(Value::Str(m.error.layer.name()))
        }
    ),
    own!("rocescope.analysis.flow", U32, Dec, "Flow", "the flow id of the analysis report", |f, out| if let Some(id) =
        f.verdict.and_then(|v| v.flow)
    {
        out(uint(id.get()))
    }),
    own!(
        "rocescope.analysis.seq_class",
        FieldType::String,
        None,
        "Sequence class",
        "first, in_order, gap, ahead, late_arrival or retransmission",
        |f, out| if let Some(c) = seq_class(f) {
            out(Value::Str(c.name()))
        }
    ),
    own!("rocescope.analysis.gap", BOOL, None, "Gap", "the first packet after PSNs that never arrived", |f, out| {
        if let Some(SeqClass::Gap { .. }) = seq_class(f) {
            out(Value::Bool(true))
        }
    }),
    own!(
        "rocescope.analysis.missing_psns",
        U32,
        Dec,
        "Missing PSNs",
        "PSNs missing before this packet (late arrivals excluded; those only the capture missed included)",
        |f, out| if let Some(SeqClass::Gap { missing }) = seq_class(f) {
            out(uint(missing))
        }
    ),
    own!(
        "rocescope.analysis.capture_missed",
        U32,
        Dec,
        "PSNs the capture missed",
        "of the PSNs missing before this packet, those a later ACK shows the responder received (known when the gap settles)",
        |f, out| if let Some(n) = f.verdict.map(|v| v.capture_missed).filter(|&n| n > 0) {
            out(uint(n))
        }
    ),
    own!(
        "rocescope.analysis.retransmission",
        BOOL,
        None,
        "Retransmission",
        "a PSN seen before, sent again",
        |f, out| if seq_class(f) == Some(SeqClass::Retransmission) {
            out(Value::Bool(true))
        }
    ),
    own!(
        "rocescope.analysis.late_arrival",
        BOOL,
        None,
        "Late arrival",
        "a skipped PSN that arrived late (reordering), not a resend",
        |f, out| if seq_class(f) == Some(SeqClass::LateArrival) {
            out(Value::Bool(true))
        }
    ),
    own!(
        "rocescope.analysis.ahead",
        BOOL,
        None,
        "Ahead of late arrivals",
        "the packet skipped PSNs that all arrived late: a reorder event",
        |f, out| if seq_class(f) == Some(SeqClass::Ahead) {
            out(Value::Bool(true))
        }
    ),
    own!(
        "rocescope.analysis.lost_before_tap",
        BOOL,
        None,
        "Lost before the tap",
        "a UET PSN whose first appearance is a resend (RETX): the original never reached the tap",
        |f, out| if f.verdict.is_some_and(|v| v.lost_before_tap) {
            out(Value::Bool(true))
        }
    ),
    own!(
        "rocescope.analysis.mirror_duplicate",
        BOOL,
        None,
        "Mirror duplicate",
        "a second copy of a packet seen at another tap or by a doubled mirror",
        |f, out| if f.verdict.is_some_and(|v| v.mirror_duplicate) {
            out(Value::Bool(true))
        }
    ),
];
