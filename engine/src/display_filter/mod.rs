//! Display filters (`-Y`), in the grammar and with the semantics of Wireshark 4.x: compiled
//! once against the field registry, then matched against each frame without allocating.
//!
//! A field that occurs more than once in a frame (a mirror frame's outer and inner `ip.src`;
//! `ip.addr`, which is source or destination) matches `==`, `<`, `in`, `contains`, `&` and
//! `~=` when some occurrence does, and `!=` only when every occurrence differs. A test on a
//! field the frame does not have is false. docs/display-filters.md has the whole grammar and
//! the differences from Wireshark.

mod literal;
mod syntax;

use literal::Literal;
use syntax::{Expr, FilterError, Function, Layers, Member, Operand, Relation, Slice, Test};

use crate::decode::DecodedFrame;
use crate::fields::{self, Field, FieldType, Frame, Shown, Value};
use crate::filter::Filter;

/// A compiled display filter.
#[derive(Debug)]
pub struct DisplayFilter {
    text: String,
    root: Node,
}

/// The compiled tree, as shallow as the expression's (see `syntax`).
#[derive(Debug)]
enum Node {
    All(Vec<Node>),
    Any(Vec<Node>),
    /// An odd number hold.
    Odd(Vec<Node>),
    Not(Box<Node>),
    Check(Check),
}

/// One test on one field.
#[derive(Debug)]
struct Check {
    field: &'static Field,
    slice: Option<Slice>,
    /// `field#n`, `field#[ranges]`: only the values of those layers.
    layer: Option<LayerOf>,
    measure: Measure,
    kind: Kind,
}

/// What of a field's values a check tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Measure {
    Values,
    /// `len(field)`: each value's length in bytes.
    Len,
    /// `count(field)`: how many values there are.
    Count,
}

/// Layers of a field that gives `per_layer` values a layer.
#[derive(Debug, Clone)]
struct LayerOf {
    layers: Layers,
    per_layer: usize,
}

/// Fields that give two values a layer, its source and its destination: `ip.addr#2` is the
/// inner IP header's two addresses, as in Wireshark.
const PAIRED: [&str; 4] = ["eth.addr", "ip.addr", "ipv6.addr", "udp.port"];

#[derive(Debug)]
enum Kind {
    Present,
    Compare(Relation, Literal),
    In(Vec<(Literal, Option<Literal>)>),
    Contains(Literal),
    BitAnd(Literal),
    Matches(regex::bytes::Regex),
}

impl DisplayFilter {
    /// Compiles `text`; the error is one line that names the filter (its start, when it is
    /// long) and the column.
    pub fn compile(text: &str) -> Result<DisplayFilter, String> {
        let compiled = syntax::parse(text).and_then(|e| node(&e));
        compiled.map(|root| DisplayFilter { text: text.to_string(), root }).map_err(|e| format!("{}: {e}", named(text)))
    }

    /// Does the frame match?
    pub fn matches(&self, frame: &Frame<'_, '_>) -> bool {
        self.root.eval(frame)
    }

    /// Does the filter read the analysis's verdicts (`rocescope.analysis.*`)?
    pub fn uses_analysis(&self) -> bool {
        self.root.any_field(&|f| f.name.starts_with("rocescope.analysis."))
    }

    /// Does the filter read ICRC results (`rocescope.icrc.*`)?
    pub fn uses_icrc(&self) -> bool {
        self.root.any_field(&|f| f.name.starts_with("rocescope.icrc."))
    }

    /// Does the filter read where a frame falls in the capture (`frame.number`,
    /// `frame.time_relative`), which a part of a capture analysed on its own counts from its
    /// own first frame?
    pub fn uses_position(&self) -> bool {
        self.root.any_field(&|f| matches!(f.name, "frame.number" | "frame.time_relative")) || self.uses_previous_frame()
    }

    /// Does the filter read the time of the frame before (`frame.time_delta`,
    /// `frame.time_delta_displayed`), which a thread that sees some frames only lacks?
    pub fn uses_previous_frame(&self) -> bool {
        self.root.any_field(&|f| matches!(f.name, "frame.time_delta" | "frame.time_delta_displayed"))
    }

