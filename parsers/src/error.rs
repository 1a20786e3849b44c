//! Typed decode errors: which layer failed and why.

use core::fmt;

/// The protocol layer a parser works on; named in every [`Error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Layer {
    Erf,
    Lrh,
    Ethernet,
    Arista,
    Vlan,
    Mpls,
    LinuxSll,
    MacControl,
    Ipv4,
    Ipv6,
    Udp,
    Gre,
    Erspan,
    Spectrum,
    Vxlan,
    Grh,
    Bth,
    ExtHeader,
    Mad,
    UetTss,
    UetPds,
    UetSes,
}

impl Layer {
    /// Short lower-case name used in reports (`"bth"`, `"ipv4"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Layer::Erf => "erf",
            Layer::Lrh => "lrh",
            Layer::Ethernet => "ethernet",
            Layer::Arista => "arista",
            Layer::Vlan => "vlan",
            Layer::Mpls => "mpls",
            Layer::LinuxSll => "linux_sll",
            Layer::MacControl => "mac_control",
            Layer::Ipv4 => "ipv4",
            Layer::Ipv6 => "ipv6",
            Layer::Udp => "udp",
            Layer::Gre => "gre",
            Layer::Erspan => "erspan",
            Layer::Spectrum => "spectrum",
            Layer::Vxlan => "vxlan",
            Layer::Grh => "grh",
            Layer::Bth => "bth",
            Layer::ExtHeader => "ext_header",
            Layer::Mad => "mad",
            Layer::UetTss => "uet_tss",
            Layer::UetPds => "uet_pds",
            Layer::UetSes => "uet_ses",
        }
    }
}

/// What went wrong at a layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(into = "SavedErrorKind"))]
pub enum ErrorKind {
    /// The input ends before the header does.
    Truncated { needed: usize, available: usize },
    /// A field holds a value the protocol does not allow.
    Invalid(&'static str),
}

/// An [`ErrorKind`] as a saved analysis holds it: the reason as text.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
enum SavedErrorKind {
    Truncated { needed: usize, available: usize },
    Invalid(String),
}

#[cfg(feature = "serde")]
impl From<ErrorKind> for SavedErrorKind {
    fn from(kind: ErrorKind) -> Self {
        match kind {
            ErrorKind::Truncated { needed, available } => SavedErrorKind::Truncated { needed, available },
            ErrorKind::Invalid(reason) => SavedErrorKind::Invalid(reason.to_string()),
        }
    }
}

/// Read back as a [`SavedErrorKind`] (serde's derive would have the reason borrow from the
/// input for the program's life).
#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for ErrorKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        SavedErrorKind::deserialize(deserializer).map(ErrorKind::from)
    }
}

/// A reason read back from a saved analysis is kept once for the program's life
/// ([`intern`]).
#[cfg(feature = "serde")]
impl From<SavedErrorKind> for ErrorKind {
    fn from(kind: SavedErrorKind) -> Self {
        match kind {
            SavedErrorKind::Truncated { needed, available } => ErrorKind::Truncated { needed, available },
            SavedErrorKind::Invalid(reason) => ErrorKind::Invalid(intern(reason)),
        }
    }
}

/// A name or reason read back from a saved analysis, as the `&'static str` the code names it
/// with: each distinct text is kept once for the program's life (they are a few dozen: this
/// crate's reasons, layer and encapsulation names).
#[cfg(feature = "serde")]
pub fn intern(text: String) -> &'static str {
    use std::sync::{Mutex, OnceLock, PoisonError};
    static KEPT: OnceLock<Mutex<Vec<&'static str>>> = OnceLock::new();
    let mut kept = KEPT.get_or_init(Mutex::default).lock().unwrap_or_else(PoisonError::into_inner);
    match kept.iter().find(|k| **k == text) {
        Some(known) => known,
        None => {
            let leaked: &'static str = Box::leak(text.into_boxed_str());
            kept.push(leaked);
            leaked
        }
    }
}

/// A decode failure: the layer and the reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Error {
    pub layer: Layer,
    pub kind: ErrorKind,
}

impl Error {
    pub const fn truncated(layer: Layer, needed: usize, available: usize) -> Self {
        Error { layer, kind: ErrorKind::Truncated { needed, available } }
    }

