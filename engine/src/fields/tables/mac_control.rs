//! MAC control: 802.3x PAUSE and PFC.

use rocescope_parsers::mac_control::MacControl;

use super::declare::*;
use crate::decode::Body;
use crate::fields::FieldType::Protocol;
use crate::fields::names::meaning;
use crate::fields::{Field, Frame, Value, named};

/// The PFC frame, when the frame is one.
pub(super) fn pfc(f: &Frame<'_, '_>) -> Option<rocescope_parsers::mac_control::Pfc> {
    match &f.packet.body {
        Body::MacControl(MacControl::Pfc(pfc)) => Some(*pfc),
        _ => None,
    }
}

fn mac_control(f: &Frame<'_, '_>) -> Option<MacControl> {
    match &f.packet.body {
        Body::MacControl(m) => Some(*m),
        _ => None,
    }
}

/// PFC class `c`: is it enabled?
fn pfc_enabled<'a>(f: &Frame<'_, 'a>, c: u8, out: &mut dyn FnMut(Value<'a>)) {
    if let Some(p) = pfc(f) {
        out(Value::Bool(p.enabled(c)))
    }
}

/// PFC class `c`: its pause time in quanta.
fn pfc_time<'a>(f: &Frame<'_, 'a>, c: usize, out: &mut dyn FnMut(Value<'a>)) {
    if let Some(p) = pfc(f) {
        out(uint(p.quanta.get(c).copied().unwrap_or(0)))
    }
}

pub static FIELDS: &[Field] = &[
    // MAC control: PAUSE and PFC
    ws!("macc", Protocol, None, 0, "MAC Control", |f, out| if mac_control(f).is_some() {
        out(ITEM)
    }),
    named(
        ws!("macc.opcode", U16, Hex, 0, "Opcode", |f, out| match mac_control(f) {
            Some(MacControl::Pause { .. }) => out(uint(1u8)),
            Some(MacControl::Pfc(_)) => out(uint(0x0101u16)),
            Some(MacControl::Other { opcode }) => out(uint(opcode)),
            None => {}
        }),
        meaning::mac_control_opcode,
    ),
    ws!("macc.pause_time", U16, Dec, 0, "pause_time", |f, out| if let Some(MacControl::Pause { quanta }) =
        mac_control(f)
    {
        out(uint(quanta))
    }),
    ws!("macc.cbfc.enbv", U16, Hex, 0, "CBFC Class Enable Vector", |f, out| if let Some(p) = pfc(f) {
        out(uint(p.class_enable))
    }),
    ws!("macc.cbfc.enbv.c0", BOOL16, None, 0x1, "C0", |f, out| pfc_enabled(f, 0, out)),
    ws!("macc.cbfc.enbv.c1", BOOL16, None, 0x2, "C1", |f, out| pfc_enabled(f, 1, out)),
    ws!("macc.cbfc.enbv.c2", BOOL16, None, 0x4, "C2", |f, out| pfc_enabled(f, 2, out)),
    ws!("macc.cbfc.enbv.c3", BOOL16, None, 0x8, "C3", |f, out| pfc_enabled(f, 3, out)),
    ws!("macc.cbfc.enbv.c4", BOOL16, None, 0x10, "C4", |f, out| pfc_enabled(f, 4, out)),
    ws!("macc.cbfc.enbv.c5", BOOL16, None, 0x20, "C5", |f, out| pfc_enabled(f, 5, out)),
    ws!("macc.cbfc.enbv.c6", BOOL16, None, 0x40, "C6", |f, out| pfc_enabled(f, 6, out)),
    ws!("macc.cbfc.enbv.c7", BOOL16, None, 0x80, "C7", |f, out| pfc_enabled(f, 7, out)),
    ws!("macc.cbfc.pause_time.c0", U16, Dec, 0, "C0", |f, out| pfc_time(f, 0, out)),
    ws!("macc.cbfc.pause_time.c1", U16, Dec, 0, "C1", |f, out| pfc_time(f, 1, out)),
    ws!("macc.cbfc.pause_time.c2", U16, Dec, 0, "C2", |f, out| pfc_time(f, 2, out)),
    ws!("macc.cbfc.pause_time.c3", U16, Dec, 0, "C3", |f, out| pfc_time(f, 3, out)),
    ws!("macc.cbfc.pause_time.c4", U16, Dec, 0, "C4", |f, out| pfc_time(f, 4, out)),
    ws!("macc.cbfc.pause_time.c5", U16, Dec, 0, "C5", |f, out| pfc_time(f, 5, out)),
    ws!("macc.cbfc.pause_time.c6", U16, Dec, 0, "C6", |f, out| pfc_time(f, 6, out)),
    ws!("macc.cbfc.pause_time.c7", U16, Dec, 0, "C7", |f, out| pfc_time(f, 7, out)),
];
