//! The syntax of display filters (Wireshark 4.x): tokens and the expression tree, with the
//! position of each piece in the filter text for error messages.
//!
//! ```text
//! expr    := xor ( ("or" | "||") xor )*
//! xor     := and ( ("xor" | "^^") and )*
//! and     := not ( ("and" | "&&") not )*
//! not     := ("not" | "!") not | "(" expr ")" | test
//! test    := operand [ relation operand | "in" set | "contains" operand | "&" operand
//!            | ("matches" | "~") operand ]
//! operand := word [ "#" layer ] [ "[" slice "]" ] | ("len" | "count") "(" operand ")"
//!          | "quoted string"
//! set     := "{" item ( "," item )* "}"        item := word | word ".." word
//! ```
//!
//! A run of one operator is one node (`a || b || c` is `Or([a, b, c])`), so a filter of
//! 100,000 terms is a shallow tree; parentheses and `not` nest at most [`MAX_NESTING`] deep.
//! Parsing, compiling, matching and dropping a filter therefore recurse a bounded depth
//! whatever its length.

use std::fmt;

/// How deep parentheses and `not` may nest: generated filters are long lists, not deep ones,
/// and a bound keeps every recursion over the tree within a thread's stack.
pub const MAX_NESTING: usize = 128;

/// A comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    Eq,
    /// All occurrences differ (Wireshark 4's `!=`).
    Ne,
    /// Some occurrence differs (`~=`, `any_ne`).
    AnyNe,
    Lt,
    Gt,
    Le,
    Ge,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    LParen,
    RParen,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    Comma,
    Colon,
    And,
    Or,
    Xor,
    Not,
    In,
    Contains,
    Matches,
    Amp,
    /// `#`, the layer operator.
    Hash,
    Rel(Relation),
    /// A field name, a number, an address or a byte string.
    Word(String),
    /// A double-quoted string, unescaped.
    Quoted(String),
}

/// A syntax or meaning error at a character position of the filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError {
    /// 0-based character offset in the filter.
    pub at: usize,
    pub message: String,
}

impl FilterError {
    pub fn new(at: usize, message: impl Into<String>) -> Self {
        FilterError { at, message: message.into() }
    }
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.at + 1, self.message)
    }
}

/// Characters a word is made of: names, numbers, addresses (IPv4, IPv6, MAC, CIDR), byte
/// strings and ranges.
fn word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-' | '/')
}

/// Splits a filter into tokens with their positions. Inside brackets a colon or a hyphen
/// separates slice bounds rather than belonging to a word.
pub fn tokens(text: &str) -> Result<Vec<(usize, Token)>, FilterError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut in_brackets = false;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let start = i;
        let (token, len) = match (c, next) {
            (c, _) if c.is_whitespace() => {
                i += 1;
                continue;
            }
            ('(', _) => (Token::LParen, 1),
            (')', _) => (Token::RParen, 1),
            ('{', _) => (Token::LBrace, 1),
            ('}', _) => (Token::RBrace, 1),
            ('[', _) => {
                in_brackets = true;
                (Token::LBracket, 1)
            }
            (']', _) => {
                in_brackets = false;
                (Token::RBracket, 1)
            }
            (',', _) => (Token::Comma, 1),
            (':', _) if in_brackets => (Token::Colon, 1),
            ('&', Some('&')) => (Token::And, 2),
            ('&', _) => (Token::Amp, 1),
            ('|', Some('|')) => (Token::Or, 2),
            ('^', Some('^')) => (Token::Xor, 2),
            ('=' | '!', Some('=')) if chars.get(i + 2) == Some(&'=') => return Err(unsupported_symbol(i, c)),
            ('=', Some('=')) => (Token::Rel(Relation::Eq), 2),
            ('!', Some('=')) => (Token::Rel(Relation::Ne), 2),
            ('~', Some('=')) => (Token::Rel(Relation::AnyNe), 2),
            ('<', Some('=')) => (Token::Rel(Relation::Le), 2),
            ('>', Some('=')) => (Token::Rel(Relation::Ge), 2),
            ('<', _) => (Token::Rel(Relation::Lt), 1),
            ('>', _) => (Token::Rel(Relation::Gt), 1),
            ('!', _) => (Token::Not, 1),
            ('"', _) => {
                let (s, len) = quoted(&chars[i..]).ok_or_else(|| FilterError::new(i, "unterminated string"))?;
                (Token::Quoted(s), len)
            }
            (c, _) if word_char(c) => {
                // the first character always belongs to the word (a slice's "-end" too)
                let mut j = i + 1;
                while j < chars.len() && word_char(chars[j]) && !(in_brackets && matches!(chars[j], ':' | '-')) {
                    j += 1;
                }
                let word: String = chars[i..j].iter().collect();
                (keyword(&word).unwrap_or(Token::Word(word)), j - i)
            }
            ('~', _) => (Token::Matches, 1),
            ('#', _) => (Token::Hash, 1),
            ('$' | '@' | '+' | '*' | '%', _) => return Err(unsupported_symbol(i, c)),
            (c, _) => return Err(FilterError::new(i, format!("unexpected character '{c}'"))),
        };
        out.push((start, token));
        i += len;
    }
    Ok(out)
}