    /// Does the filter `text` read where a frame falls ([`DisplayFilter::uses_position`])? A
    /// text that does not compile is taken to.
    pub fn is_positional(text: &str) -> bool {
        DisplayFilter::compile(text).map(|f| f.uses_position()).unwrap_or(true)
    }

    pub fn text(&self) -> &str {
        &self.text
    }
}

/// `analyze -Y` and `capture -Y`: which frames are analysed. The analysis's own fields
/// cannot choose them.
pub struct Selection {
    filter: Option<DisplayFilter>,
    /// `--qp`, `--ip` and `--opcode`, as `packets` takes them.
    options: Filter,
    /// The time of the capture's first frame, for `frame.time_relative`.
    first_ts_ns: Option<i64>,
    /// The times of the frame asked about last and of the last kept, for `frame.time_delta`
    /// and `frame.time_delta_displayed`.
    previous_ts_ns: Option<i64>,
    previous_kept_ts_ns: Option<i64>,
    /// Those two times as the last frame asked about saw them.
    previous_times: (Option<i64>, Option<i64>),
}

impl Selection {
    pub fn new(filter: Option<&str>) -> Result<Selection, String> {
        let filter = filter.map(DisplayFilter::compile).transpose()?;
        if let Some(f) = filter.as_ref().filter(|f| f.uses_analysis()) {
            return Err(format!(
                "{}: rocescope.analysis.* fields are what the analysis finds; they cannot choose the frames it analyses (use them with `packets -Y`)",
                named(f.text())
            ));
        }
        Ok(Selection {
            filter,
            options: Filter::default(),
            first_ts_ns: None,
            previous_ts_ns: None,
            previous_kept_ts_ns: None,
            previous_times: (None, None),
        })
    }

    /// The selection, of the frames `options` also choose.
    pub fn choosing(self, options: Filter) -> Selection {
        Selection { options, ..self }
    }

    /// The selection of a capture whose first frame was captured at `first_ts_ns` (`None`:
    /// the first frame asked about): the frames asked about continue it.
    pub fn continuing(self, first_ts_ns: Option<i64>) -> Selection {
        Selection { first_ts_ns, ..self }
    }

    /// When the capture's first frame was captured, once a frame was asked about.
    pub fn first_ts_ns(&self) -> Option<i64> {
        self.first_ts_ns
    }

    /// Is the frame analysed? (Every frame is asked, in capture order.)
    pub fn keeps(&mut self, number: u64, packet: &DecodedFrame<'_>) -> bool {
        self.note(packet.ts_ns, |selection, first_ts_ns, previous| {
            selection.keeps_with(first_ts_ns, previous, number, packet)
        })
    }

    /// [`Selection::keeps`] for a selection that keeps every frame ([`Selection::keeps_all`]),
    /// which needs only the frame's time.
    pub fn keep_at(&mut self, ts_ns: i64) {
        self.note(ts_ns, |_, _, _| true);
    }

    /// Notes the times a frame of time `ts_ns` moves on, as `decide` (given the capture's first
    /// time and the frame's `previous` times) keeps it or not.
    fn note(&mut self, ts_ns: i64, decide: impl FnOnce(&Self, i64, (Option<i64>, Option<i64>)) -> bool) -> bool {
        let first_ts_ns = *self.first_ts_ns.get_or_insert(ts_ns);
        let previous = (self.previous_ts_ns.replace(ts_ns), self.previous_kept_ts_ns);
        self.previous_times = previous;
        let kept = decide(self, first_ts_ns, previous);
        if kept {
            self.previous_kept_ts_ns = Some(ts_ns);
        }
        kept
    }

    /// The times of the frame before the one [`Selection::keeps`] was last asked about, and of
    /// the last kept before it (`frame.time_delta`, `frame.time_delta_displayed`).
    pub fn previous_times(&self) -> (Option<i64>, Option<i64>) {
        self.previous_times
    }

    /// Does the selection read the frame before ([`DisplayFilter::uses_previous_frame`])? Then
    /// only [`Selection::keeps`], asked about every frame in order, answers it.
    pub fn reads_previous_frame(&self) -> bool {
        self.filter.as_ref().is_some_and(DisplayFilter::uses_previous_frame)
    }

    /// Does the selection keep every frame (neither a filter nor an option)? Then no frame
    /// needs to be decoded whole for it.
    pub fn keeps_all(&self) -> bool {
        self.filter.is_none() && self.options.matches_all()
    }

