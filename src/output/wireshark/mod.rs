//! rocescope's analysis inside Wireshark: the Lua post-dissector shipped with rocescope and the
//! machine-readable records it reads from the packet comments `annotate` writes
//! (docs/wireshark-plugin.md gives their grammar).

/// The Lua post-dissector, as `rocescope wireshark-plugin` prints and installs it.
pub const PLUGIN: &str = include_str!("rocescope.lua");

/// The file name the plugin is installed under.
pub const PLUGIN_FILE: &str = "rocescope.lua";

/// The version of the records' grammar: a record's first word is `rocescope/VERSION`; the
/// plugin reads the versions it knows and ignores the others. Adding a key keeps the version;
/// changing what a key means takes a new one.
pub const RECORD_VERSION: u32 = 1;

/// One record of a packet comment: its header line, `rocescope/1` and `key=value` words (the
/// field names without their `rocescope.` prefix), then the phrases that say it in words, a
/// line each.
#[derive(Debug)]
pub struct Record {
    header: String,
    phrases: Vec<String>,
}

impl Default for Record {
    fn default() -> Self {
        Record { header: format!("rocescope/{RECORD_VERSION}"), phrases: Vec::new() }
    }
}

impl Record {
    /// Adds `key=value`, the value escaped.
    pub fn value(&mut self, key: &str, value: impl std::fmt::Display) {
        let value = escape(&value.to_string());
        self.header.push_str(&format!(" {key}={value}"));
    }

    /// Adds a boolean field that is set: `key=1`.
    pub fn flag(&mut self, key: &str) {
        self.value(key, 1);
    }

    /// Adds a phrase line (its line breaks become spaces, so that it stays one line).
    pub fn phrase(&mut self, phrase: &str) {
        self.phrases.push(phrase.replace(['\r', '\n'], " "));
    }

    /// Is there nothing in it but its version?
    pub fn is_empty(&self) -> bool {
        !self.header.contains('=') && self.phrases.is_empty()
    }

    /// The record's lines: its header, then its phrases.
    pub fn text(&self) -> String {
        std::iter::once(self.header.as_str())
            .chain(self.phrases.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// A value as a record writes it: bytes other than ASCII letters, digits and `_ . - : , /`
/// as `%XX` (hexadecimal), so that a value holds no space, `=` or line break.
pub fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || b"_.-:,/".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_escaped_so_that_a_header_stays_one_line_of_words() {
        assert_eq!(escape("bth: truncated, 7%=\n"), "bth:%20truncated,%207%25%3D%0A");
        let mut record = Record::default();
        assert!(record.is_empty());
        record.value("analysis.flow", 7);
        record.flag("analysis.gap");
        record.phrase("two\nlines");
        assert_eq!(record.text(), "rocescope/1 analysis.flow=7 analysis.gap=1\ntwo lines");
    }
}
