//! The `.npy` header: its Python-literal dictionary parsed with a depth limit, and its `descr`,
//! `fortran_order` and `shape` checked (arbitrary bytes give an error, never a panic).

use super::*;

/// Deepest nesting accepted in the header's literal (numpy's own headers nest two deep).
pub(super) const MAX_DEPTH: usize = 16;

/// What the header dictionary says.
pub(super) struct Header {
    pub(super) precision: Precision,
    pub(super) big_endian: bool,
    pub(super) fortran_order: bool,
    pub(super) shape: Vec<usize>,
}

impl Header {
    pub(super) fn parse(text: &str) -> Result<Self, ParseError> {
        let mut parser = Parser {
            s: text.as_bytes(),
            pos: 0,
        };
        let literal = parser.value(0)?;
        parser.skip_space();
        if parser.pos != parser.s.len() {
            return Err(malformed(format!(
                "unexpected text after the header dictionary at header byte {}",
                parser.pos
            )));
        }
        let Literal::Dict(entries) = literal else {
            return Err(malformed("the header is not a Python dictionary"));
        };
        let (mut descr, mut fortran, mut shape) = (None, None, None);
        for (key, value) in entries {
            match key {
                Literal::Str(k) if k == "descr" => descr = Some(value),
                Literal::Str(k) if k == "fortran_order" => fortran = Some(value),
                Literal::Str(k) if k == "shape" => shape = Some(value),
                other => {
                    return Err(malformed(format!(
                        "the header has an unexpected key {}",
                        other.describe()
                    )));
                }
            }
        }
        let missing = |k: &str| malformed(format!("the header has no '{k}' key"));
        let (precision, big_endian) = parse_descr(descr.ok_or_else(|| missing("descr"))?)?;
        let fortran_order = match fortran.ok_or_else(|| missing("fortran_order"))? {
            Literal::Bool(b) => b,
            other => {
                return Err(malformed(format!(
                    "'fortran_order' must be True or False, not {}",
                    other.describe()
                )));
            }
        };
        let shape = match shape.ok_or_else(|| missing("shape"))? {
            Literal::Tuple(items) => items
                .into_iter()
                .map(|item| match item {
                    Literal::Int(n) => usize::try_from(n)
                        .map_err(|_| malformed(format!("shape entry {n} is too large"))),
                    other => Err(malformed(format!(
                        "'shape' entries must be non-negative integers, not {}",
                        other.describe()
                    ))),
                })
                .collect::<Result<Vec<_>, _>>()?,
            other => {
                return Err(malformed(format!(
                    "'shape' must be a tuple, not {}",
                    other.describe()
                )));
            }
        };
        Ok(Header {
            precision,
            big_endian,
            fortran_order,
            shape,
        })
    }
}

/// Reads a numpy type string such as `<f8`; only float32 and float64 are taken.
pub(super) fn parse_descr(descr: Literal) -> Result<(Precision, bool), ParseError> {
    let text = match descr {
        Literal::Str(s) => s,
        Literal::List(_) => {
            return Err(ParseError::UnsupportedType(
                "a structured dtype (record array)".into(),
            ));
        }
        other => {
            return Err(malformed(format!(
                "'descr' must be a type string, not {}",
                other.describe()
            )));
        }
    };
    let unsupported = |what: &str| {
        Err(ParseError::UnsupportedType(format!(
            "dtype '{text}' ({what})"
        )))
    };
    let (order, rest) = match text.chars().next() {
        Some(c @ ('<' | '>' | '=' | '|')) => (c, &text[1..]),
        _ => ('=', text.as_str()),
    };
    let mut chars = rest.chars();
    let kind = chars.next();
    let size = chars.as_str().parse::<usize>().ok();
    let big_endian = match order {
        '>' => true,
        '<' => false,
        _ => cfg!(target_endian = "big"),
    };
    // numpy's own spellings: the type strings 'f4'/'f8', the one-letter codes 'f' (float32)
    // and 'd' (float64), and the type names.
    match rest {
        "f4" | "f" | "float32" | "single" => return Ok((Precision::F32, big_endian)),
        "f8" | "d" | "float64" | "double" => return Ok((Precision::F64, big_endian)),
        _ => {}
    }
    match (kind, size) {
        (Some('e'), _) => unsupported("half precision"),
        (Some('g'), _) => unsupported("extended precision"),
        (Some('f'), Some(_)) => unsupported("a float size other than 4 or 8 bytes"),
        // In a type string 'b' with a size ('|b1') is numpy's boolean; the one-letter code
        // 'b' alone is int8, and 'c' alone is a one-byte string ('S1').
        (Some('b'), Some(_)) => unsupported("boolean"),
        (Some('c'), None) => unsupported("text"),
        (Some('i' | 'u' | 'b' | 'B' | 'h' | 'H' | 'l' | 'L' | 'q' | 'Q' | 'I' | 'p' | 'P'), _) => {
            unsupported("integer")
        }
        (Some('c' | 'F' | 'D' | 'G'), _) => unsupported("complex"),
        (Some('?'), _) => unsupported("boolean"),
        (Some('U' | 'S' | 'a'), _) => unsupported("text"),
        (Some('O'), _) => unsupported("Python objects"),
        (Some('M' | 'm'), _) => unsupported("date/time"),
        (Some('V'), _) => unsupported("raw bytes"),
        _ => Err(malformed(format!("'descr' {text:?} is not a numpy type"))),
    }
}