    /// Is the frame analysed, in a capture whose first frame was captured at `first_ts_ns`?
    /// For threads that are each asked about some frames only.
    pub fn keeps_after(&self, first_ts_ns: i64, number: u64, packet: &DecodedFrame<'_>) -> bool {
        self.keeps_with(first_ts_ns, (None, None), number, packet)
    }

    /// `previous`: the times of the frame before and of the last kept.
    fn keeps_with(
        &self,
        first_ts_ns: i64,
        previous: (Option<i64>, Option<i64>),
        number: u64,
        packet: &DecodedFrame<'_>,
    ) -> bool {
        self.options.matches(packet)
            && self.filter.as_ref().is_none_or(|f| {
                f.matches(&Frame {
                    number,
                    packet,
                    first_ts_ns,
                    previous_ts_ns: previous.0,
                    previous_shown_ts_ns: previous.1,
                    verdict: None,
                })
            })
    }

    /// Does the filter need ICRCs computed while decoding?
    pub fn reads_icrc(&self) -> bool {
        self.filter.as_ref().is_some_and(DisplayFilter::uses_icrc)
    }
}

/// Characters of a filter quoted in full in a message; a longer one is quoted by its start.
const QUOTED_CHARS: usize = 100;

/// `display filter "…"`, the text cut to its first characters when it is long.
fn named(text: &str) -> String {
    let length = text.chars().count();
    if length <= QUOTED_CHARS {
        return format!("display filter \"{text}\"");
    }
    let start: String = text.chars().take(QUOTED_CHARS).collect();
    format!("display filter \"{start}…\" ({length} characters)")
}

fn node(e: &Expr) -> Result<Node, FilterError> {
    let all = |operands: &[Expr]| operands.iter().map(node).collect::<Result<Vec<_>, _>>();
    Ok(match e {
        Expr::And(operands) => Node::All(all(operands)?),
        Expr::Or(operands) => Node::Any(all(operands)?),
        Expr::Xor(operands) => Node::Odd(all(operands)?),
        Expr::Not(a) => Node::Not(Box::new(node(a)?)),
        Expr::Test(t) => Node::Check(check(t)?),
    })
}

/// The value an integer field's value string names (`ip.proto == "UDP"`, `ip.dsfield.dscp ==
/// AF31`: tshark 4.0 takes the names its details pane shows, in any case, quoted or not);
/// `None` where the test is not of the field's own values (a slice, `len()`, `count()`), the
/// text is a number, the field has no names, or none is the text.
fn value_of_name(o: &Operand, f: &Field, own_values: bool) -> Option<Result<Literal, FilterError>> {
    let (FieldType::Uint(bits), Shown::Named(meaning), true) = (f.ty, f.shown, own_values) else { return None };
    if literal::integer(&o.text).is_some() {
        return None;
    }
    // names are looked up among the first 65,536 values (every named field is narrower)
    let most = if bits >= 16 { 0xFFFF } else { (1u64 << bits) - 1 };
    let mut name = String::new();
    let mut named = (0..=most).filter(|&v| {
        name.clear();
        meaning(&mut name, v);
        name.eq_ignore_ascii_case(&o.text)
    });
    let first = named.next()?;
    let others: Vec<u64> = named.take(3).collect();
    if others.is_empty() {
        return Some(Ok(Literal::Uint(first)));
    }
    let values: Vec<String> = [first].iter().chain(&others).map(u64::to_string).collect();
    Some(Err(FilterError::new(
        o.at,
        format!("\"{}\" names several values of {} ({}…): give the number", o.text, f.name, values.join(", ")),
    )))
}

/// Does the text look like a field name (rather than a value)?
fn looks_like_field(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_alphabetic())
        && text.contains('.')
        && text.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.')
        && text.parse::<std::net::Ipv6Addr>().is_err()
}

/// The field an operand names.
fn field(o: &Operand) -> Result<&'static Field, FilterError> {
    if o.quoted {
        return Err(FilterError::new(o.at, format!("\"{}\" is a value, not a field", o.text)));
    }
    fields::by_name(&o.text).ok_or_else(|| {
        let hint = fields::nearest(&o.text).map(|n| format!(" (did you mean {n}?)")).unwrap_or_default();
        FilterError::new(o.at, format!("unknown field \"{}\"{hint}; `rocescope fields` lists them", o.text))
    })
}

