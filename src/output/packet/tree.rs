//! The full decode tree of a frame (`packets -V`), Wireshark's packet-details pane as text: a
//! section per layer in wire order ([`Frame::layers`]), its heading, then a line for each
//! field of the registry the layer has: `Label: value [filter name]`, or `Label: meaning
//! (value) [filter name]` where the value has a name. The lines come from the field registry,
//! so a field added there shows here; this module only says which fields a layer lists.

use std::collections::HashMap;
use std::fmt::{self, Write};
use std::ops::Range;

use crate::decode::Link;
use crate::fields::{self, Base, Field, FieldType, Frame, Layer, Shown, Value};
use rocescope_parsers::opcode::ExtHeader;

const IND: &str = "    ";

/// How a section's heading is written.
enum Heading {
    /// The label of this registry field (a protocol or a header).
    Label(&'static str),
    /// A title, then `, Label: value` for each of its registry fields (the text tshark's
    /// `-T fields` prints for some protocols too).
    Summary(fields::Summary),
    /// Written from the decoded frame by [`write_own_heading`].
    Own,
}

/// A layer's heading and the registry fields it lists: those whose names start with a prefix
/// ending in `.`, or equal one that does not.
struct Section {
    heading: Heading,
    fields: &'static [&'static str],
}

/// A summary heading: `title`, then `, Label: value` for each (label, field name) of `parts`.
const fn titled(title: &'static str, parts: &'static [(&'static str, &'static str)]) -> Heading {
    Heading::Summary(fields::Summary { title, parts })
}

const fn section(heading: Heading, fields: &'static [&'static str]) -> Section {
    Section { heading, fields }
}

fn section_of(layer: Layer) -> Section {
    use Heading::{Label, Own, Summary};
    match layer {
        Layer::Frame => section(Own, &["frame.", "rocescope.frame."]),
        Layer::Sll => section(titled("Linux cooked capture", &[]), &["sll."]),
        Layer::Erf => section(Label("erf"), &["erf."]),
        Layer::Lrh => section(
            titled(
                "InfiniBand Local Route Header",
                &[("SLID", "infiniband.lrh.slid"), ("DLID", "infiniband.lrh.dlid")],
            ),
            &["infiniband.lrh."],
        ),
        Layer::RawIp | Layer::UnsupportedLink | Layer::OtherVlan(_) | Layer::ExtCut | Layer::Other => section(Own, &[]),
        Layer::Ethernet => section(titled("Ethernet II", &[("Src", "eth.src"), ("Dst", "eth.dst")]), &["eth."]),
        Layer::Vlan => section(Summary(fields::VLAN), &["vlan."]),
        Layer::VnTag => section(Label("vntag"), &["vntag."]),
        Layer::ETag => section(Label("etag"), &["etag."]),
        Layer::Mpls => section(Summary(fields::MPLS), &["mpls."]),
        Layer::PwControlWord => section(Label("pwethcw"), &["pweth."]),
        Layer::Arista => section(
            titled("Arista Vendor Specific Protocol", &[("Seconds", "avsp.64sec"), ("Seconds", "avsp.48sec")]),
            &["avsp."],
        ),
        Layer::Ipv4 => section(Summary(fields::IPV4), &["ip."]),
        Layer::Ipv6 => section(Summary(fields::IPV6), &["ipv6."]),
        Layer::Udp => section(Summary(fields::UDP), &["udp."]),
        Layer::Gre => section(Label("gre"), &["gre."]),
        Layer::Erspan => section(Label("erspan"), &["erspan."]),
        Layer::Spectrum => section(titled("NVIDIA Spectrum mirror header", &[]), &["rocescope.spectrum."]),
        Layer::Vxlan => section(Label("vxlan"), &["vxlan."]),
        Layer::Grh => section(
            titled(
                "InfiniBand Global Route Header",
                &[("SGID", "infiniband.grh.sgid"), ("DGID", "infiniband.grh.dgid")],
            ),
            &["infiniband.grh."],
        ),
        Layer::Bth => {
            section(Label("infiniband.bth"), &["infiniband.bth.", "rocescope.bth.", "rocescope.cnp", "rocescope.roce."])
        }
        Layer::Ext(header) => ext_section(header),
        Layer::Mad => section(titled("MAD (Management Datagram) Common Header", &[]), &["infiniband.mad."]),
        Layer::Cm => section(Own, &["infiniband.cm."]),
        Layer::Payload => section(titled("Payload", &[]), &["rocescope.payload."]),
        Layer::Icrc => section(titled("Invariant CRC", &[]), &["infiniband.invariant.crc", "rocescope.icrc."]),
        Layer::Vcrc => section(titled("Variant CRC", &[]), &["infiniband.variant.crc", "rocescope.vcrc."]),
        Layer::MacControl => section(Label("macc"), &["macc."]),
        Layer::Malformed => section(Own, &["rocescope.malformed", "rocescope.malformed."]),
        Layer::Trailer => section(titled("Trailer", &[]), &["rocescope.trailer", "rocescope.trailer."]),
        Layer::Metamako => section(Label("metamako"), &["metamako."]),
        Layer::Analysis => section(titled("rocescope analysis", &[]), &["rocescope.analysis."]),
        Layer::UetEntropy => section(titled("UET entropy header", &[]), &["uet.pds.entropy", "uet.pds.entropy."]),
        Layer::UetTss => section(titled("UET Transport Security Sublayer", &[("SDI", "uet.tss.sdi")]), &["uet.tss."]),
        Layer::UetPds => section(titled("UET Packet Delivery Sublayer", &[("PSN", "uet.pds.psn")]), UET_PDS_FIELDS),
        Layer::UetSes => section(
            titled("UET Semantic Sublayer", &[]),
            &["uet.ses.", "rocescope.uet.original_request_psn", "rocescope.uet.response_format"],
        ),
        Layer::UetTrailer => section(titled("UET trailer", &[]), &["rocescope.uet.trailer", "rocescope.uet.crc."]),
    }
}