/// The Python literals a .npy header can hold.
pub(super) enum Literal {
    Str(String),
    Bool(bool),
    Int(u64),
    /// A negative, fractional or otherwise non-integer number, kept as written.
    OtherNumber(String),
    None,
    Tuple(Vec<Literal>),
    List(Vec<Literal>),
    Dict(Vec<(Literal, Literal)>),
}

impl Literal {
    fn describe(&self) -> String {
        match self {
            Literal::Str(s) => format!("the string {s:?}"),
            Literal::Bool(b) => (if *b { "True" } else { "False" }).to_string(),
            Literal::Int(n) => format!("the number {n}"),
            Literal::OtherNumber(t) => format!("the number {t}"),
            Literal::None => "None".into(),
            Literal::Tuple(items) => format!("a tuple of {} items", items.len()),
            Literal::List(items) => format!("a list of {} items", items.len()),
            Literal::Dict(_) => "a dictionary".into(),
        }
    }
}

/// A recursive-descent parser for the subset of Python literals numpy writes.
pub(super) struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.s.get(self.pos).copied()
    }

    fn error(&self, what: &str) -> ParseError {
        malformed(format!(
            "the header is not a valid Python literal: {what} at header byte {}",
            self.pos
        ))
    }

    fn value(&mut self, depth: usize) -> Result<Literal, ParseError> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        match self.peek() {
            None => Err(self.error("unexpected end")),
            Some(b'{') => {
                self.pos += 1;
                let mut entries = Vec::new();
                loop {
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                        return Ok(Literal::Dict(entries));
                    }
                    let key = self.value(depth + 1)?;
                    if self.peek() != Some(b':') {
                        return Err(self.error("expected ':'"));
                    }
                    self.pos += 1;
                    let value = self.value(depth + 1)?;
                    entries.push((key, value));
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {}
                        _ => return Err(self.error("expected ',' or '}'")),
                    }
                }
            }
            Some(open @ (b'(' | b'[')) => {
                let close = if open == b'(' { b')' } else { b']' };
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    if self.peek() == Some(close) {
                        self.pos += 1;
                        return Ok(if open == b'(' {
                            Literal::Tuple(items)
                        } else {
                            Literal::List(items)
                        });
                    }
                    items.push(self.value(depth + 1)?);
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(c) if c == close => {}
                        _ => return Err(self.error("expected ',' or a closing bracket")),
                    }
                }
            }
            Some(quote @ (b'\'' | b'"')) => {
                self.pos += 1;
                let start = self.pos;
                while self.pos < self.s.len() && self.s[self.pos] != quote {
                    if self.s[self.pos] == b'\\' {
                        return Err(self.error("escape sequences are not expected"));
                    }
                    self.pos += 1;
                }
                if self.pos >= self.s.len() {
                    return Err(self.error("unterminated string"));
                }
                let text = String::from_utf8_lossy(&self.s[start..self.pos]).into_owned();
                self.pos += 1;
                Ok(Literal::Str(text))
            }
            Some(c) if c == b'-' || c == b'+' || c == b'.' => {
                // Signed or fractional numbers are never valid in a header, but say what they
                // are (a shape of -3 or 2.5) rather than "unexpected character".
                let start = self.pos;
                self.pos += 1;
                while self.pos < self.s.len()
                    && (self.s[self.pos].is_ascii_alphanumeric()
                        || matches!(self.s[self.pos], b'.' | b'-' | b'+'))
                {
                    self.pos += 1;
                }
                let text = String::from_utf8_lossy(&self.s[start..self.pos]).into_owned();
                Ok(Literal::OtherNumber(text))
            }
            Some(c) if c.is_ascii_digit() => {
                let start = self.pos;
                while self.pos < self.s.len() && self.s[self.pos].is_ascii_digit() {
                    self.pos += 1;
                }
                let digits = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("");
                let n = digits
                    .parse::<u64>()
                    .map_err(|_| self.error("integer too large"))?;
                // Python 2 wrote long integers with an L suffix.
                if self.s.get(self.pos) == Some(&b'L') {
                    self.pos += 1;
                }
                // A fraction or an exponent makes it a number that is not an integer.
                if matches!(self.s.get(self.pos), Some(b'.' | b'e' | b'E')) {
                    while self.pos < self.s.len()
                        && (self.s[self.pos].is_ascii_alphanumeric()
                            || matches!(self.s[self.pos], b'.' | b'-' | b'+'))
                    {
                        self.pos += 1;
                    }
                    let text = String::from_utf8_lossy(&self.s[start..self.pos]).into_owned();
                    return Ok(Literal::OtherNumber(text));
                }
                Ok(Literal::Int(n))
            }
            Some(_) => {
                for (word, literal) in [
                    (&b"True"[..], Literal::Bool(true)),
                    (&b"False"[..], Literal::Bool(false)),
                    (&b"None"[..], Literal::None),
                ] {
                    if self.s[self.pos..].starts_with(word) {
                        self.pos += word.len();
                        return Ok(literal);
                    }
                }
                Err(self.error("unexpected character"))
            }
        }
    }
}