/// What a test's values are read as: the field's type, or its slice's bytes, or the integer
/// `len()` and `count()` give.
struct Target {
    field: &'static Field,
    ty: FieldType,
    sliced: bool,
    measured: bool,
}

/// The value an operand writes, read as `target` takes it.
fn value(o: &Operand, target: &Target) -> Result<Literal, FilterError> {
    let f = target.field;
    if !o.quoted && fields::by_name(&o.text).is_some() {
        return Err(FilterError::new(
            o.at,
            format!("comparing two fields ({} and {}) is not supported", f.name, o.text),
        ));
    }
    if o.slice.is_some() || o.layer.is_some() || o.function.is_some() {
        return Err(FilterError::new(o.at, "only a field can be sliced, layered or measured"));
    }
    if let Some(named) = value_of_name(o, f, !target.sliced && !target.measured) {
        return named;
    }
    literal::read(&o.text, o.quoted, target.ty, target.sliced).map_err(|expected| {
        if looks_like_field(&o.text) {
            return field(o).err().unwrap_or_else(|| FilterError::new(o.at, "unexpected field"));
        }
        let what = match (target.sliced, target.measured) {
            (true, _) => format!("a slice of {}", f.name),
            (false, true) => "a length or a count".to_string(),
            (false, false) => format!("{} ({})", f.name, f.ty.name()),
        };
        FilterError::new(o.at, format!("\"{}\" is not {expected}, as {what} needs", o.text))
    })
}

/// Can the field's values be cut into bytes (sliced, measured by `len()`)? A protocol's
/// bytes are those it takes in the frame (`len(ip)`: the IPv4 header's length).
fn has_bytes(f: &Field) -> bool {
    matches!(
        f.ty,
        FieldType::Bytes
            | FieldType::Ether
            | FieldType::Ipv4
            | FieldType::Ipv6
            | FieldType::String
            | FieldType::Protocol
    )
}

fn check(t: &Test) -> Result<Check, FilterError> {
    let subject = t.subject();
    let f = field(subject)?;
    let measure = match subject.function {
        None => Measure::Values,
        Some(Function::Len) => Measure::Len,
        Some(Function::Count) => Measure::Count,
    };
    let sliced = subject.slice.is_some();
    let refuse = |message: String| Err(FilterError::new(subject.at, message));
    if sliced && !has_bytes(f) {
        return refuse(format!("{} ({}) cannot be sliced", f.name, f.ty.name()));
    }
    if measure != Measure::Values && sliced {
        return refuse("len() and count() take a whole field, not a slice".into());
    }
    if measure == Measure::Len && !has_bytes(f) {
        return refuse(format!("len() needs a byte, string or address field; {} is {}", f.name, f.ty.name()));
    }
    if measure == Measure::Count && subject.layer.is_some() {
        return refuse("count() counts a field's values in every layer; it takes no #layer".into());
    }
    if measure != Measure::Values && matches!(t, Test::In(..)) {
        return refuse(
            "only a field is tested for membership in a set, not len() or count() (as in tshark 4.0)".into(),
        );
    }
    if measure != Measure::Values && matches!(t, Test::Present(_)) {
        return refuse(format!("{}() needs a comparison", if measure == Measure::Len { "len" } else { "count" }));
    }
    let measured = measure != Measure::Values;
    // a protocol compares as its bytes
    let ty = match f.ty {
        _ if measured => FieldType::Uint(32),
        FieldType::Protocol => FieldType::Bytes,
        ty => ty,
    };
    let target = Target { field: f, ty, sliced, measured };
    let per_layer = if PAIRED.contains(&f.name) { 2 } else { 1 };
    let layer = subject.layer.clone().map(|layers| LayerOf { layers, per_layer });
    Ok(Check { field: f, slice: subject.slice, layer, measure, kind: kind_of(t, &target)? })
}

