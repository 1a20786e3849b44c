//! tshark's JSON outputs, `packets -T json` and `packets -T ek`, as tshark 4.0 writes them.
//!
//! - `-T json`: one array, a packet an element (`_index`, `_type`, `_score`, `_source.layers`).
//!   Without `-e` the layers are objects keyed by protocol (`eth`, `ip`, `infiniband`), their
//!   fields in the decode tree's order, a header's or a flag byte's fields in a `NAME_tree`
//!   object after it (`infiniband.bth_tree`, `ip.dsfield_tree`), a key written again for each
//!   occurrence as tshark does (`ip.addr` twice). With `-e` the layers are the named fields,
//!   each an array of its values, absent fields left out.
//! - `-T ek`: Elasticsearch's bulk format, two lines a packet: the index line and the packet,
//!   its keys the field names with `_` for `.` (prefixed by the protocol without `-e`),
//!   repeated keys made one array, booleans as JSON booleans (without `-e`), subtrees flattened.
//!
//! Values are written as in `-T fields`, but bytes with colons between them (`64:00:ff:ff`).
//! docs/display-filters.md says what differs from tshark: fields rocescope does not decode are
//! not there, and its own (`rocescope.*`) are, in the layer they describe.

use std::collections::HashMap;
use std::fmt::Write as _;

use rocescope_parsers::opcode::ExtHeader;

use super::tree::{SECTIONS_OF_A_KIND, count, layer_lists};
use crate::fields::{self, Field, FieldType, Frame, Layer, Shown, Value, write_tshark};

/// Which of tshark's two JSON outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonStyle {
    /// `-T json`.
    Json,
    /// `-T ek`.
    Ek,
}

/// Writes frames as `-T json` or `-T ek`, all fields or the `-e` ones.
pub struct JsonExport {
    style: JsonStyle,
    /// The `-e` fields; none: every field of the decode tree.
    fields: Vec<&'static Field>,
    packets: u64,
}

/// A node of a packet's layers: a value, the values of an `-e` field, or an object whose keys
/// may repeat.
enum Node {
    Value(String, Option<bool>),
    Values(Vec<String>),
    Object(Vec<(String, Node)>),
}

impl JsonExport {
    /// The export of `names` (`-e`), or of every field when there are none; an error names an
    /// unknown field and the nearest known one.
    pub fn new(style: JsonStyle, names: &[String]) -> Result<JsonExport, String> {
        let fields = names.iter().map(|name| fields::for_option("-e", name)).collect::<Result<_, _>>()?;
        Ok(JsonExport { style, fields, packets: 0 })
    }

    /// What comes before the first packet.
    pub fn write_header(&self, out: &mut String) {
        if self.style == JsonStyle::Json {
            out.push('[');
        }
    }

    /// What comes after the last packet.
    pub fn write_footer(&self, out: &mut String) {
        if self.style == JsonStyle::Json {
            out.push_str(if self.packets == 0 { "]\n" } else { "\n]\n" });
        }
    }

    /// Appends one packet.
    pub fn write_frame(&mut self, out: &mut String, frame: &Frame<'_, '_>) {
        let layers = if self.fields.is_empty() { all_layers(frame) } else { named_fields(&self.fields, frame) };
        let index = index_name(frame.packet.ts_ns);
        match self.style {
            JsonStyle::Json => {
                out.push_str(if self.packets == 0 { "\n" } else { ",\n" });
                let _ = write!(
                    out,
                    "  {{\n    \"_index\": \"{index}\",\n    \"_type\": \"doc\",\n    \"_score\": null,\n    \"_source\": {{\n      \"layers\": "
                );
                write_pretty(out, &layers, 3);
                out.push_str("\n    }\n  }");
            }
            JsonStyle::Ek => {
                let _ = writeln!(out, "{{\"index\":{{\"_index\":\"{index}\",\"_type\":\"doc\"}}}}");
                let _ = write!(out, "{{\"timestamp\":\"{}\",\"layers\":", frame.packet.ts_ns.div_euclid(1_000_000));
                let flat = if self.fields.is_empty() {
                    with_iso_time(flatten_layers(layers), frame.packet.ts_ns)
                } else {
                    ek_keys(layers)
                };
                write_compact(out, &flat);
                out.push_str("}\n");
            }
        }
        self.packets += 1;
    }
}

