//! The field registry: every field rocescope can show, filter on or export, declared once with
//! its Wireshark display-filter name, type, base and label, and how to read its values (one per
//! occurrence: a mirror frame has an outer and an inner `ip.src`) from a decoded frame. The
//! `-T fields` export, the display filters and `rocescope fields` read it.
//!
//! Names, types, bases and bitmasks are Wireshark's (tshark 4.0, `tshark -G fields`) wherever
//! Wireshark has the field; what Wireshark cannot show is under `rocescope.*`.

mod info;
mod label;
mod layers;
pub mod names;
pub mod position;
pub mod protocols;
mod tables;
mod value;

pub use label::{IPV4, IPV6, MPLS, Summary, UDP, VLAN};
pub use layers::{Frame, Layer};
pub use value::{Composed, Value, write_tshark};

/// A field's type, as Wireshark names it (`FT_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// Unsigned integer of this many bits (8, 16, 24, 32 or 64).
    Uint(u8),
    /// A boolean bit in a container of this many bits.
    Bool(u8),
    Ipv4,
    Ipv6,
    Ether,
    Bytes,
    String,
    /// Absolute time, nanoseconds since the epoch.
    AbsoluteTime,
    /// A duration in nanoseconds.
    RelativeTime,
    /// A frame number.
    FrameNum,
    /// A protocol: present or not.
    Protocol,
}

impl FieldType {
    /// Wireshark's name of the type.
    pub fn name(self) -> &'static str {
        match self {
            FieldType::Uint(8) => "FT_UINT8",
            FieldType::Uint(16) => "FT_UINT16",
            FieldType::Uint(24) => "FT_UINT24",
            FieldType::Uint(32) => "FT_UINT32",
            FieldType::Uint(_) => "FT_UINT64",
            FieldType::Bool(_) => "FT_BOOLEAN",
            FieldType::Ipv4 => "FT_IPv4",
            FieldType::Ipv6 => "FT_IPv6",
            FieldType::Ether => "FT_ETHER",
            FieldType::Bytes => "FT_BYTES",
            FieldType::String => "FT_STRING",
            FieldType::AbsoluteTime => "FT_ABSOLUTE_TIME",
            FieldType::RelativeTime => "FT_RELATIVE_TIME",
            FieldType::FrameNum => "FT_FRAMENUM",
            FieldType::Protocol => "FT_PROTOCOL",
        }
    }
}

/// How an integer is displayed (Wireshark's `BASE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    None,
    Dec,
    Hex,
    DecHex,
    HexDec,
    /// A UDP port: decimal.
    PtUdp,
}

impl Base {
    pub fn name(self) -> &'static str {
        match self {
            Base::None => "",
            Base::Dec => "BASE_DEC",
            Base::Hex => "BASE_HEX",
            Base::DecHex => "BASE_DEC_HEX",
            Base::HexDec => "BASE_HEX_DEC",
            Base::PtUdp => "BASE_PT_UDP",
        }
    }
}

/// Reads a field's values from a frame, one call of the sink per occurrence, outermost first.
pub type Getter = for<'p, 'a> fn(&Frame<'p, 'a>, &mut dyn FnMut(Value<'a>));

/// Appends what an integer value means (Wireshark's value strings: `AF31` for DSCP 26), or
/// nothing when it has no name.
pub type Meaning = fn(&mut String, u64);

/// How the decode tree (`packets -V`) shows a field.
#[derive(Clone, Copy)]
pub enum Shown {
    /// A line with its label and value.
    Line,
    /// A line with its label, what the value means, and the value.
    Named(Meaning),
    /// No line: an alias of other fields (`ip.addr`) or a value the section heading shows.
    Hidden,
}

/// One field of the registry.
pub struct Field {
    /// The display-filter name (`infiniband.bth.psn`).
    pub name: &'static str,
    pub ty: FieldType,
    pub base: Base,
    /// The bits of its container the field takes, as Wireshark declares them (0: all).
    pub mask: u64,
    pub label: &'static str,
    /// What the field means, where the label does not say it all.
    pub blurb: &'static str,
    pub shown: Shown,
    pub get: Getter,
}

/// `field`, not shown as a line of its own in the decode tree.
const fn hidden(field: Field) -> Field {
    Field { shown: Shown::Hidden, ..field }
}

/// `field`, shown in the decode tree with what its values mean.
const fn named(field: Field, meaning: Meaning) -> Field {
    Field { shown: Shown::Named(meaning), ..field }
}

impl std::fmt::Debug for Field {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl Field {
    /// The protocol a field belongs to: its name up to the first dot.
    pub fn protocol(&self) -> &'static str {
        self.name.split('.').next().unwrap_or(self.name)
    }

    /// The base `tshark -G fields` shows: a boolean's container width in bits, else the
    /// display base's name.
    pub fn glossary_base(&self) -> std::borrow::Cow<'static, str> {
        match self.ty {
            FieldType::Bool(bits) => bits.to_string().into(),
            _ => self.base.name().into(),
        }
    }

    /// Calls `sink` with each of the field's values in `frame`.
    pub fn values<'a>(&self, frame: &Frame<'_, 'a>, sink: &mut dyn FnMut(Value<'a>)) {
        (self.get)(frame, sink)
    }

    /// The field's `n`-th value in `frame` (0: the outermost).
    pub fn nth<'a>(&self, frame: &Frame<'_, 'a>, n: usize) -> Option<Value<'a>> {
        let mut seen = 0;
        let mut found = None;
        self.values(frame, &mut |v| {
            if seen == n {
                found.get_or_insert(v);
            }
            seen += 1;
        });
        found
    }
}