/// What a test asks of each value.
fn kind_of(t: &Test, target: &Target) -> Result<Kind, FilterError> {
    let f = target.field;
    let refuse = |o: &Operand, message: String| Err(FilterError::new(o.at, message));
    Ok(match t {
        Test::Present(_) => Kind::Present,
        Test::Compare(_, relation, o) => {
            let v = value(o, target)?;
            if matches!(relation, Relation::Lt | Relation::Gt | Relation::Le | Relation::Ge)
                && matches!(v, Literal::Str(_))
            {
                return refuse(o, format!("{} (a string) has no order", f.name));
            }
            Kind::Compare(*relation, v)
        }
        Test::In(_, members) => Kind::In(
            members
                .iter()
                .map(|m| match m {
                    Member::One(o) => Ok((value(o, target)?, None)),
                    Member::Range(low, high) => Ok((value(low, target)?, Some(value(high, target)?))),
                })
                .collect::<Result<_, FilterError>>()?,
        ),
        Test::Contains(_, o) => {
            if !(target.sliced || matches!(target.ty, FieldType::Bytes | FieldType::String)) {
                return refuse(o, format!("contains needs a byte or string field; {} is {}", f.name, f.ty.name()));
            }
            Kind::Contains(value(o, target)?)
        }
        Test::BitAnd(_, o) => {
            if !(target.sliced || matches!(target.ty, FieldType::Uint(_) | FieldType::Bool(_) | FieldType::Bytes)) {
                return refuse(o, format!("& needs an integer or byte field; {} is {}", f.name, f.ty.name()));
            }
            Kind::BitAnd(value(o, target)?)
        }
        Test::Matches(_, o) => Kind::Matches(regex_of(o, target)?),
    })
}

/// The regular expression of `field matches "…"`, on a string or byte field or a slice (as in
/// tshark 4.0, not on addresses or numbers).
fn regex_of(o: &Operand, target: &Target) -> Result<regex::bytes::Regex, FilterError> {
    let f = target.field;
    if !(target.sliced || matches!(target.ty, FieldType::Bytes | FieldType::String)) {
        return Err(FilterError::new(
            o.at,
            format!("matches needs a string or byte field; {} is {}", f.name, f.ty.name()),
        ));
    }
    if !o.quoted {
        return Err(FilterError::new(o.at, "matches takes a regular expression in double quotes"));
    }
    regex::bytes::Regex::new(&o.text).map_err(|e| {
        let text = e.to_string();
        let reason = text.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or_default();
        FilterError::new(o.at, format!("\"{}\" is not a regular expression: {reason}", o.text))
    })
}

impl Node {
    fn eval(&self, frame: &Frame<'_, '_>) -> bool {
        match self {
            Node::All(operands) => operands.iter().all(|n| n.eval(frame)),
            Node::Any(operands) => operands.iter().any(|n| n.eval(frame)),
            Node::Odd(operands) => operands.iter().fold(false, |odd, n| odd != n.eval(frame)),
            Node::Not(a) => !a.eval(frame),
            Node::Check(c) => c.eval(frame),
        }
    }

    fn any_field(&self, test: &dyn Fn(&Field) -> bool) -> bool {
        match self {
            Node::All(operands) | Node::Any(operands) | Node::Odd(operands) => {
                operands.iter().any(|n| n.any_field(test))
            }
            Node::Not(a) => a.any_field(test),
            Node::Check(c) => test(c.field),
        }
    }
}

/// The bytes of a value (for slices and byte comparisons), in `buffer` where they are not
/// already bytes.
fn bytes_of<'v>(value: &'v Value<'_>, buffer: &'v mut [u8; 16]) -> Option<&'v [u8]> {
    match value {
        Value::Bytes(b) => Some(b),
        Value::Str(s) => Some(s.as_bytes()),
        Value::Ether(m) => {
            buffer[..6].copy_from_slice(m);
            Some(&buffer[..6])
        }
        Value::Ipv4(a) => {
            buffer[..4].copy_from_slice(a);
            Some(&buffer[..4])
        }
        Value::Ipv6(a) => {
            buffer.copy_from_slice(a);
            Some(&buffer[..])
        }
        _ => None,
    }
}

fn cut(bytes: &[u8], slice: Slice) -> Option<&[u8]> {
    let rest = bytes.get(slice.start..)?;
    match slice.len {
        Some(len) => rest.get(..len),
        None => Some(rest),
    }
}