/// tshark's index name: `packets-` and the frame's date (UTC here; tshark's is local time).
fn index_name(ts_ns: i64) -> String {
    let seconds = u64::try_from(ts_ns.div_euclid(1_000_000_000)).unwrap_or(0);
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(seconds);
    let date: String = humantime::format_rfc3339_seconds(time).to_string().chars().take(10).collect();
    format!("packets-{date}")
}

/// The `-e` fields of `frame`: each present one an array of its values.
fn named_fields(names: &[&'static Field], frame: &Frame<'_, '_>) -> Node {
    let mut layers = Vec::new();
    for field in names {
        let mut values = Vec::new();
        field.values(frame, &mut |v| values.push(text(frame, field, &v)));
        if !values.is_empty() {
            layers.push((field.name.to_string(), Node::Values(values)));
        }
    }
    Node::Object(layers)
}

/// A value as tshark's JSON writes it: as `-T fields` does, bytes with colons.
fn text(frame: &Frame<'_, '_>, field: &Field, value: &Value<'_>) -> String {
    match value {
        Value::Bytes(bytes) => colon_hex(bytes),
        _ => {
            let mut out = String::new();
            write_tshark(&mut out, frame, field, value);
            out
        }
    }
}

/// The protocol a layer's fields are under in tshark's JSON.
fn protocol_key(layer: Layer) -> &'static str {
    match layer {
        Layer::Frame => "frame",
        Layer::Sll => "sll",
        Layer::RawIp => "raw",
        Layer::Erf => "erf",
        Layer::Lrh
        | Layer::Grh
        | Layer::Bth
        | Layer::Ext(_)
        | Layer::ExtCut
        | Layer::Mad
        | Layer::Cm
        | Layer::Payload
        | Layer::Icrc
        | Layer::Vcrc => "infiniband",
        Layer::UnsupportedLink | Layer::Other => "data",
        Layer::Ethernet | Layer::Trailer => "eth",
        Layer::Vlan => "vlan",
        Layer::OtherVlan(_) => "ieee8021ad",
        Layer::Arista => "avsp",
        Layer::VnTag => "vntag",
        Layer::ETag => "etag",
        Layer::Mpls => "mpls",
        Layer::PwControlWord => "pwethcw",
        Layer::Ipv4 => "ip",
        Layer::Ipv6 => "ipv6",
        Layer::Udp => "udp",
        Layer::Gre => "gre",
        Layer::Erspan => "erspan",
        Layer::Spectrum => "rocescope.spectrum",
        Layer::Vxlan => "vxlan",
        Layer::MacControl => "macc",
        Layer::Malformed => "_ws.malformed",
        Layer::Metamako => "metamako",
        Layer::Analysis => "rocescope.analysis",
        Layer::UetEntropy | Layer::UetTss | Layer::UetPds | Layer::UetSes | Layer::UetTrailer => "uet",
    }
}

/// The header tshark names a layer's bytes after, its fields in the object `NAME_tree` that
/// follows (`"infiniband.bth": "64:00:…", "infiniband.bth_tree": {…}`); a layer without one
/// has its fields in the protocol's object.
fn header_key(layer: Layer) -> Option<&'static str> {
    Some(match layer {
        Layer::Lrh => "infiniband.lrh",
        Layer::Grh => "infiniband.grh",
        Layer::Bth => "infiniband.bth",
        Layer::Mad => "infiniband.mad",
        // Wireshark 4.0 shows a CM message as a subnet management packet's data
        Layer::Cm => "infiniband.smplid.smpdata",
        Layer::Ext(header) => match header {
            ExtHeader::Rdeth => "infiniband.rdeth",
            ExtHeader::Deth => "infiniband.deth",
            ExtHeader::Reth => "infiniband.reth",
            ExtHeader::AtomicEth => "infiniband.atomiceth",
            ExtHeader::Aeth => "infiniband.aeth",
            ExtHeader::AtomicAckEth => "infiniband.atomicacketh",
            ExtHeader::ImmDt => "infiniband.immdt",
            ExtHeader::Ieth => "infiniband.ieth",
            ExtHeader::Xrceth | ExtHeader::Feth | ExtHeader::CnpReserved => return None,
        },
        _ => return None,
    })
}

