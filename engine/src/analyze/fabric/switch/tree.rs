//! A parsed JSON or YAML document as a tree whose every key and value knows its line, the
//! shape the SONiC and NVUE readers walk; and the helpers they share.

use crate::analyze::fabric::model::{At, ConfigError};

/// The deepest nesting of maps and lists accepted: switch configurations nest 6 or 7 deep.
pub(crate) const MAX_DEPTH: usize = 64;

/// One value of the document and the line (from 1) where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub line: usize,
    pub value: Value,
}

/// A node's value: scalars are kept as written (JSON strings unescaped, numbers as text).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Map(Vec<Entry>),
    List(Vec<Node>),
    Scalar(String),
}

/// One key of a map, its line and its value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub key: String,
    pub key_line: usize,
    pub node: Node,
}

impl Node {
    /// The entries of a map (none for other values).
    pub fn entries(&self) -> &[Entry] {
        match &self.value {
            Value::Map(entries) => entries,
            _ => &[],
        }
    }

    /// The entry of a map under `key` (the first, if the key repeats).
    pub fn entry(&self, key: &str) -> Option<&Entry> {
        self.entries().iter().find(|entry| entry.key == key)
    }

    /// The value under `key` of a map.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|entry| &entry.node)
    }

    /// The entry at the end of `path`, from this map.
    pub fn entry_at(&self, path: &[&str]) -> Option<&Entry> {
        let (last, parents) = path.split_last()?;
        let mut node = self;
        for key in parents {
            node = node.get(key)?;
        }
        node.entry(last)
    }

    /// The text of a scalar.
    pub fn scalar(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar(text) => Some(text),
            _ => None,
        }
    }
}

/// `At` of a line of `file`.
pub(crate) fn at(file: &str, line: usize) -> At {
    At { file: file.to_string(), line }
}

/// A `ConfigError` at a line of `file`.
pub(crate) fn error(file: &str, line: usize, message: impl Into<String>) -> ConfigError {
    ConfigError { file: file.to_string(), line, message: message.into() }
}

/// The value seen most often, and the first place it was seen; ties go to the first seen.
pub(crate) fn most_common<T: Ord + Clone>(seen: &[(T, usize)]) -> Option<(T, usize)> {
    // value → (count, order of first sighting, line of first sighting)
    let mut counts: std::collections::BTreeMap<&T, (usize, usize, usize)> = std::collections::BTreeMap::new();
    for (order, (value, line)) in seen.iter().enumerate() {
        counts.entry(value).or_insert((0, order, *line)).0 += 1;
    }
    counts
        .into_iter()
        .max_by(|(_, (count_a, order_a, _)), (_, (count_b, order_b, _))| {
            count_a.cmp(count_b).then(order_b.cmp(order_a))
        })
        .map(|(value, (_, _, line))| (value.clone(), line))
}

/// A priority (0..=7) as written, or an error at `line`.
pub(crate) fn parse_priority(file: &str, line: usize, text: &str, what: &str) -> Result<u8, ConfigError> {
    match text.trim().parse::<u8>() {
        Ok(priority) if priority <= 7 => Ok(priority),
        _ => Err(error(file, line, format!("{what} `{text}` is not a priority 0..=7"))),
    }
}

/// A DSCP (0..=63) as written, or an error at `line`.
pub(crate) fn parse_dscp(file: &str, line: usize, text: &str) -> Result<u8, ConfigError> {
    match text.trim().parse::<u8>() {
        Ok(dscp) if dscp <= 63 => Ok(dscp),
        _ => Err(error(file, line, format!("DSCP `{text}` is not 0..=63"))),
    }
}