/// A value and a literal of the same kind, ordered (None when they cannot be compared).
fn order(value: &Value<'_>, lit: &Literal, slice: Option<Slice>) -> Option<std::cmp::Ordering> {
    let mut buffer = [0u8; 16];
    if let Some(s) = slice {
        let bytes = cut(bytes_of(value, &mut buffer)?, s)?;
        return match lit {
            Literal::Bytes(b) => Some(bytes.cmp(b)),
            _ => None,
        };
    }
    match (value, lit) {
        (Value::Uint(_) | Value::Bool(_), Literal::Uint(l)) => value.as_uint().map(|v| v.cmp(l)),
        (Value::Ipv4(a), Literal::Ipv4 { net, mask }) => {
            let v = u32::from_be_bytes(*a);
            Some(if v & mask == *net { std::cmp::Ordering::Equal } else { v.cmp(net) })
        }
        (Value::Ipv6(a), Literal::Ipv6 { net, mask }) => {
            let v = u128::from_be_bytes(*a);
            Some(if v & mask == *net { std::cmp::Ordering::Equal } else { v.cmp(net) })
        }
        (Value::Ether(m), Literal::Ether(l)) => Some(m.cmp(l)),
        (Value::Str(s), Literal::Str(l)) => Some((*s).cmp(l.as_str())),
        (Value::Time(t), Literal::Time(l)) => Some(t.cmp(l)),
        (Value::Error(e), Literal::Str(l)) => Some(e.to_string().as_str().cmp(l.as_str())),
        (v, Literal::Bytes(l)) => bytes_of(v, &mut buffer).map(|b| b.cmp(l.as_slice())),
        _ => None,
    }
}

fn contains(value: &Value<'_>, lit: &Literal, slice: Option<Slice>) -> bool {
    if let (Value::Error(e), Literal::Str(needle)) = (value, lit) {
        return e.to_string().contains(needle.as_str());
    }
    let mut buffer = [0u8; 16];
    let Some(mut bytes) = bytes_of(value, &mut buffer) else { return false };
    if let Some(s) = slice {
        bytes = cut(bytes, s).unwrap_or_default();
    }
    let needle: &[u8] = match lit {
        Literal::Bytes(b) => b,
        Literal::Str(s) => s.as_bytes(),
        _ => return false,
    };
    needle.is_empty() || bytes.windows(needle.len()).any(|w| w == needle)
}

fn bit_and(value: &Value<'_>, lit: &Literal, slice: Option<Slice>) -> bool {
    match (value.as_uint(), lit, slice) {
        (Some(v), Literal::Uint(mask), None) => v & mask != 0,
        _ => {
            let mut buffer = [0u8; 16];
            let bytes = bytes_of(value, &mut buffer).and_then(|b| match slice {
                Some(s) => cut(b, s),
                None => Some(b),
            });
            match (bytes, lit) {
                (Some(b), Literal::Bytes(mask)) => b.iter().zip(mask).any(|(x, m)| x & m != 0),
                _ => false,
            }
        }
    }
}

impl Check {
    /// Does one occurrence satisfy the test (for `!=`: differ)?
    fn holds(&self, value: &Value<'_>) -> bool {
        use std::cmp::Ordering::*;
        match &self.kind {
            Kind::Present => true,
            Kind::Compare(relation, lit) => {
                let o = order(value, lit, self.slice);
                match relation {
                    Relation::Eq => o == Some(Equal),
                    Relation::Ne | Relation::AnyNe => o.is_some_and(|o| o != Equal),
                    Relation::Lt => o == Some(Less),
                    Relation::Gt => o == Some(Greater),
                    Relation::Le => matches!(o, Some(Less | Equal)),
                    Relation::Ge => matches!(o, Some(Greater | Equal)),
                }
            }
            Kind::In(members) => members.iter().any(|(low, high)| match high {
                None => order(value, low, self.slice) == Some(Equal),
                Some(high) => {
                    matches!(order(value, low, self.slice), Some(Greater | Equal))
                        && matches!(order(value, high, self.slice), Some(Less | Equal))
                }
            }),
            Kind::Contains(lit) => contains(value, lit, self.slice),
            Kind::BitAnd(lit) => bit_and(value, lit, self.slice),
            Kind::Matches(re) => {
                let mut buffer = [0u8; 16];
                let bytes = bytes_of(value, &mut buffer);
                bytes.and_then(|b| self.slice.map_or(Some(b), |s| cut(b, s))).is_some_and(|b| re.is_match(b))
            }
        }
    }