/// The PDS header's fields: every `uet.pds.` field but the entropy header's.
const UET_PDS_FIELDS: &[&str] = &[
    "uet.pds.type",
    "uet.pds.nh",
    "uet.pds.ctl_type",
    "uet.pds.flags",
    "uet.pds.flags.",
    "uet.pds.clear_psn",
    "uet.pds.psn",
    "uet.pds.ack_psn",
    "uet.pds.cack_psn",
    "uet.pds.spdcid",
    "uet.pds.dpdcid",
    "uet.pds.pdc_mode",
    "uet.pds.psn_offset",
    "uet.pds.start_psn",
    "uet.pds.cc_state.",
    "uet.pds.ctrl_probe_opaque",
    "uet.pds.ctrl_payload",
    "uet.pds.nack.",
    "uet.pds.ack.",
    "uet.pds.rudi.",
];

fn ext_section(header: ExtHeader) -> Section {
    use Heading::Label;
    match header {
        ExtHeader::Rdeth => section(Label("infiniband.rdeth"), &["infiniband.rdeth."]),
        ExtHeader::Deth => section(Label("infiniband.deth"), &["infiniband.deth."]),
        ExtHeader::Xrceth => section(titled("XRC Extended Transport Header", &[]), &["rocescope.xrceth."]),
        ExtHeader::Feth => section(titled("FLUSH Extended Transport Header", &[]), &["rocescope.feth."]),
        ExtHeader::Reth => section(Label("infiniband.reth"), &["infiniband.reth."]),
        // Wireshark's quirk: the AtomicETH's address and key are the RETH's fields
        ExtHeader::AtomicEth => section(
            Label("infiniband.atomiceth"),
            &["infiniband.reth.va", "infiniband.reth.r_key", "infiniband.atomiceth."],
        ),
        ExtHeader::Aeth => section(Label("infiniband.aeth"), &["infiniband.aeth."]),
        ExtHeader::AtomicAckEth => section(Label("infiniband.atomicacketh"), &["infiniband.atomicacketh."]),
        ExtHeader::ImmDt => section(Label("infiniband.immdt"), &["infiniband.immdt"]),
        ExtHeader::Ieth => section(titled("Invalidate Extended Transport Header", &[]), &["infiniband.ieth"]),
        ExtHeader::CnpReserved => section(titled("CNP reserved", &[]), &[]),
    }
}

fn lists(section: &Section, field: &Field) -> bool {
    section.fields.iter().any(|p| if p.ends_with('.') { field.name.starts_with(p) } else { field.name == *p })
}

/// Whether the section of `layer` lists `field` (the JSON outputs group fields as the tree does).
pub(super) fn layer_lists(layer: Layer, field: &Field) -> bool {
    lists(&section_of(layer), field)
}

/// One line of the decode tree.
pub struct TreeLine {
    /// The line without its indentation.
    pub text: String,
    pub kind: LineKind,
    /// The layer whose section the line is in, the how-manieth of its kind it is (which
    /// occurrence of its fields it shows), and its bytes in the frame.
    pub layer: Layer,
    pub occurrence: usize,
    pub span: Range<usize>,
}

