//! What every table of fields declares with: the field types by width, and the macros that
//! build a [`Field`](crate::fields::Field).

use crate::fields::{Composed, FieldType, Value};

pub const U8: FieldType = FieldType::Uint(8);
pub const U16: FieldType = FieldType::Uint(16);
pub const U24: FieldType = FieldType::Uint(24);
pub const U32: FieldType = FieldType::Uint(32);
pub const U64: FieldType = FieldType::Uint(64);
/// A boolean, in a container of 8, 16 or 32 bits (what Wireshark's `-G fields` shows as its
/// base).
pub const BOOL: FieldType = FieldType::Bool(8);
pub const BOOL16: FieldType = FieldType::Bool(16);
pub const BOOL32: FieldType = FieldType::Bool(32);

pub fn uint(v: impl Into<u64>) -> Value<'static> {
    Value::Uint(v.into())
}

/// The item of a protocol a frame has once (its text is written when shown).
pub const ITEM: Value<'static> = Value::Composed(Composed::Label { occurrence: 0 });

/// A protocol's items, one for each call of the closure returned, numbered from the
/// outermost instance of the protocol.
pub fn items<'o, 'a>(out: &'o mut dyn FnMut(Value<'a>)) -> impl FnMut() + 'o {
    let mut occurrence = 0;
    move || {
        out(Value::Composed(Composed::Label { occurrence }));
        occurrence += 1;
    }
}

/// A Wireshark field.
macro_rules! ws {
    ($name:literal, $ty:expr, $base:ident, $mask:expr, $label:literal, $get:expr) => {
        $crate::fields::Field {
            name: $name,
            ty: $ty,
            base: $crate::fields::Base::$base,
            mask: $mask,
            label: $label,
            blurb: "",
            shown: $crate::fields::Shown::Line,
            get: $get,
        }
    };
}
pub(crate) use ws;

/// A field of rocescope's own, with what it means.
macro_rules! own {
    ($name:literal, $ty:expr, $base:ident, $label:literal, $blurb:literal, $get:expr) => {
        $crate::fields::Field {
            name: $name,
            ty: $ty,
            base: $crate::fields::Base::$base,
            mask: 0,
            label: $label,
            blurb: $blurb,
            shown: $crate::fields::Shown::Line,
            get: $get,
        }
    };
}
pub(crate) use own;