    /// Does the check read a protocol's bytes (`len(ip)`, `frame contains "abc"`, `udp[0:2]`),
    /// not whether it is present?
    fn reads_protocol_bytes(&self) -> bool {
        self.field.ty == FieldType::Protocol && (self.measure == Measure::Len || !matches!(self.kind, Kind::Present))
    }

    /// The values the check tests: the field's, or a protocol's bytes, one value for each
    /// occurrence.
    fn values<'a>(&self, frame: &Frame<'_, 'a>, sink: &mut dyn FnMut(Value<'a>)) {
        if !self.reads_protocol_bytes() {
            return self.field.values(frame, sink);
        }
        let data = frame.packet.data;
        crate::fields::protocols::protocols(frame, &mut |name, span| {
            if name == self.field.name {
                sink(Value::Bytes(data.get(span).unwrap_or_default()));
            }
        });
    }

    /// How many layers of the field `frame` has, where a layer range counts from the last.
    fn layers_in(&self, frame: &Frame<'_, '_>) -> usize {
        let Some(l) = self.layer.as_ref().filter(|l| l.layers.count_from_the_end()) else { return 0 };
        let mut values = 0usize;
        self.field.values(frame, &mut |_| values += 1);
        values.div_ceil(l.per_layer)
    }

    fn eval(&self, frame: &Frame<'_, '_>) -> bool {
        let (mut seen, mut any, mut all) = (false, false, true);
        let (mut index, mut count) = (0usize, 0u64);
        let layers = self.layers_in(frame);
        self.values(frame, &mut |v| {
            let in_layer = self.layer.as_ref().is_none_or(|l| l.layers.covers(index / l.per_layer + 1, layers));
            index += 1;
            if !in_layer {
                return;
            }
            count += 1;
            // composed text is written out to be compared
            let mut text = String::new();
            let v = match v {
                Value::Composed(composed) => {
                    composed.write(&mut text, frame, self.field);
                    Value::Str(&text)
                }
                v => v,
            };
            let v = match self.measure {
                Measure::Values => v,
                Measure::Len => Value::Uint(bytes_of(&v, &mut [0; 16]).map_or(0, |b| b.len() as u64)),
                Measure::Count => return,
            };
            let holds = self.holds(&v);
            seen = true;
            any |= holds;
            all &= holds;
        });
        match self.kind {
            // as in tshark 4.0, a field the frame lacks has no count: a test of it is false
            _ if self.measure == Measure::Count => count > 0 && self.holds(&Value::Uint(count)),
            // Wireshark 4: "!=" is "all not equal"; a missing field matches nothing
            Kind::Compare(Relation::Ne, _) => seen && all,
            _ => any,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> String {
        DisplayFilter::compile(text).err().unwrap_or_default()
    }

    #[test]
    fn errors_name_the_filter_the_column_and_the_nearest_field() {
        assert_eq!(
            error("infiniband.bth.pns == 3"),
            "display filter \"infiniband.bth.pns == 3\": column 1: unknown field \"infiniband.bth.pns\" (did you mean infiniband.bth.psn?); `rocescope fields` lists them"
        );
        assert!(error("ip.src == 10.0.0.300").contains("column 11: \"10.0.0.300\" is not an IPv4 address or network"));
        assert!(error("ip.src contains 10").contains("contains needs a byte or string field"));
        assert!(error("infiniband.bth.psn[0:1] == 1").contains("cannot be sliced"));
        assert!(error("ip.src == ip.dst").contains("comparing two fields"));
        assert!(error("ip.src == ").contains("column 11: expected a field or a value"));
        assert!(
            DisplayFilter::compile("eth.dst[0:3] == 01:80:c2 && !(udp.port in {4791, 4789}) || ip.addr == 10.0.0.0/8")
                .is_ok()
        );
    }

    /// `frame.number == n` for each n, joined by `joiner`.
    fn numbers_filter(numbers: impl Iterator<Item = u64>, joiner: &str) -> String {
        numbers.map(|n| format!("frame.number == {n}")).collect::<Vec<_>>().join(joiner)
    }

    #[test]
    fn a_filter_of_100k_terms_compiles_and_matches() {
        let bytes = [0u8; 60];
        let packet = crate::decode::Decoder::default().decode(&crate::capture::Record::ethernet(&bytes));
        let frame = Frame::alone(7, &packet);
        let others = || 100..100_100;
        let matches = |text: &str| DisplayFilter::compile(text).expect("compiles").matches(&frame);
        assert!(matches(&numbers_filter(others().chain([7]), " || ")));
        assert!(!matches(&numbers_filter(others(), " or ")));
        assert!(matches(&format!("!({}) && eth", numbers_filter(others(), " || "))));
        assert!(!matches(&format!("frame.number == 7 && {}", numbers_filter(others(), " || "))));
        assert!(matches(&numbers_filter([7, 7, 7].into_iter(), " ^^ ")), "three true: an odd number hold");
        assert!(!matches(&numbers_filter([7, 7, 8].into_iter(), " xor ")));
    }

    #[test]
    fn integer_fields_take_the_names_of_their_values() {
        let compiled = |text: &str| DisplayFilter::compile(text).map(|f| format!("{:?}", f.root));
        assert_eq!(compiled("ip.proto == \"UDP\""), compiled("ip.proto == 17"));
        assert_eq!(compiled("ip.proto == \"udp\""), compiled("ip.proto == 17"));
        assert_eq!(compiled("eth.type == IPv4"), compiled("eth.type == 0x0800"));
        assert_eq!(compiled("ip.dsfield.dscp in {AF31, CS6}"), compiled("ip.dsfield.dscp in {26, 48}"));
        assert!(
            error("ip.proto == udp").contains("comparing two fields (ip.proto and udp)"),
            "a bare protocol name is a field, as in tshark"
        );
        assert!(error("ip.dsfield.dscp == AF99").contains("column 20: \"AF99\" is not an integer"));
        // a name several values share is no value
        let (field, name) = fields::all()
            .find_map(|f| {
                let (FieldType::Uint(bits), Shown::Named(meaning)) = (f.ty, f.shown) else { return None };
                let mut names = std::collections::HashMap::new();
                (0..=(1u64 << bits.min(16)) - 1).find_map(|v| {
                    let mut name = String::new();
                    meaning(&mut name, v);
                    (!name.is_empty() && names.insert(name.clone(), v).is_some()).then_some((f.name, name))
                })
            })
            .expect("a field with a name several values share");
        assert!(
            error(&format!("{field} == \"{name}\"")).contains(&format!("\"{name}\" names several values of {field} ("))
        );
    }

    #[test]
    fn functions_layers_and_matches_are_refused_where_they_mean_nothing() {
        assert!(
            error("len(ip.ttl) == 1")
                .contains("column 5: len() needs a byte, string or address field; ip.ttl is FT_UINT8")
        );
        assert!(error("count(ip.src#2) == 1").contains("it takes no #layer"));
        assert!(error("len(eth.src)").contains("len() needs a comparison"));
        assert!(error("count(ip.src) in {1, 2}").contains("only a field is tested for membership"));
        assert!(error("len(eth.src[0:2]) == 2").contains("take a whole field, not a slice"));
        assert!(error("ip.src matches \"10\"").contains("matches needs a string or byte field; ip.src is FT_IPv4"));
        assert!(error("rocescope.icrc.status matches ok").contains("a regular expression in double quotes"));
        let bad = error("rocescope.icrc.status matches \"(\"");
        assert!(bad.contains("column 31: \"(\" is not a regular expression: ") && !bad.contains('\n'), "{bad}");
        assert!(error("len(eth.src) == x").contains("\"x\" is not an integer, as a length or a count needs"));
        assert!(
            DisplayFilter::compile("rocescope.icrc.status matches \"^(ok|bad)$\" && len(rocescope.frame.kind) > 2")
                .is_ok()
        );
    }

    #[test]
    fn a_long_filter_is_named_by_its_start() {
        let deep = format!("{}eth{}", "(".repeat(200), ")".repeat(200));
        assert_eq!(
            error(&deep),
            format!(
                "display filter \"{}…\" (403 characters): column 129: parentheses and \"not\" nest more than 128 deep, rocescope's limit",
                "(".repeat(100)
            )
        );
    }
}
