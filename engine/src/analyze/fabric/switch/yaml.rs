//! YAML to a [`Node`] tree with lines, from `saphyr-parser`'s events (each with its span).
//! Only the first document is read; aliases are not followed (they read as empty scalars),
//! so a document cannot expand beyond its size; nesting is bounded by [`MAX_DEPTH`].

use saphyr_parser::{Event, Parser, ScanError};

use super::tree::{Entry, MAX_DEPTH, Node, Value, error};
use crate::analyze::fabric::model::ConfigError;

/// A map or list being built.
enum Open {
    Map { line: usize, entries: Vec<Entry>, key: Option<(String, usize)> },
    List { line: usize, items: Vec<Node> },
}

/// Parses the first YAML document of `text`; a syntax error is a `ConfigError` at its line.
/// An empty document reads as an empty map.
pub(crate) fn parse(file: &str, text: &str) -> Result<Node, ConfigError> {
    let lines = Lines::of(text);
    let mut open: Vec<Open> = Vec::new();
    for event in Parser::new_from_str(text) {
        let (event, span) = event.map_err(|scan| syntax_error(file, &lines, &scan))?;
        let line = lines.at(span.start.index());
        let done = match event {
            Event::Scalar(text, ..) => Node { line, value: Value::Scalar(text.into_owned()) },
            Event::Alias(_) => Node { line, value: Value::Scalar(String::new()) },
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                if open.len() >= MAX_DEPTH {
                    return Err(error(file, line, format!("YAML nested deeper than {MAX_DEPTH}")));
                }
                open.push(if matches!(event, Event::MappingStart(..)) {
                    Open::Map { line, entries: Vec::new(), key: None }
                } else {
                    Open::List { line, items: Vec::new() }
                });
                continue;
            }
            Event::MappingEnd | Event::SequenceEnd => match open.pop() {
                Some(Open::Map { line, entries, .. }) => Node { line, value: Value::Map(entries) },
                Some(Open::List { line, items }) => Node { line, value: Value::List(items) },
                None => continue,
            },
            Event::DocumentEnd | Event::StreamEnd => break,
            _ => continue,
        };
        if let Some(root) = attach(&mut open, done) {
            return Ok(root);
        }
    }
    Ok(Node { line: 1, value: Value::Map(Vec::new()) })
}

/// Puts a finished node into the map or list around it; the root when none is open.
fn attach(open: &mut [Open], node: Node) -> Option<Node> {
    match open.last_mut() {
        None => Some(node),
        Some(Open::List { items, .. }) => {
            items.push(node);
            None
        }
        Some(Open::Map { entries, key, .. }) => {
            match key.take() {
                Some((key, key_line)) => entries.push(Entry { key, key_line, node }),
                // A map or list as a key (never in NVUE's output) reads as an empty key.
                None => *key = Some((node.scalar().unwrap_or_default().to_string(), node.line)),
            }
            None
        }
    }
}

fn syntax_error(file: &str, lines: &Lines, scan: &ScanError) -> ConfigError {
    error(file, lines.at(scan.marker().index()), format!("YAML syntax error: {}", scan.info()))
}

/// Where the lines of a text begin, to number them as an editor does. The YAML scanner's own
/// numbers count a lone carriage return as a line break too (YAML 1.2, 5.4), and would name a
/// line past the file's last.
struct Lines {
    /// The character index of each line feed, in order.
    feeds: Vec<usize>,
}

impl Lines {
    fn of(text: &str) -> Lines {
        Lines { feeds: text.chars().enumerate().filter(|(_, c)| *c == '\n').map(|(at, _)| at).collect() }
    }

    /// The line (from 1) of the character at `index`.
    fn at(&self, index: usize) -> usize {
        1 + self.feeds.partition_point(|feed| *feed < index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_lines_of_keys_and_values() {
        let node = parse("f", "- header:\n    model: x\n- set:\n    qos:\n      roce:\n        enable: on\n").unwrap();
        let Value::List(items) = &node.value else { panic!("not a list: {node:?}") };
        let set = items.get(1).and_then(|item| item.entry("set")).unwrap();
        assert_eq!(set.key_line, 3);
        let enable = set.node.entry_at(&["qos", "roce", "enable"]).unwrap();
        assert_eq!((enable.key_line, enable.node.scalar()), (6, Some("on")));
    }

    #[test]
    fn errors_carry_their_line() {
        let err = parse("f", "a:\n  b: 1\n c: 2\n").unwrap_err();
        assert_eq!(err.line, 3, "{err}");
        let err = parse("f", "a:\n  b: [1, 2\nc: 3\n").unwrap_err();
        assert!(err.line >= 2, "{err}");
    }

    #[test]
    fn lines_are_counted_by_line_feeds_alone() {
        // a lone carriage return breaks a YAML line, not an editor's
        let node = parse("f", "a: 1\rb: 2\r\nc: 3\n").unwrap();
        let c = node.entry("c").unwrap();
        assert_eq!(c.key_line, 2);
        let err = parse("f", "a:\r  b: 1\r c: 2\n").unwrap_err();
        assert_eq!(err.line, 1, "{err}");
    }

    #[test]
    fn nesting_is_bounded() {
        let err = parse("f", &"[".repeat(100_000)).unwrap_err();
        assert_eq!(err.line, 1);
        let deep: String = (0..200).map(|depth| format!("{}k{depth}:\n", " ".repeat(depth))).collect();
        let err = parse("f", &deep).unwrap_err();
        assert!(err.message.contains("nested deeper"), "{}", err.message);
    }
}