/// Wireshark operators rocescope does not implement, by their first character (docs/display-filters.md,
/// "Differences from Wireshark").
fn unsupported_symbol(at: usize, c: char) -> FilterError {
    let message = match c {
        '=' => "the \"===\" operator (all_eq) is not supported; \"==\" holds when some occurrence equals".into(),
        '!' => "the \"!==\" operator is not supported; \"~=\" (any_ne) is the same test".into(),
        '$' => "field references (\"${…}\") are not supported".into(),
        '@' => "raw field values (\"@ip.src\") are not supported".into(),
        c => format!("arithmetic (\"{c}\") is not supported"),
    };
    FilterError::new(at, message)
}

fn keyword(word: &str) -> Option<Token> {
    Some(match word {
        "and" => Token::And,
        "or" => Token::Or,
        "xor" => Token::Xor,
        "not" => Token::Not,
        "in" => Token::In,
        "contains" => Token::Contains,
        "matches" => Token::Matches,
        "eq" => Token::Rel(Relation::Eq),
        "ne" => Token::Rel(Relation::Ne),
        "any_ne" => Token::Rel(Relation::AnyNe),
        "lt" => Token::Rel(Relation::Lt),
        "gt" => Token::Rel(Relation::Gt),
        "le" => Token::Rel(Relation::Le),
        "ge" => Token::Rel(Relation::Ge),
        _ => return None,
    })
}

/// A double-quoted string with backslash escapes; its text and length in characters.
fn quoted(chars: &[char]) -> Option<(String, usize)> {
    let mut s = String::new();
    let mut i = 1;
    while let Some(&c) = chars.get(i) {
        match c {
            '"' => return Some((s, i + 1)),
            '\\' => {
                s.push(*chars.get(i + 1)?);
                i += 2;
            }
            c => {
                s.push(c);
                i += 1;
            }
        }
    }
    None
}

/// A slice of a field's bytes: `[start:length]`, `[start-end]`, `[start]` or `[start:]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slice {
    pub start: usize,
    /// `None`: to the end.
    pub len: Option<usize>,
}

/// The layers `field#…` takes, as tshark 4.0 writes them: `#2`, or a list of ranges in
/// brackets, `#[1-2]`, `#[2:1]`, `#[2:]`, `#[-1]`, `#[1,3]`. Layers count from 1 (the
/// outermost); a negative number counts from the last (`-1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layers(pub Vec<LayerRange>);

/// One range of [`Layers`]: its first layer and where it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayerRange {
    pub first: isize,
    pub end: LayerEnd,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerEnd {
    /// The first layer alone (`#2`, `#[2]`).
    Alone,
    /// Up to this layer, itself included (`#[1-2]`).
    Through(isize),
    /// This many layers (`#[2:1]`).
    Length(usize),
    /// Up to the last (`#[2:]`).
    Last,
}

impl Layers {
    /// Does a range count from the last layer (so that the number of layers must be known)?
    pub fn count_from_the_end(&self) -> bool {
        self.0.iter().any(|r| r.first < 0 || matches!(r.end, LayerEnd::Through(e) if e < 0))
    }