/// Every field of the decode tree, by layer: a layer of the same protocol as the one before
/// it joins its object (the BTH, RETH and ICRC are one `infiniband`).
fn all_layers(frame: &Frame<'_, '_>) -> Node {
    let mut layers = Vec::new();
    frame.layers(&mut |layer, span| layers.push((layer, span)));
    let kinds: Vec<Layer> = layers.iter().map(|(layer, _)| *layer).collect();
    let mut values = Gathered { frame, values: HashMap::new(), layers: &kinds };
    let mut objects: Vec<(String, Node)> = Vec::new();
    let mut seen: Vec<(Layer, usize)> = Vec::new();
    for (layer, span) in &layers {
        let layer = *layer;
        let occurrence = count(&mut seen, layer, |l| *l == layer);
        if occurrence >= SECTIONS_OF_A_KIND {
            continue;
        }
        let mut fields = Vec::new();
        for field in fields::all().filter(|f| f.ty != FieldType::Protocol && layer_lists(layer, f)) {
            fields.extend(values.of(field, layer, occurrence));
        }
        if fields.is_empty() {
            continue;
        }
        // a CM message's fields are one level, whatever their names
        let nodes = if layer == Layer::Cm { flat(frame, &fields) } else { nest(frame, &fields) };
        let nodes = match header_key(layer) {
            Some(key) => {
                let bytes = header_bytes(frame, layer, span.clone());
                vec![
                    (key.to_string(), Node::Value(colon_hex(bytes), None)),
                    (format!("{key}_tree"), Node::Object(nodes)),
                ]
            }
            None => nodes,
        };
        let key = protocol_key(layer);
        match objects.last_mut() {
            Some((last, Node::Object(members))) if last == key => members.extend(nodes),
            _ => objects.push((key.to_string(), Node::Object(nodes))),
        }
    }
    Node::Object(objects)
}

/// The bytes a header's key shows: the layer's, but the whole management datagram for its
/// header (tshark's `infiniband.mad` spans the MAD).
fn header_bytes<'a>(frame: &Frame<'_, 'a>, layer: Layer, span: std::ops::Range<usize>) -> &'a [u8] {
    let data = frame.packet.data;
    match (layer, frame.roce()) {
        (Layer::Mad, Some(roce)) => roce.ib.payload,
        _ => data.get(span).unwrap_or_default(),
    }
}

fn colon_hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 3);
    for (i, b) in bytes.iter().enumerate() {
        let _ = write!(out, "{}{b:02x}", if i > 0 { ":" } else { "" });
    }
    out
}

/// A frame's field values, each field's gathered once.
struct Gathered<'f, 'a> {
    frame: &'f Frame<'f, 'a>,
    values: HashMap<&'static str, Vec<Value<'a>>>,
    layers: &'f [Layer],
}

impl<'a> Gathered<'_, 'a> {
    /// The values of `field` in the `occurrence`-th `layer` of the frame: the one at that
    /// place, or, for a field that stands for several of a layer's (`ip.addr`: the source
    /// and the destination), its share of them.
    fn of(&mut self, field: &'static Field, layer: Layer, occurrence: usize) -> Vec<(&'static Field, Value<'a>)> {
        let frame = self.frame;
        let all = self.values.entry(field.name).or_insert_with(|| {
            let mut all = Vec::new();
            field.values(frame, &mut |v| all.push(v));
            all
        });
        let layers = self.layers.iter().filter(|l| **l == layer).count();
        let share = match field.shown {
            Shown::Hidden if layers > 0 && all.len().is_multiple_of(layers) => all.len() / layers,
            Shown::Hidden => 0,
            _ => 1,
        };
        let start = occurrence * share;
        all.get(start..start + share).unwrap_or_default().iter().map(|v| (field, *v)).collect()
    }
}