    pub const fn invalid(layer: Layer, reason: &'static str) -> Self {
        Error { layer, kind: ErrorKind::Invalid(reason) }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ErrorKind::Truncated { needed, available } => {
                write!(f, "{}: truncated, needs {needed} bytes, {available} available", self.layer.name())
            }
            ErrorKind::Invalid(reason) => write!(f, "{}: {reason}", self.layer.name()),
        }
    }
}

impl std::error::Error for Error {}

/// The error type handed to nom combinators inside this crate; mapped to [`Error`] at each
/// header's public `parse` function, where the layer and the needed length are known.
pub(crate) type NomError<'a> = nom::error::Error<&'a [u8]>;

/// Splits a fixed-size header off the front of `input` with nom's `take`, as an array reference
/// so that every accessor's index is checked at compile time.
pub(crate) fn split_array<const N: usize>(input: &[u8], layer: Layer) -> Result<(&[u8; N], &[u8]), Error> {
    let truncated = Error::truncated(layer, N, input.len());
    let (rest, head) = nom::bytes::complete::take::<usize, &[u8], NomError<'_>>(N)(input).map_err(|_| truncated)?;
    let head: &[u8; N] = head.try_into().map_err(|_| truncated)?;
    Ok((head, rest))
}

/// Splits `n` bytes (a length known only at run time) off the front of `input`.
pub(crate) fn split_bytes(input: &[u8], n: usize, layer: Layer) -> Result<(&[u8], &[u8]), Error> {
    nom::bytes::complete::take::<usize, &[u8], NomError<'_>>(n)(input)
        .map(|(rest, head)| (head, rest))
        .map_err(|_| Error::truncated(layer, n, input.len()))
}

#[inline]
pub(crate) fn be16(b: [u8; 2]) -> u16 {
    u16::from_be_bytes(b)
}

#[inline]
pub(crate) fn be24(b: [u8; 3]) -> u32 {
    u32::from_be_bytes([0, b[0], b[1], b[2]])
}

#[inline]
pub(crate) fn be32(b: [u8; 4]) -> u32 {
    u32::from_be_bytes(b)
}

/// The big-endian 16 bits at `at` in `bytes`, 0 past their end (for views whose length their
/// parser checked).
pub(crate) fn be16_at(bytes: &[u8], at: usize) -> u16 {
    match bytes.get(at..at + 2) {
        Some(&[a, b]) => be16([a, b]),
        _ => 0,
    }
}

/// The big-endian 32 bits at `at` in `bytes`, 0 past their end (for views whose length their
/// parser checked).
pub(crate) fn be32_at(bytes: &[u8], at: usize) -> u32 {
    match bytes.get(at..at + 4) {
        Some(&[a, b, c, d]) => be32([a, b, c, d]),
        _ => 0,
    }
}

/// The big-endian 24 bits at `at`, 0 past the end.
pub(crate) fn be24_at(bytes: &[u8], at: usize) -> u32 {
    match bytes.get(at..at + 3) {
        Some(&[a, b, c]) => u32::from_be_bytes([0, a, b, c]),
        _ => 0,
    }
}

/// The big-endian 64 bits at `at`, 0 past the end.
pub(crate) fn be64_at(bytes: &[u8], at: usize) -> u64 {
    bytes.get(at..at + 8).and_then(|b| <[u8; 8]>::try_from(b).ok()).map_or(0, u64::from_be_bytes)
}

/// The byte at `at`, 0 past the end.
pub(crate) fn byte_at(bytes: &[u8], at: usize) -> u8 {
    bytes.get(at).copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_array_reports_needed_and_available() {
        let err = split_array::<12>(&[0u8; 7], Layer::Bth).unwrap_err();
        assert_eq!(err, Error::truncated(Layer::Bth, 12, 7));
        assert_eq!(err.to_string(), "bth: truncated, needs 12 bytes, 7 available");
    }

    #[test]
    fn split_array_returns_head_and_rest() {
        let (head, rest) = split_array::<2>(&[1, 2, 3], Layer::Udp).unwrap();
        assert_eq!(head, &[1, 2]);
        assert_eq!(rest, &[3]);
    }

    #[test]
    fn big_endian_helpers() {
        assert_eq!(be16([0x12, 0x34]), 0x1234);
        assert_eq!(be24([0xff, 0xff, 0xff]), 0x00ff_ffff);
        assert_eq!(be32([0xde, 0xad, 0xbe, 0xef]), 0xdead_beef);
    }
}