    /// Is layer `n` (from 1) of `layers` one of these?
    pub fn covers(&self, n: usize, layers: usize) -> bool {
        let at = |i: isize| if i < 0 { layers as isize + 1 + i } else { i };
        let n = n as isize;
        self.0.iter().any(|r| {
            let first = at(r.first);
            match r.end {
                LayerEnd::Alone => n == first,
                LayerEnd::Through(last) => (first..=at(last)).contains(&n),
                LayerEnd::Length(len) => {
                    n >= first && n < first.saturating_add(isize::try_from(len).unwrap_or(isize::MAX))
                }
                LayerEnd::Last => n >= first,
            }
        })
    }
}

/// One side of a test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operand {
    pub at: usize,
    pub text: String,
    pub quoted: bool,
    pub slice: Option<Slice>,
    /// `field#n` or `field#[ranges]`: the field in those layers of its protocol only.
    pub layer: Option<Layers>,
    /// `len(field)` or `count(field)`.
    pub function: Option<Function>,
}

/// The functions of a field a test may take (Wireshark 4.0's `len` and `count`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Function {
    /// Each value's length in bytes.
    Len,
    /// How many values the frame has.
    Count,
}

/// A member of a set: a value or an inclusive range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Member {
    One(Operand),
    Range(Operand, Operand),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Test {
    /// A bare field: it is present.
    Present(Operand),
    /// `field & mask`: some occurrence has a bit of the mask set.
    BitAnd(Operand, Operand),
    Compare(Operand, Relation, Operand),
    In(Operand, Vec<Member>),
    Contains(Operand, Operand),
    /// `field matches "regex"`.
    Matches(Operand, Operand),
}

impl Test {
    /// The operand the test is about (its left side).
    pub fn subject(&self) -> &Operand {
        match self {
            Test::Present(o) | Test::BitAnd(o, _) | Test::Compare(o, ..) | Test::In(o, _) => o,
            Test::Contains(o, _) | Test::Matches(o, _) => o,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    /// Every operand holds (two or more).
    And(Vec<Expr>),
    /// Some operand holds (two or more).
    Or(Vec<Expr>),
    /// An odd number of the operands hold (`a ^^ b ^^ c` is `(a ^^ b) ^^ c`).
    Xor(Vec<Expr>),
    Not(Box<Expr>),
    Test(Test),
}

/// A recursive-descent parser over the tokens.
struct Parser {
    tokens: Vec<(usize, Token)>,
    next: usize,
    end: usize,
    /// Parentheses and `not` open around the current position.
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.next).map(|(_, t)| t)
    }

    fn at(&self) -> usize {
        self.tokens.get(self.next).map_or(self.end, |(at, _)| *at)
    }

    fn take(&mut self) -> Option<(usize, Token)> {
        let t = self.tokens.get(self.next).cloned();
        self.next += 1;
        t
    }

    fn expect(&mut self, token: Token, what: &str) -> Result<(), FilterError> {
        match self.take() {
            Some((_, t)) if t == token => Ok(()),
            _ => Err(FilterError::new(self.at_previous(), format!("expected {what}"))),
        }
    }

    fn at_previous(&self) -> usize {
        self.tokens.get(self.next.saturating_sub(1)).map_or(self.end, |(at, _)| *at)
    }

    /// A run of `op`: one operand, or a node of all of them.
    fn binary(
        &mut self,
        op: &Token,
        make: fn(Vec<Expr>) -> Expr,
        lower: fn(&mut Parser) -> Result<Expr, FilterError>,
    ) -> Result<Expr, FilterError> {
        let first = lower(self)?;
        if self.peek() != Some(op) {
            return Ok(first);
        }
        let mut operands = vec![first];
        while self.peek() == Some(op) {
            self.take();
            operands.push(lower(self)?);
        }
        Ok(make(operands))
    }

