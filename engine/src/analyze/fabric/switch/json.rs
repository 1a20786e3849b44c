//! A small JSON parser (RFC 8259) that keeps the line of every key and value, which serde_json
//! does not give; nesting is bounded by [`MAX_DEPTH`].

use super::tree::{Entry, MAX_DEPTH, Node, Value, error};
use crate::analyze::fabric::model::ConfigError;

/// Parses `text` as one JSON value; a syntax error is a `ConfigError` at its line.
pub(crate) fn parse(file: &str, text: &str) -> Result<Node, ConfigError> {
    let mut parser = Parser { file, bytes: text.as_bytes(), position: 0, line: 1 };
    parser.skip_space();
    let node = parser.value(0)?;
    parser.skip_space();
    if parser.position < parser.bytes.len() {
        return Err(parser.fail("text after the JSON value"));
    }
    Ok(node)
}

struct Parser<'a> {
    file: &'a str,
    bytes: &'a [u8],
    position: usize,
    line: usize,
}

impl Parser<'_> {
    fn fail(&self, message: &str) -> ConfigError {
        error(self.file, self.line, format!("JSON syntax error: {message}"))
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.position).copied()
    }

    fn skip_space(&mut self) {
        while let Some(byte) = self.peek() {
            match byte {
                b'\n' => self.line += 1,
                b' ' | b'\t' | b'\r' => {}
                _ => return,
            }
            self.position += 1;
        }
    }

    fn expect(&mut self, wanted: u8) -> Result<(), ConfigError> {
        self.skip_space();
        if self.peek() == Some(wanted) {
            self.position += 1;
            Ok(())
        } else {
            Err(self.fail(&format!("expected `{}`", wanted as char)))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, ConfigError> {
        self.skip_space();
        let line = self.line;
        let value = match self.peek() {
            Some(b'{') => self.object(depth)?,
            Some(b'[') => self.array(depth)?,
            Some(b'"') => Value::Scalar(self.string()?),
            Some(_) => Value::Scalar(self.bare()?),
            None => return Err(self.fail("unexpected end of text")),
        };
        Ok(Node { line, value })
    }

    fn enter(&self, depth: usize) -> Result<usize, ConfigError> {
        if depth >= MAX_DEPTH {
            return Err(self.fail(&format!("nested deeper than {MAX_DEPTH}")));
        }
        Ok(depth + 1)
    }

    fn object(&mut self, depth: usize) -> Result<Value, ConfigError> {
        let depth = self.enter(depth)?;
        self.position += 1;
        let mut entries = Vec::new();
        self.skip_space();
        if self.peek() == Some(b'}') {
            self.position += 1;
            return Ok(Value::Map(entries));
        }
        loop {
            self.skip_space();
            if self.peek() != Some(b'"') {
                return Err(self.fail("expected a key in quotes"));
            }
            let key_line = self.line;
            let key = self.string()?;
            self.expect(b':')?;
            let node = self.value(depth)?;
            entries.push(Entry { key, key_line, node });
            self.skip_space();
            match self.peek() {
                Some(b',') => self.position += 1,
                Some(b'}') => {
                    self.position += 1;
                    return Ok(Value::Map(entries));
                }
                _ => return Err(self.fail("expected `,` or `}`")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, ConfigError> {
        let depth = self.enter(depth)?;
        self.position += 1;
        let mut items = Vec::new();
        self.skip_space();
        if self.peek() == Some(b']') {
            self.position += 1;
            return Ok(Value::List(items));
        }
        loop {
            items.push(self.value(depth)?);
            self.skip_space();
            match self.peek() {
                Some(b',') => self.position += 1,
                Some(b']') => {
                    self.position += 1;
                    return Ok(Value::List(items));
                }
                _ => return Err(self.fail("expected `,` or `]`")),
            }
        }
    }

    /// A string from its opening quote; escapes decoded (a lone surrogate becomes U+FFFD).
    fn string(&mut self) -> Result<String, ConfigError> {
        self.position += 1;
        let mut out = Vec::new();
        loop {
            let Some(byte) = self.peek() else {
                return Err(self.fail("unterminated string"));
            };
            self.position += 1;
            match byte {
                b'"' => return Ok(String::from_utf8_lossy(&out).into_owned()),
                b'\\' => self.escape(&mut out)?,
                b'\n' | b'\r' => return Err(self.fail("line break in a string")),
                _ => out.push(byte),
            }
        }
    }

    fn escape(&mut self, out: &mut Vec<u8>) -> Result<(), ConfigError> {
        let Some(byte) = self.peek() else {
            return Err(self.fail("unterminated string"));
        };
        self.position += 1;
        let decoded = match byte {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => self.unicode_escape()?,
            _ => return Err(self.fail("unknown escape in a string")),
        };
        let mut buffer = [0; 4];
        out.extend_from_slice(decoded.encode_utf8(&mut buffer).as_bytes());
        Ok(())
    }

    fn unicode_escape(&mut self) -> Result<char, ConfigError> {
        let digits = self.bytes.get(self.position..self.position + 4).ok_or_else(|| self.fail("short \\u escape"))?;
        let text = std::str::from_utf8(digits).map_err(|_| self.fail("bad \\u escape"))?;
        let code = u32::from_str_radix(text, 16).map_err(|_| self.fail("bad \\u escape"))?;
        self.position += 4;
        Ok(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER))
    }

    /// A number, `true`, `false` or `null`, kept as written.
    fn bare(&mut self) -> Result<String, ConfigError> {
        let start = self.position;
        while let Some(byte) = self.peek() {
            if !(byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'+' | b'.')) {
                break;
            }
            self.position += 1;
        }
        let text = self.bytes.get(start..self.position).and_then(|bytes| std::str::from_utf8(bytes).ok()).unwrap_or("");
        let is_number = text.parse::<f64>().is_ok()
            && text.chars().all(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'));
        if matches!(text, "true" | "false" | "null") || is_number {
            Ok(text.to_string())
        } else {
            Err(self.fail("expected a value"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_lines_of_keys_and_values() {
        let node =
            parse("f", "{\n  \"A\": {\n    \"b\": \"x\\u0041\",\n    \"c\":\n      [1, true]\n  }\n}\n").unwrap();
        let a = node.entry("A").unwrap();
        assert_eq!(a.key_line, 2);
        let b = a.node.entry("b").unwrap();
        assert_eq!((b.key_line, b.node.scalar()), (3, Some("xA")));
        let c = a.node.entry("c").unwrap();
        assert_eq!((c.key_line, c.node.line), (4, 5));
    }

    #[test]
    fn errors_carry_their_line() {
        let err = parse("f", "{\n  \"A\": \"1\",\n  \"B\": \"2\"\n  \"C\": \"3\"\n}").unwrap_err();
        assert_eq!(err.line, 4);
        let err = parse("f", "{\n  \"A\": \"1\",\n}").unwrap_err();
        assert_eq!(err.line, 3);
        let err = parse("f", "{\"a\": tru}").unwrap_err();
        assert_eq!(err.line, 1);
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = "[".repeat(100_000);
        let err = parse("f", &deep).unwrap_err();
        assert!(err.message.contains("nested deeper"), "{}", err.message);
    }
}
