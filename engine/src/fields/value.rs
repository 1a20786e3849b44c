//! One occurrence of a field, and how tshark 4.0 prints it in `-T fields`: integers in decimal
//! (`BASE_DEC`, `BASE_DEC_HEX`) or as `0x` and hex digits zero-padded to the declared type's
//! width (`BASE_HEX`, `BASE_HEX_DEC`: `infiniband.bth.destqp` is `0x000202`); booleans as 1 or
//! 0; bytes as lower-case hex without separators; MAC addresses with colons; times as seconds
//! with nine decimals; text composed from the frame (tshark's Info column, a protocol's item) as
//! tshark writes it.

use std::fmt::Write as _;
use std::net::{Ipv4Addr, Ipv6Addr};

use rocescope_parsers::ethernet::MacAddr;

use super::names::{write_date, write_seconds};
use super::{Base, Field, FieldType, Frame, info, label};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    Uint(u64),
    Bool(bool),
    Ipv4([u8; 4]),
    Ipv6([u8; 16]),
    Ether([u8; 6]),
    Bytes(&'a [u8]),
    Str(&'a str),
    /// Nanoseconds (since the epoch for an absolute time).
    Time(i64),
    /// A decoding failure, shown as "layer: reason".
    Error(rocescope_parsers::Error),
    /// Text tshark composes from the frame, written from it when shown ([`write_tshark`]):
    /// composing it costs more than any other value, so a field has it only when asked.
    Composed(Composed),
}

/// What composed text a value stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Composed {
    /// tshark's Info column ([`info::write`]).
    Info,
    /// The item of the field's protocol ([`label::write`]): its `occurrence`-th instance in
    /// the frame (0: the outermost).
    Label { occurrence: usize },
}

impl Composed {
    /// Appends the text of `field`, composed from `frame`.
    pub fn write(self, out: &mut String, frame: &Frame<'_, '_>, field: &Field) {
        match self {
            Composed::Info => info::write(out, frame),
            Composed::Label { occurrence } => label::write(out, frame, field, occurrence),
        }
    }
}

impl Value<'_> {
    /// The value as an unsigned integer, for integers and booleans.
    pub fn as_uint(&self) -> Option<u64> {
        match *self {
            Value::Uint(v) => Some(v),
            Value::Bool(b) => Some(u64::from(b)),
            _ => None,
        }
    }
}

/// Appends `value` of `field` in `frame` as tshark's `-T fields` prints it.
pub fn write_tshark(out: &mut String, frame: &Frame<'_, '_>, field: &Field, value: &Value<'_>) {
    match *value {
        Value::Uint(v) => match (field.base, field.ty) {
            (Base::Hex | Base::HexDec, FieldType::Uint(bits)) => {
                let _ = write!(out, "0x{v:0width$x}", width = usize::from(bits.div_ceil(4)));
            }
            _ => {
                let _ = write!(out, "{v}");
            }
        },
        Value::Bool(b) => out.push(if b { '1' } else { '0' }),
        Value::Ipv4(a) => {
            let _ = write!(out, "{}", Ipv4Addr::from(a));
        }
        Value::Ipv6(a) => {
            let _ = write!(out, "{}", Ipv6Addr::from(a));
        }
        Value::Ether(m) => {
            let _ = write!(out, "{}", MacAddr(m));
        }
        Value::Bytes(bytes) => {
            for b in bytes {
                let _ = write!(out, "{b:02x}");
            }
        }
        Value::Str(s) => out.push_str(s),
        Value::Time(ns) if field.ty == FieldType::AbsoluteTime => {
            let _ = write_date(out, ns);
        }
        Value::Time(ns) => {
            let _ = write_seconds(out, ns);
        }
        Value::Error(e) => {
            let _ = write!(out, "{e}");
        }
        Value::Composed(text) => text.write(out, frame, field),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(ty: FieldType, base: Base) -> Field {
        Field { name: "t", ty, base, mask: 0, label: "", blurb: "", shown: crate::fields::Shown::Line, get: |_, _| {} }
    }

    fn shown(ty: FieldType, base: Base, value: Value<'_>) -> String {
        let bytes = [0u8; 60];
        let packet = crate::decode::Decoder::default().decode(&crate::capture::Record::ethernet(&bytes));
        let mut s = String::new();
        write_tshark(&mut s, &Frame::alone(1, &packet), &field(ty, base), &value);
        s
    }

    #[test]
    fn values_print_as_tshark_prints_them() {
        assert_eq!(shown(FieldType::Uint(24), Base::Hex, Value::Uint(0x202)), "0x000202");
        assert_eq!(shown(FieldType::Uint(32), Base::Hex, Value::Uint(0x3879)), "0x00003879");
        assert_eq!(shown(FieldType::Uint(16), Base::HexDec, Value::Uint(0x9a26)), "0x9a26");
        assert_eq!(shown(FieldType::Uint(32), Base::DecHex, Value::Uint(768)), "768");
        assert_eq!(shown(FieldType::Bool(8), Base::None, Value::Bool(true)), "1");
        assert_eq!(shown(FieldType::Bytes, Base::None, Value::Bytes(&[0x0a, 0xff])), "0aff");
        assert_eq!(shown(FieldType::Ether, Base::None, Value::Ether([2, 0, 0, 9, 0, 0xb])), "02:00:00:09:00:0b");
        let v6 = [0xfd, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 1];
        assert_eq!(shown(FieldType::Ipv6, Base::None, Value::Ipv6(v6)), "fd00:0:0:9::1");
        assert_eq!(shown(FieldType::RelativeTime, Base::None, Value::Time(61_000)), "0.000061000");
        assert_eq!(shown(FieldType::RelativeTime, Base::None, Value::Time(-1_000)), "-0.000001000");
        let date = |ns| shown(FieldType::AbsoluteTime, Base::None, Value::Time(ns));
        assert_eq!(date(1_700_000_000_123_456_789), "Nov 14, 2023 22:13:20.123456789 UTC");
        assert_eq!(date(1_701_475_200_000_000_000), "Dec  2, 2023 00:00:00.000000000 UTC");
    }
}