    /// `inner`, one level deeper in parentheses or `not`; refused beyond [`MAX_NESTING`].
    fn nested(&mut self, inner: fn(&mut Parser) -> Result<Expr, FilterError>) -> Result<Expr, FilterError> {
        if self.depth == MAX_NESTING {
            return Err(FilterError::new(
                self.at(),
                format!("parentheses and \"not\" nest more than {MAX_NESTING} deep, rocescope's limit"),
            ));
        }
        self.take();
        self.depth += 1;
        let expr = inner(self);
        self.depth -= 1;
        expr
    }

    fn or(&mut self) -> Result<Expr, FilterError> {
        self.binary(&Token::Or, Expr::Or, Parser::xor)
    }

    fn xor(&mut self) -> Result<Expr, FilterError> {
        self.binary(&Token::Xor, Expr::Xor, Parser::and)
    }

    fn and(&mut self) -> Result<Expr, FilterError> {
        self.binary(&Token::And, Expr::And, Parser::not)
    }

    fn not(&mut self) -> Result<Expr, FilterError> {
        match self.peek() {
            Some(Token::Not) => self.nested(|p| Ok(Expr::Not(Box::new(p.not()?)))),
            Some(Token::LParen) => self.nested(|p| {
                let inner = p.or()?;
                p.expect(Token::RParen, "')'")?;
                Ok(inner)
            }),
            _ => self.test().map(Expr::Test),
        }
    }

    fn test(&mut self) -> Result<Test, FilterError> {
        let left = self.operand()?;
        match self.peek().cloned() {
            Some(Token::Rel(relation)) => {
                self.take();
                Ok(Test::Compare(left, relation, self.operand()?))
            }
            Some(Token::In) => {
                self.take();
                Ok(Test::In(left, self.set()?))
            }
            Some(Token::Contains) => {
                self.take();
                Ok(Test::Contains(left, self.operand()?))
            }
            Some(Token::Amp) => {
                self.take();
                Ok(Test::BitAnd(left, self.operand()?))
            }
            Some(Token::Matches) => {
                self.take();
                Ok(Test::Matches(left, self.operand()?))
            }
            Some(Token::Word(w)) if w == "all_eq" => Err(unsupported_symbol(self.at(), '=')),
            _ => Ok(Test::Present(left)),
        }
    }

    fn operand(&mut self) -> Result<Operand, FilterError> {
        let at = self.at();
        let (text, quoted) = match self.take() {
            Some((_, Token::Word(w))) => (w, false),
            Some((_, Token::Quoted(s))) => (s, true),
            _ => return Err(FilterError::new(at, "expected a field or a value")),
        };
        if !quoted && self.peek() == Some(&Token::LParen) {
            return self.function_call(at, &text);
        }
        let layer = if !quoted && self.peek() == Some(&Token::Hash) { Some(self.layer()?) } else { None };
        let slice = if !quoted && self.peek() == Some(&Token::LBracket) { Some(self.slice()?) } else { None };
        Ok(Operand { at, text, quoted, slice, layer, function: None })
    }

    /// `len(field)` or `count(field)`, after the function's name.
    fn function_call(&mut self, at: usize, name: &str) -> Result<Operand, FilterError> {
        let function = match name {
            "len" => Function::Len,
            "count" => Function::Count,
            _ => {
                return Err(FilterError::new(
                    at,
                    format!("functions (\"{name}(…)\") are not supported, but for len() and count()"),
                ));
            }
        };
        self.expect(Token::LParen, "'('")?;
        let inner = self.operand()?;
        if inner.quoted || inner.function.is_some() {
            return Err(FilterError::new(inner.at, format!("{name}() takes a field")));
        }
        self.expect(Token::RParen, "')'")?;
        Ok(Operand { function: Some(function), ..inner })
    }

