//! Where a field's value lies in the frame's bytes, for a packet-bytes pane's highlighting.
//!
//! The registry says how to read a value, not where it is; the parsers know where. So the
//! position is found from the parsers themselves, by flipping each bit of the field's layer in
//! a copy of the frame and decoding the copy again. A byte holds the field when some flip of it
//! changes the field's value while the layers before keep their kinds and starts and the
//! field's layer its kind and start; bytes whose flips leave the layer's end where it was are
//! preferred (a flip of IPv4's header length moves the end, and is taken only where nothing
//! else is found). So a flip that changes what the rest of the frame is, like an opcode, is
//! not taken for another field. A bit field is widened to its container, as Wireshark shows
//! it. Fields whose every other value makes their layer another (versions, next protocols)
//! are declared ([`SELECTORS`]). A layer longer than [`PROBED`] bytes (a payload) is not
//! probed: its fields take the whole layer.

use std::ops::Range;

use super::{Field, FieldType, Frame, Layer};
use crate::capture::Record;
use crate::decode::Decoder;

/// The longest layer whose bytes are probed one bit at a time (a CM MAD's 232 bytes are).
pub const PROBED: usize = 512;

/// The layers of a frame with their bytes, in wire order.
fn layers_of(frame: &Frame<'_, '_>) -> Vec<(Layer, Range<usize>)> {
    let mut layers = Vec::new();
    frame.layers(&mut |layer, span| layers.push((layer, span)));
    layers
}

/// Where the frame of `record` holds the `occurrence`-th value of `field`, which is shown in
/// the `occurrence`-th `layer` of its kind: the bytes from the first to the last byte found
/// (see the module's note); `None` when the frame has no such value, or no byte holds it.
pub fn field_bytes(
    decoder: &Decoder,
    record: &Record<'_>,
    field: &Field,
    layer: Layer,
    occurrence: usize,
) -> Option<Range<usize>> {
    // the frame's own fields (its number, lengths, times) are of the record, not of its bytes
    if layer == Layer::Frame {
        return None;
    }
    let packet = decoder.decode(record);
    let frame = Frame::alone(1, &packet);
    let value = field.nth(&frame, occurrence)?;
    let layers = layers_of(&frame);
    let at = layers.iter().enumerate().filter(|(_, (l, _))| *l == layer).nth(occurrence)?.0;
    let len = packet.data.len();
    let span = layers[at].1.start.min(len)..layers[at].1.end.min(len);
    if span.len() > PROBED {
        return Some(span);
    }
    if let Some((_, place, len)) = SELECTORS.iter().find(|(name, ..)| *name == field.name) {
        let start = match *place {
            In::Start(at) => span.start + at,
            In::End(before) => span.end.saturating_sub(before).max(span.start),
        };
        return Some(start.min(span.end)..(start + len).min(span.end));
    }
    let mut copy = record.data.to_vec();
    // the frame's bytes start after a pseudo-header (an ERF record's), which positions leave out
    let base = (packet.data.as_ptr() as usize).wrapping_sub(record.data.as_ptr() as usize).min(copy.len());
    // the bytes whose flips change the value, the layer keeping its place (or only its kind)
    let (mut in_place, mut moved) = (Vec::new(), Vec::new());
    for byte in span {
        let Some(flip) = copy.get(base + byte).map(|_| base + byte) else { continue };
        for bit in 0..8 {
            copy[flip] ^= 1 << bit;
            let flipped = Record { data: &copy, ..*record };
            match probe(decoder, &flipped, &layers[..=at], |probed| {
                field.nth(probed, occurrence).is_some_and(|v| v != value)
            }) {
                Probed::Changed { in_place: true } => in_place.push(byte),
                Probed::Changed { in_place: false } => moved.push(byte),
                Probed::Same => {}
            }
            copy[flip] ^= 1 << bit;
        }
    }
    let found = if in_place.is_empty() { moved } else { in_place };
    let found = *found.first()?..*found.last()? + 1;
    Some(container(field, found, len))
}

/// Where a declared field starts in its layer: this many bytes from its start, or before its
/// end.
enum In {
    Start(usize),
    End(usize),
}

/// Fields whose every other value makes their layer another (a version, a next protocol), or
/// no layer at all (a trailer found by a plausible time, or by where its flags say it starts):
/// no flip shows them, so their place in their layer is declared: name, place, length.
const SELECTORS: &[(&str, In, usize)] = &[
    ("ip.version", In::Start(0), 1),
    ("ipv6.version", In::Start(0), 1),
    ("avsp.sub_type", In::Start(0), 2),
    ("avsp.ver", In::Start(2), 2),
    ("infiniband.grh.ipver", In::Start(0), 1),
    ("infiniband.grh.nxthdr", In::Start(6), 1),
    ("gre.proto", In::Start(2), 2),
    ("erspan.version", In::Start(0), 2),
    ("macc.opcode", In::Start(0), 2),
    ("infiniband.mad.mgmtclass", In::Start(1), 1),
    // a Metamako trailer ends with its time, flags, device and port
    ("metamako.time", In::End(12), 8),
    ("metamako.flags.has_extensions", In::End(4), 1),
];

/// A bit field's bytes, `found`, widened to its container as Wireshark shows it (the VLAN
/// priority's 3 bits take the 2 bytes of the TCI).
fn container(field: &Field, found: Range<usize>, frame_len: usize) -> Range<usize> {
    let bytes = match field.ty {
        FieldType::Uint(bits) | FieldType::Bool(bits) => usize::from(bits / 8),
        _ => return found,
    };
    if field.mask == 0 {
        return found;
    }
    // the first byte of the container the mask touches
    let first = (0..bytes).find(|i| (field.mask >> (8 * (bytes - 1 - i))) & 0xff != 0).unwrap_or(0);
    let start = found.start.saturating_sub(first);
    start..(start + bytes).max(found.end).min(frame_len)
}

/// What a flipped bit did.
enum Probed {
    /// The layers before the field's kept their kinds and starts, the field's layer its kind
    /// and start (and its end too, or not), and the value changed.
    Changed {
        in_place: bool,
    },
    Same,
}

/// Decodes the flipped copy `record` and says what the flip did, given the original's layers
/// `through` the field's and whether `changed` holds of the copy's value.
fn probe(
    decoder: &Decoder,
    record: &Record<'_>,
    through: &[(Layer, Range<usize>)],
    changed: impl Fn(&Frame<'_, '_>) -> bool,
) -> Probed {
    let packet = decoder.decode(record);
    let frame = Frame::alone(1, &packet);
    let layers = layers_of(&frame);
    let at = through.len() - 1;
    let (layer, span) = &through[at];
    let Some(now) = layers.iter().position(|(l, s)| l == layer && s.start == span.start) else {
        return Probed::Same;
    };
    // the layers before keep their kinds and starts (a tunnel header may end elsewhere when
    // the header after it changes)
    let kept = |(l, s): &(Layer, Range<usize>), (k, t): &(Layer, Range<usize>)| l == k && s.start == t.start;
    if now != at || !layers.iter().zip(&through[..at]).all(|(a, b)| kept(a, b)) || !changed(&frame) {
        return Probed::Same;
    }
    Probed::Changed { in_place: layers[now].1 == *span }
}