/// Every field, in the order `rocescope fields` lists them: RoCE's and the rest, then UET's.
pub fn all() -> impl Iterator<Item = &'static Field> + Clone {
    tables::TABLES.into_iter().flatten()
}

/// The field named `name`.
pub fn by_name(name: &str) -> Option<&'static Field> {
    all().find(|f| f.name == name)
}

/// Names people type for protocols the registry holds under Wireshark's names.
const PROTOCOL_ALIASES: &[(&str, &str)] = &[
    ("roce", "infiniband"),
    ("rocev1", "infiniband"),
    ("rocev2", "infiniband"),
    ("rroce", "infiniband"),
    ("ib", "infiniband"),
    ("bth", "infiniband.bth"),
    ("aeth", "infiniband.aeth"),
    ("reth", "infiniband.reth"),
    ("deth", "infiniband.deth"),
    ("cnp", "rocescope.cnp"),
    ("ipv4", "ip"),
    ("ether", "eth"),
    ("ethernet", "eth"),
    ("dot1q", "vlan"),
    ("pfc", "macc"),
];

/// The registered name nearest to `name` (for "did you mean"): the name with a protocol alias
/// replaced (`roce` is `infiniband`, `ib.bth.psn` is `infiniband.bth.psn`); a protocol's first
/// field where the protocol is no field itself; else the nearest by edit distance (a swap of
/// two letters one edit), the nearer last component first among equals, among the fields of
/// the name's parent if it has any (`_ws.col.Inf` → `_ws.col.Info`), else of its
/// protocol, else among all.
pub fn nearest(name: &str) -> Option<&'static str> {
    let (first, rest) = name.split_once('.').map_or((name, None), |(first, rest)| (first, Some(rest)));
    let protocol = PROTOCOL_ALIASES.iter().find(|(alias, _)| alias.eq_ignore_ascii_case(first)).map_or(first, |a| a.1);
    let wanted = rest.map_or_else(|| protocol.to_string(), |rest| format!("{protocol}.{rest}"));
    if let Some(field) = by_name(&wanted) {
        return Some(field.name);
    }
    let in_protocol = |f: &&Field| f.name.strip_prefix(wanted.as_str()).is_some_and(|r| r.starts_with('.'));
    if let Some(field) = all().find(in_protocol) {
        return Some(field.name);
    }
    let last = |n: &str| n.rsplit('.').next().unwrap_or(n).to_string();
    let distance =
        |f: &Field| (strsim::osa_distance(&wanted, f.name), strsim::osa_distance(&last(&wanted), &last(f.name)));
    // the nearest among the fields of the same parent (`_ws.col.Inf`: `_ws.col.*`), else of
    // the same protocol, else among all: a misspelled field is rarely another protocol's
    let parent = wanted.rsplit_once('.').map(|(parent, _)| parent);
    let protocol = wanted.split('.').next().filter(|_| parent.is_some());
    let under = |prefix: &str, f: &Field| f.name.strip_prefix(prefix).is_some_and(|r| r.starts_with('.'));
    [parent, protocol]
        .into_iter()
        .flatten()
        .find_map(|prefix| all().filter(|f| under(prefix, f)).min_by_key(|f| distance(f)))
        .or_else(|| all().min_by_key(|f| distance(f)))
        .map(|f| f.name)
}

/// The field named `name` as an option (`-e`) names it; an error names the nearest field
/// there is.
pub fn for_option(option: &str, name: &str) -> Result<&'static Field, String> {
    by_name(name).ok_or_else(|| match nearest(name) {
        Some(near) => format!("{option} {name}: no such field (did you mean {near}? `rocescope fields` lists them)"),
        None => format!("{option} {name}: no such field"),
    })
}

/// Writes the registry as `tshark -G fields` does: one line per field, tab-separated: `F`,
/// label, name, type, protocol, base, bitmask, description; a protocol is `P`, label, name.
/// Only the fields and protocols whose names begin with `prefix` (`""`: all of them).
pub fn write_glossary(out: &mut impl std::io::Write, prefix: &str) -> std::io::Result<()> {
    for f in all().filter(|f| f.name.starts_with(prefix)) {
        if f.ty == FieldType::Protocol {
            writeln!(out, "P\t{}\t{}", f.label, f.name)?;
            continue;
        }
        writeln!(
            out,
            "F\t{}\t{}\t{}\t{}\t{}\t0x{:x}\t{}",
            f.label,
            f.name,
            f.ty.name(),
            f.protocol(),
            f.glossary_base(),
            f.mask,
            f.blurb
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_declared_once_and_nearest_names_help() {
        let mut names: Vec<&str> = all().map(|f| f.name).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(names.len(), before, "a field is declared twice");
        assert_eq!(nearest("infiniband.bth.pns"), Some("infiniband.bth.psn"));
        assert_eq!(nearest("ip.sr"), Some("ip.src"));
        assert_eq!(nearest("roce"), Some("infiniband"));
        assert_eq!(nearest("ib.bth.psn"), Some("infiniband.bth.psn"));
        assert_eq!(nearest("ROCE.bth.destqp"), Some("infiniband.bth.destqp"));
        assert_eq!(nearest("frame"), Some("frame"));
        assert_eq!(nearest("frame.protocol"), Some("frame.protocols"));
        assert_eq!(nearest("frame.time_delt"), Some("frame.time_delta"));
        assert_eq!(nearest("_ws.col.Inf"), Some("_ws.col.Info"));
        assert_eq!(nearest("_ws.col.protocol"), Some("_ws.col.Protocol"));
        assert_eq!(nearest("udp.prot"), Some("udp.port"));
        assert_eq!(nearest("ip.dsfeld.dscp"), Some("ip.dsfield.dscp"));
    }
}