    /// `#n` or `#[ranges]` after a field: its layers.
    fn layer(&mut self) -> Result<Layers, FilterError> {
        self.expect(Token::Hash, "'#'")?;
        let at = self.at();
        if self.peek() != Some(&Token::LBracket) {
            // a layer past isize is no layer (an `as` cast would count it from the end)
            let n: usize = self.parsed("layer number")?;
            return match isize::try_from(n) {
                Ok(0) => Err(FilterError::new(at, "layers are counted from 1")),
                Ok(n) => Ok(Layers(vec![LayerRange { first: n, end: LayerEnd::Alone }])),
                Err(_) => Err(FilterError::new(at, format!("'{n}' is not a layer number"))),
            };
        }
        self.expect(Token::LBracket, "'['")?;
        let mut ranges = vec![self.layer_range()?];
        while self.peek() == Some(&Token::Comma) {
            self.take();
            ranges.push(self.layer_range()?);
        }
        self.expect(Token::RBracket, "']'")?;
        Ok(Layers(ranges))
    }

    /// One range of `#[…]`: `n`, `n-m`, `n:length` or `n:`.
    fn layer_range(&mut self) -> Result<LayerRange, FilterError> {
        let at = self.at();
        let first = self.signed()?;
        let end = match self.peek() {
            Some(Token::Colon) => {
                self.take();
                match self.peek() {
                    Some(Token::RBracket | Token::Comma) => LayerEnd::Last,
                    _ => LayerEnd::Length(self.number()?),
                }
            }
            Some(Token::Word(w)) if w.starts_with('-') => {
                let last = self.signed()?.saturating_neg();
                // as tshark 4.0 has it, a range ends after its start
                if last <= first {
                    return Err(FilterError::new(at, format!("the range {first}-{last} ends before it starts")));
                }
                LayerEnd::Through(last)
            }
            _ => LayerEnd::Alone,
        };
        Ok(LayerRange { first, end })
    }

    /// A layer number, which may be negative.
    fn signed(&mut self) -> Result<isize, FilterError> {
        self.parsed("layer number")
    }

    fn number(&mut self) -> Result<usize, FilterError> {
        self.parsed("slice offset")
    }

    /// The next word as a number; an error names `what` it should be.
    fn parsed<T: std::str::FromStr>(&mut self, what: &str) -> Result<T, FilterError> {
        let at = self.at();
        match self.take() {
            Some((_, Token::Word(w))) => w.parse().map_err(|_| FilterError::new(at, format!("'{w}' is not a {what}"))),
            _ => Err(FilterError::new(at, format!("expected a {what}"))),
        }
    }

    fn slice(&mut self) -> Result<Slice, FilterError> {
        self.expect(Token::LBracket, "'['")?;
        let start = self.number()?;
        let slice = match self.peek() {
            Some(Token::Colon) => {
                self.take();
                if self.peek() == Some(&Token::RBracket) {
                    Slice { start, len: None }
                } else {
                    Slice { start, len: Some(self.number()?) }
                }
            }
            Some(Token::Word(w)) if w.starts_with('-') => {
                let at = self.at();
                let end: usize = w[1..].parse().map_err(|_| FilterError::new(at, "expected a slice end"))?;
                self.take();
                Slice { start, len: Some(end.saturating_sub(start).saturating_add(1)) }
            }
            _ => Slice { start, len: Some(1) },
        };
        self.expect(Token::RBracket, "']'")?;
        Ok(slice)
    }

    fn set(&mut self) -> Result<Vec<Member>, FilterError> {
        self.expect(Token::LBrace, "'{'")?;
        let mut members = Vec::new();
        loop {
            // members are separated by commas (Wireshark 4.0 refuses a bare space too)
            if !members.is_empty() {
                match self.take() {
                    Some((_, Token::RBrace)) => break,
                    Some((_, Token::Comma)) => {}
                    _ => return Err(FilterError::new(self.at_previous(), "expected ',' or '}' in the set")),
                }
            }
            match self.peek() {
                Some(Token::RBrace) if members.is_empty() => {
                    self.take();
                    break;
                }
                _ => {
                    let item = self.operand()?;
                    members.push(match item.text.split_once("..") {
                        Some((low, high)) if !item.quoted => {
                            let high_at = item.at + low.len() + 2;
                            let bound = |text: &str, at| Operand {
                                at,
                                text: text.to_string(),
                                quoted: false,
                                slice: None,
                                layer: None,
                                function: None,
                            };
                            Member::Range(bound(low, item.at), bound(high, high_at))
                        }
                        _ => Member::One(item),
                    });
                }
            }
        }
        if members.is_empty() {
            return Err(FilterError::new(self.at_previous(), "an empty set"));
        }
        Ok(members)
    }
}

