//! Field export, `packets -T fields -e FIELD …`, with tshark's `-E` options: `header=y|n`,
//! `separator=/t|/s|<char>`, `occurrence=f|l|a`, `aggregator=,|/s|<char>`, `quote=d|s|n`. Each
//! value is printed as tshark 4.0 prints it ([`crate::fields::write_tshark`]), so that a tshark
//! pipeline can switch to rocescope by changing the program name.

use crate::fields::{self, Field, Frame, write_tshark};

/// Which occurrences of a field are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Occurrence {
    First,
    Last,
    All,
}

/// The fields to export and how.
pub struct FieldExport {
    fields: Vec<&'static Field>,
    header: bool,
    separator: char,
    occurrence: Occurrence,
    aggregator: char,
    quote: Option<char>,
}

/// tshark's `/t` and `/s` for tab and space, else the one character given.
fn character(option: &str, value: &str) -> Result<char, String> {
    match value {
        "/t" => Ok('\t'),
        "/s" => Ok(' '),
        _ => {
            let mut chars = value.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Ok(c),
                _ => Err(format!("-E {option}={value}: expected one character, /t or /s")),
            }
        }
    }
}

impl FieldExport {
    /// The export of `names` with the `-E` options; an error names the unknown field (and the
    /// nearest known one) or the option that does not parse.
    pub fn new(names: &[String], options: &[String]) -> Result<FieldExport, String> {
        if names.is_empty() {
            return Err("-T fields needs at least one -e FIELD".into());
        }
        let fields = names.iter().map(|name| fields::for_option("-e", name)).collect::<Result<Vec<_>, _>>()?;
        let mut export = FieldExport {
            fields,
            header: false,
            separator: '\t',
            occurrence: Occurrence::All,
            aggregator: ',',
            quote: None,
        };
        for option in options {
            export.set(option)?;
        }
        Ok(export)
    }

    fn set(&mut self, option: &str) -> Result<(), String> {
        let (key, value) = option.split_once('=').ok_or_else(|| format!("-E {option}: expected OPTION=VALUE"))?;
        // as tshark, a choice of letters is read by its first letter (`header=yes`, `quote=double`)
        match (key, value.get(..1).unwrap_or_default()) {
            ("header", "y") => self.header = true,
            ("header", "n") => self.header = false,
            ("separator", _) => self.separator = character(key, value)?,
            ("aggregator", _) => self.aggregator = character(key, value)?,
            ("occurrence", "f") => self.occurrence = Occurrence::First,
            ("occurrence", "l") => self.occurrence = Occurrence::Last,
            ("occurrence", "a") => self.occurrence = Occurrence::All,
            ("quote", "d") => self.quote = Some('"'),
            ("quote", "s") => self.quote = Some('\''),
            ("quote", "n") => self.quote = None,
            _ => {
                return Err(format!(
                    "-E {option}: unknown option or value (header=y|n, separator=/t|/s|<char>, occurrence=f|l|a, aggregator=,|/s|<char>, quote=d|s|n)"
                ));
            }
        }
        Ok(())
    }

    /// The header line (with `header=y`: the field names, never quoted), or nothing.
    pub fn write_header(&self, out: &mut String) {
        if !self.header {
            return;
        }
        for (i, f) in self.fields.iter().enumerate() {
            if i > 0 {
                out.push(self.separator);
            }
            out.push_str(f.name);
        }
        out.push('\n');
    }

    /// Appends one line: the fields of `frame`, separated; absent fields are empty (and, as
    /// tshark has it, not quoted).
    pub fn write_line(&self, out: &mut String, frame: &Frame<'_, '_>) {
        for (i, field) in self.fields.iter().enumerate() {
            if i > 0 {
                out.push(self.separator);
            }
            let start = out.len();
            let mut count = 0usize;
            let mut last = None;
            field.values(frame, &mut |value| {
                match self.occurrence {
                    Occurrence::All => {
                        if count > 0 {
                            out.push(self.aggregator);
                        }
                        write_tshark(out, frame, field, &value);
                    }
                    Occurrence::First if count == 0 => write_tshark(out, frame, field, &value),
                    Occurrence::First => {}
                    Occurrence::Last => last = Some(value),
                }
                count += 1;
            });
            if let Some(value) = last {
                write_tshark(out, frame, field, &value);
            }
            if let Some(q) = self.quote.filter(|_| count > 0) {
                out.insert(start, q);
                out.push(q);
            }
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse_as_tshark_spells_them() {
        let names = vec!["frame.number".to_string()];
        let e = FieldExport::new(&names, &["separator=/s".into(), "quote=d".into(), "occurrence=f".into()]).unwrap();
        assert_eq!((e.separator, e.quote, e.occurrence), (' ', Some('"'), Occurrence::First));
        assert!(FieldExport::new(&names, &["separator=ab".into()]).err().unwrap_or_default().contains("one character"));
        assert!(
            FieldExport::new(&["infiniband.bth.pns".into()], &[])
                .err()
                .unwrap_or_default()
                .contains("infiniband.bth.psn")
        );
        assert!(FieldExport::new(&[], &[]).is_err());
    }
}