#[derive(Clone, Copy)]
pub enum LineKind {
    /// A section's heading.
    Heading,
    /// A field's line.
    Field(&'static Field),
    /// A further line of a heading (the frame's arrival time).
    More,
}

/// Writes the decode tree of `frame`.
pub fn write_tree(out: &mut impl Write, frame: &Frame<'_, '_>) -> fmt::Result {
    for line in tree(frame) {
        match line.kind {
            LineKind::Heading => writeln!(out, "{}", line.text)?,
            LineKind::Field(_) | LineKind::More => writeln!(out, "{IND}{}", line.text)?,
        }
    }
    Ok(())
}

/// Sections of one kind of layer the tree shows: a stack of VLAN tags or MPLS labels deeper
/// than this is shown by its first ones and a line that counts the rest (docs/decoding.md).
pub const SECTIONS_OF_A_KIND: usize = 32;

/// The decode tree of `frame`, line by line. Linear in the frame's headers: each field's
/// values are gathered once, and a layer's occurrence is counted among the kinds seen.
pub fn tree(frame: &Frame<'_, '_>) -> Vec<TreeLine> {
    let mut layers = Vec::new();
    frame.layers(&mut |layer, span| layers.push((layer, span)));
    let mut values = Values { frame, gathered: HashMap::new() };
    let mut seen: Vec<(Layer, usize)> = Vec::new();
    let mut of_a_kind: Vec<(std::mem::Discriminant<Layer>, usize)> = Vec::new();
    let mut lines = Vec::new();
    let mut not_shown: Option<(Layer, Range<usize>, usize)> = None;
    for (layer, span) in layers {
        let kind = std::mem::discriminant(&layer);
        let shown = count(&mut of_a_kind, kind, |k| *k == kind);
        if shown >= SECTIONS_OF_A_KIND {
            let (_, covered, n) = not_shown.get_or_insert((layer, span.clone(), 0));
            covered.end = span.end;
            *n += 1;
            continue;
        }
        if let Some(rest) = not_shown.take() {
            lines.push(not_shown_line(rest));
        }
        // a tag of another TPID lists no field: its sections need no occurrence
        let occurrence = match layer {
            Layer::OtherVlan(_) => 0,
            _ => count(&mut seen, layer, |l| *l == layer),
        };
        let _ = section_lines(&mut lines, &mut values, layer, occurrence, span);
    }
    lines.extend(not_shown.map(not_shown_line));
    lines
}

/// Counts one more of `key` in `counts`; returns how many there were before.
pub(super) fn count<K: Copy>(counts: &mut Vec<(K, usize)>, key: K, same: impl Fn(&K) -> bool) -> usize {
    match counts.iter_mut().find(|(k, _)| same(k)) {
        Some((_, n)) => {
            *n += 1;
            *n - 1
        }
        None => {
            counts.push((key, 1));
            0
        }
    }
}

/// The line that stands for the sections beyond [`SECTIONS_OF_A_KIND`] of a stack.
fn not_shown_line((layer, span, n): (Layer, Range<usize>, usize)) -> TreeLine {
    let text = format!("[{n} more headers of this kind not shown: the tree shows the first {SECTIONS_OF_A_KIND}]");
    TreeLine { text, kind: LineKind::Heading, layer, occurrence: SECTIONS_OF_A_KIND, span }
}

/// The values of the fields a tree shows, each field's gathered in one pass over the frame
/// the first time it is asked for, so that the n-th section of a stack costs no walk over the
/// n before it.
struct Values<'f, 'a> {
    frame: &'f Frame<'f, 'a>,
    gathered: HashMap<&'static str, Vec<Value<'a>>>,
}

impl<'a> Values<'_, 'a> {
    /// The `n`-th value of `field` (0: the outermost), unless the tree does not show it.
    fn nth(&mut self, field: &'static Field, n: usize) -> Option<Value<'a>> {
        if field.ty == FieldType::Protocol || matches!(field.shown, Shown::Hidden) {
            return None;
        }
        let frame = self.frame;
        let all = self.gathered.entry(field.name).or_insert_with(|| {
            let mut all = Vec::new();
            field.values(frame, &mut |v| all.push(v));
            all
        });
        all.get(n).copied()
    }
}

fn section_lines(
    lines: &mut Vec<TreeLine>,
    values: &mut Values<'_, '_>,
    layer: Layer,
    occurrence: usize,
    span: Range<usize>,
) -> fmt::Result {
    let section = section_of(layer);
    let line = |text: String, kind| TreeLine { text, kind, layer, occurrence, span: span.clone() };
    let mut fields = Vec::new();
    for field in fields::all().filter(|f| lists(&section, f)) {
        if let Some(value) = values.nth(field, occurrence) {
            let mut text = String::new();
            write_field_line(&mut text, values.frame, field, &value)?;
            fields.push(line(text, LineKind::Field(field)));
        }
    }
    if layer == Layer::Analysis && fields.is_empty() {
        return Ok(());
    }
    let mut heading = String::new();
    match section.heading {
        Heading::Label(name) => heading.push_str(fields::by_name(name).map_or(name, |f| f.label)),
        Heading::Summary(summary) => {
            let frame = values.frame;
            summary.write(&mut heading, frame, occurrence, &mut |out, field, value| {
                let _ = write_value(out, frame, field, value);
            })
        }
        Heading::Own => write_own_heading(&mut heading, values.frame, layer)?,
    }
    let mut parts = heading.split('\n');
    lines.push(line(parts.next().unwrap_or_default().to_string(), LineKind::Heading));
    lines.extend(parts.map(|more| line(more.trim_start().to_string(), LineKind::More)));
    lines.append(&mut fields);
    Ok(())
}

fn write_field_line(out: &mut String, frame: &Frame<'_, '_>, field: &Field, value: &Value<'_>) -> fmt::Result {
    write!(out, "{}: ", field.label)?;
    let mut meaning = String::new();
    if let (Shown::Named(name), Some(v)) = (field.shown, value.as_uint()) {
        name(&mut meaning, v);
    }
    if meaning.is_empty() {
        write_value(out, frame, field, value)?;
    } else {
        write!(out, "{meaning} (")?;
        write_value(out, frame, field, value)?;
        out.write_char(')')?;
    }
    write!(out, " [{}]", field.name)
}

/// A value as Wireshark's details pane shows it: integers in their field's base (`BASE_DEC_HEX`
/// as `768 (0x00000300)`), booleans as True or False, the rest as `-T fields` prints them.
fn write_value(out: &mut impl Write, frame: &Frame<'_, '_>, field: &Field, value: &Value<'_>) -> fmt::Result {
    let width = match field.ty {
        FieldType::Uint(bits) => usize::from(bits.div_ceil(4)),
        _ => 0,
    };
    match (*value, field.base) {
        (Value::Uint(v), Base::Hex) => write!(out, "0x{v:0width$x}"),
        (Value::Uint(v), Base::HexDec) => write!(out, "0x{v:0width$x} ({v})"),
        (Value::Uint(v), Base::DecHex) => write!(out, "{v} (0x{v:0width$x})"),
        (Value::Bool(b), _) => out.write_str(if b { "True" } else { "False" }),
        (v, _) => {
            let mut text = String::new();
            fields::write_tshark(&mut text, frame, field, &v);
            out.write_str(&text)
        }
    }
}

/// The headings that say more than a title and field values.
fn write_own_heading(out: &mut impl Write, frame: &Frame<'_, '_>, layer: Layer) -> fmt::Result {
    let p = frame.packet;
    match layer {
        Layer::Frame => {
            writeln!(out, "Frame {}: {} bytes on wire, {} bytes captured", frame.number, p.orig_len, p.data.len())?;
            write!(out, "{IND}Arrival time: ")?;
            super::write_absolute_time(out, p.ts_ns)
        }
        Layer::RawIp => out.write_str("Raw IP (no link-layer header)"),
        Layer::UnsupportedLink => match p.link {
            Link::Unsupported(l) => write!(out, "Link type {} (not decoded)", l.0),
            _ => Ok(()),
        },
        Layer::OtherVlan(tag) => {
            write!(
                out,
                "VLAN tag, TPID 0x{:04x}, PRI: {}, DEI: {}, ID: {}",
                tag.tpid,
                tag.pcp(),
                u8::from(tag.dei()),
                tag.vid()
            )
        }
        Layer::ExtCut => out.write_str("[Extended transport headers cut by the snap length]"),
        Layer::Cm => match frame.cm() {
            Some(cm) => write!(out, "CM {}", cm.message.name()),
            None => Ok(()),
        },
        Layer::Malformed => out.write_str("[Malformed frame]"),
        Layer::Other => {
            out.write_str("Payload: ")?;
            super::summary::write_info(out, p)
        }
        _ => Ok(()),
    }
}