/// Parses a display filter into its expression tree.
pub fn parse(text: &str) -> Result<Expr, FilterError> {
    let tokens = tokens(text)?;
    let end = text.chars().count();
    if tokens.is_empty() {
        return Err(FilterError::new(0, "an empty filter"));
    }
    let mut p = Parser { tokens, next: 0, end, depth: 0 };
    let expr = p.or()?;
    if p.next < p.tokens.len() {
        return Err(FilterError::new(p.at(), "unexpected text after the end of the expression"));
    }
    Ok(expr)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(at: usize, text: &str) -> Operand {
        Operand { at, text: text.into(), quoted: false, slice: None, layer: None, function: None }
    }

    #[test]
    fn precedence_is_not_then_and_then_xor_then_or() {
        let e = parse("a or b and not c").unwrap();
        let test = |at, name| Expr::Test(Test::Present(word(at, name)));
        let expected = Expr::Or(vec![test(0, "a"), Expr::And(vec![test(5, "b"), Expr::Not(Box::new(test(15, "c")))])]);
        assert_eq!(e, expected);
        let e = parse("a ^^ b ^^ c || d").unwrap();
        assert_eq!(e, Expr::Or(vec![Expr::Xor(vec![test(0, "a"), test(5, "b"), test(10, "c")]), test(15, "d")]));
    }

    #[test]
    fn a_run_of_one_operator_is_one_node_and_nesting_is_bounded() {
        let terms: Vec<String> = (0..100_000).map(|i| format!("x == {i}")).collect();
        let Expr::Or(operands) = parse(&terms.join(" || ")).unwrap() else { panic!("one node") };
        assert_eq!(operands.len(), 100_000);
        let deep = |n: usize| format!("{}x{}", "(".repeat(n), ")".repeat(n));
        assert!(parse(&deep(MAX_NESTING)).is_ok());
        let e = parse(&deep(MAX_NESTING + 1)).unwrap_err();
        assert_eq!(e.at, MAX_NESTING, "the parenthesis one too deep");
        assert_eq!(e.message, "parentheses and \"not\" nest more than 128 deep, rocescope's limit");
        assert_eq!(parse(&format!("{}x", "!".repeat(100_000))).unwrap_err().at, MAX_NESTING);
        assert!(parse(&deep(1_000_000)).is_err());
    }

    #[test]
    fn slices_sets_and_addresses_tokenize() {
        let e = parse("eth.dst[0:3] == 01:80:c2").unwrap();
        let Expr::Test(Test::Compare(left, Relation::Eq, right)) = e else { panic!("{e:?}") };
        assert_eq!((left.slice, right.text.as_str()), (Some(Slice { start: 0, len: Some(3) }), "01:80:c2"));
        let Expr::Test(Test::In(_, members)) = parse("x in {6, 7, 0..5}").unwrap() else { panic!() };
        assert_eq!(parse("x in {6 7}").unwrap_err().message, "expected ',' or '}' in the set");
        assert_eq!(members.len(), 3);
        assert!(matches!(&members[2], Member::Range(a, b) if a.text == "0" && b.text == "5" && b.at == 15));
        assert!(parse("ipv6.addr == fe80::1/64").is_ok());
        assert_eq!(parse("a[2-4]").map(|_| ()), Ok(()));
        let Expr::Test(Test::Present(o)) = parse("a[2-4]").unwrap() else { panic!() };
        assert_eq!(o.slice, Some(Slice { start: 2, len: Some(3) }));
        // bounds from the text never overflow
        let Expr::Test(Test::Present(o)) = parse("a[0-18446744073709551615]").unwrap() else { panic!() };
        assert_eq!(o.slice, Some(Slice { start: 0, len: Some(usize::MAX) }));
    }

    #[test]
    fn errors_say_where() {
        assert_eq!(parse("a == ").unwrap_err().at, 5, "the end, where a value should be");
        assert_eq!(parse("(a").unwrap_err().message, "expected ')'");
        assert_eq!(parse("a b").unwrap_err().at, 2);
        assert_eq!(parse("a == \"x").unwrap_err().message, "unterminated string");
        assert_eq!(parse("a ? b").unwrap_err().at, 2);
    }

    #[test]
    fn wireshark_operators_not_implemented_are_named() {
        let message = |text: &str| parse(text).unwrap_err();
        assert!(message("a === 1").message.starts_with("the \"===\" operator (all_eq)"));
        assert!(message("a all_eq 1").message.starts_with("the \"===\" operator (all_eq)"));
        assert!(message("a !== 1").message.contains("\"~=\" (any_ne) is the same test"));
        assert_eq!(
            message("upper(a) == 1").message,
            "functions (\"upper(…)\") are not supported, but for len() and count()"
        );
        assert_eq!(message("len(\"x\") == 1").message, "len() takes a field");
        assert_eq!(message("a#0 == 1").message, "layers are counted from 1");
        assert_eq!(message("a == ${b}").message, "field references (\"${…}\") are not supported");
        assert_eq!(message("a + 1 == 2").message, "arithmetic (\"+\") is not supported");
        assert_eq!(message("a + 1 == 2").at, 2);
    }

    #[test]
    fn layer_ranges_cover_the_layers_tshark_takes() {
        let layers = |text: &str| {
            let Expr::Test(Test::Present(o)) = parse(text).unwrap() else { panic!("{text}") };
            let layers = o.layer.expect("layers");
            (1..=3).filter(|n| layers.covers(*n, 3)).collect::<Vec<_>>()
        };
        assert_eq!(layers("a#2"), [2]);
        assert_eq!(layers("a#[1-2]"), [1, 2]);
        assert_eq!(layers("a#[0-1]"), [1]);
        assert_eq!(layers("a#[2:1]"), [2]);
        assert_eq!(layers("a#[0:1]"), [0; 0]);
        assert_eq!(layers("a#[2:]"), [2, 3]);
        assert_eq!(layers("a#[-1]"), [3]);
        assert_eq!(layers("a#[-2:1]"), [2]);
        assert_eq!(layers("a#[1,3]"), [1, 3]);
        assert_eq!(layers("a#[2:18446744073709551615]"), [2, 3]);
        assert_eq!(layers("a#[ 1 ]"), [1]);
        assert!(parse("a#[2-2]").unwrap_err().message.contains("ends before it starts"));
        assert!(parse("a#[x]").unwrap_err().message.contains("not a layer number"));
        assert!(parse("a#x").unwrap_err().message.contains("not a layer number"));
        // past isize: an error, not the last layer counted from the end
        assert!(parse("a#9223372036854775808").unwrap_err().message.contains("not a layer number"));
        assert!(parse("a#9223372036854775807").is_ok());
    }

    #[test]
    fn matches_layers_and_functions_parse() {
        let Expr::Test(Test::Matches(o, re)) = parse("a matches \"^x+$\"").unwrap() else { panic!() };
        assert_eq!((o.text.as_str(), re.text.as_str(), re.quoted), ("a", "^x+$", true));
        assert!(matches!(parse("a ~ \"x\"").unwrap(), Expr::Test(Test::Matches(..))));
        let Expr::Test(Test::Compare(o, Relation::Eq, _)) = parse("ip.src#2[0:2] == 0a:09").unwrap() else { panic!() };
        let second = Layers(vec![LayerRange { first: 2, end: LayerEnd::Alone }]);
        assert_eq!((o.layer, o.slice), (Some(second), Some(Slice { start: 0, len: Some(2) })));
        let Expr::Test(Test::Compare(o, Relation::Gt, _)) = parse("count(ip.src#1) > 1").unwrap() else { panic!() };
        let first = Layers(vec![LayerRange { first: 1, end: LayerEnd::Alone }]);
        assert_eq!((o.function, o.layer, o.at), (Some(Function::Count), Some(first), 6));
        let Expr::Test(Test::Compare(o, ..)) = parse("len(eth.src) == 6").unwrap() else { panic!() };
        assert_eq!((o.function, o.text.as_str()), (Some(Function::Len), "eth.src"));
    }
}