/// Objects tshark groups fields in that are no field rocescope has: (key, the fields' names
/// or prefixes ending in `.`).
const GROUPS: &[(&str, &[&str])] = &[
    ("avsp.64ts", &["avsp.64sec", "avsp.64ns"]),
    ("avsp.48ts", &["avsp.48sec", "avsp.48ns"]),
    ("CBFC Class Pause Times", &["macc.cbfc.pause_time."]),
];

/// Fields that stand for others, each of whose values tshark puts in the tree of the field it
/// stands for: `eth.addr`'s first in `eth.dst_tree`, its second in `eth.src_tree`.
const ALIASES_IN_TREES: &[(&str, &[&str])] = &[("eth.addr", &["eth.dst", "eth.src"])];

/// A layer's fields as tshark nests them: the fields named `NAME.*` that follow a field
/// `NAME` go into the object `NAME_tree` after it, those of a [`GROUPS`] entry into its object.
fn nest(frame: &Frame<'_, '_>, fields: &[(&'static Field, Value<'_>)]) -> Vec<(String, Node)> {
    let aliases: Vec<(&str, String)> = ALIASES_IN_TREES
        .iter()
        .flat_map(|(alias, owners)| {
            let values = fields.iter().filter(|(f, _)| f.name == *alias).map(|(f, v)| text(frame, f, v));
            owners.iter().copied().zip(values).collect::<Vec<_>>()
        })
        .collect();
    let fields: Vec<_> = fields.iter().filter(|(f, _)| !ALIASES_IN_TREES.iter().any(|(a, _)| *a == f.name)).collect();
    let mut nodes: Vec<(String, Node)> = Vec::new();
    let mut i = 0;
    while i < fields.len() {
        let (field, value) = fields[i];
        if let Some((group, members)) = GROUPS.iter().find(|(_, members)| named_by(field.name, members)) {
            let count = fields[i..].iter().take_while(|(f, _)| named_by(f.name, members)).count();
            let inner: Vec<_> = fields[i..i + count].iter().map(|(f, v)| (*f, *v)).collect();
            nodes.push((group.to_string(), Node::Object(flat(frame, &inner))));
            i += count;
            continue;
        }
        nodes.push((field.name.to_string(), Node::Value(text(frame, field, value), as_bool(value))));
        let prefix = format!("{}.", field.name);
        let count = fields[i + 1..].iter().take_while(|(f, _)| f.name.starts_with(&prefix)).count();
        let inner: Vec<_> = fields[i + 1..=i + count].iter().map(|(f, v)| (*f, *v)).collect();
        let mut children = nest(frame, &inner);
        if let Some((_, v)) = aliases.iter().find(|(owner, _)| *owner == field.name) {
            let alias = ALIASES_IN_TREES.iter().find(|(_, owners)| owners.contains(&field.name)).map_or("", |a| a.0);
            children.push((alias.to_string(), Node::Value(v.clone(), None)));
        }
        if !children.is_empty() {
            nodes.push((format!("{}_tree", field.name), Node::Object(children)));
        }
        i += 1 + count;
    }
    nodes
}

/// Does `name` match one of `members` (a name, or a prefix ending in `.`)?
fn named_by(name: &str, members: &[&str]) -> bool {
    members.iter().any(|m| if m.ends_with('.') { name.starts_with(m) } else { name == *m })
}

/// Fields one level deep.
fn flat(frame: &Frame<'_, '_>, fields: &[(&'static Field, Value<'_>)]) -> Vec<(String, Node)> {
    fields.iter().map(|(f, v)| (f.name.to_string(), Node::Value(text(frame, f, v), as_bool(v)))).collect()
}

fn as_bool(value: &Value<'_>) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        _ => None,
    }
}

/// `-T ek` without `-e`: each protocol's fields in one flat object, keyed `PROTOCOL_NAME`
/// with `_` for `.`.
fn flatten_layers(layers: Node) -> Node {
    let Node::Object(protocols) = layers else { return layers };
    let objects = protocols
        .into_iter()
        .map(|(protocol, node)| {
            let mut flat = Vec::new();
            flatten_into(&mut flat, &protocol.replace('.', "_"), node);
            (protocol.replace('.', "_"), Node::Object(flat))
        })
        .collect();
    Node::Object(objects)
}

/// Appends the members of `node` to `flat`, each subtree's after its own (tshark makes one
/// array of a key repeated in one object only: `eth.addr` in `eth.dst_tree` and in
/// `eth.src_tree` stays two keys).
fn flatten_into(flat: &mut Vec<(String, Node)>, protocol: &str, node: Node) {
    let Node::Object(members) = merge_repeats(node) else { return };
    for (key, member) in members {
        match member {
            Node::Object(_) => flatten_into(flat, protocol, member),
            value => flat.push((format!("{protocol}_{}", key.replace('.', "_")), value)),
        }
    }
}

/// Joins the values of a key repeated in an object into one array, where the key first stood.
fn merge_repeats(node: Node) -> Node {
    let Node::Object(members) = node else { return node };
    let mut merged: Vec<(String, Node)> = Vec::new();
    for (key, node) in members {
        let Some((_, first)) = merged.iter_mut().find(|(k, _)| *k == key) else {
            merged.push((key, node));
            continue;
        };
        let taken = std::mem::replace(first, Node::Values(Vec::new()));
        let mut values = match taken {
            Node::Values(values) => values,
            Node::Value(v, _) => vec![v],
            Node::Object(_) => Vec::new(),
        };
        if let Node::Value(v, _) = node {
            values.push(v);
        }
        *first = Node::Values(values);
    }
    Node::Object(merged)
}

/// tshark's `-T ek` without `-e` writes `frame.time` in ISO 8601 (`2023-11-14T22:13:20.000000000Z`,
/// UTC), with `-e` as `-T fields` does.
fn with_iso_time(layers: Node, ts_ns: i64) -> Node {
    let Node::Object(mut protocols) = layers else { return layers };
    let Some(Node::Object(frame)) = protocols.iter_mut().find(|(p, _)| p == "frame").map(|(_, n)| n) else {
        return Node::Object(protocols);
    };
    if let (Some((_, Node::Value(text, _))), Ok(ns)) =
        (frame.iter_mut().find(|(k, _)| k == "frame_frame_time"), u64::try_from(ts_ns))
    {
        let time = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(ns);
        *text = humantime::format_rfc3339_nanos(time).to_string();
    }
    Node::Object(protocols)
}

/// `-T ek` with `-e`: the fields keyed by their names with `_` for `.`.
fn ek_keys(layers: Node) -> Node {
    let Node::Object(members) = layers else { return layers };
    Node::Object(members.into_iter().map(|(k, v)| (k.replace('.', "_"), v)).collect())
}

fn write_string(out: &mut String, s: &str) {
    // serde_json's escaping of a string cannot fail
    out.push_str(&serde_json::to_string(s).unwrap_or_default());
}

/// `node` as tshark's `-T json` indents it: two spaces a level, `level` levels in.
fn write_pretty(out: &mut String, node: &Node, level: usize) {
    let pad = |out: &mut String, level: usize| out.extend(std::iter::repeat_n("  ", level));
    match node {
        Node::Value(v, _) => write_string(out, v),
        Node::Values(values) => {
            out.push_str("[\n");
            for (i, v) in values.iter().enumerate() {
                pad(out, level + 1);
                write_string(out, v);
                out.push_str(if i + 1 < values.len() { ",\n" } else { "\n" });
            }
            pad(out, level);
            out.push(']');
        }
        Node::Object(members) => {
            out.push_str("{\n");
            for (i, (key, member)) in members.iter().enumerate() {
                pad(out, level + 1);
                write_string(out, key);
                out.push_str(": ");
                write_pretty(out, member, level + 1);
                out.push_str(if i + 1 < members.len() { ",\n" } else { "\n" });
            }
            pad(out, level);
            out.push('}');
        }
    }
}

/// `node` on one line, as `-T ek` writes it: booleans as JSON's.
fn write_compact(out: &mut String, node: &Node) {
    match node {
        Node::Value(_, Some(b)) => out.push_str(if *b { "true" } else { "false" }),
        Node::Value(v, None) => write_string(out, v),
        Node::Values(values) => {
            out.push('[');
            for (i, v) in values.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, v);
            }
            out.push(']');
        }
        Node::Object(members) => {
            out.push('{');
            for (i, (key, member)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_compact(out, member);
            }
            out.push('}');
        }
    }
}
