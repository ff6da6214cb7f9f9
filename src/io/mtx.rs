//! Matrix Market's dense array format (`%%MatrixMarket matrix array real general|symmetric`):
//! a reader that checks the banner, the size line and the count of values, and a writer of the
//! `general` form.
//!
//! Values are stored column by column; the `symmetric` form lists only the lower triangle with
//! the diagonal, column by column. Every count is checked before anything is allocated from it,
//! so arbitrary bytes give an error, never a panic (see the property tests).

use super::{Array, Element, ParseError, Precision};
use std::io::Write;

/// Parses a whole Matrix Market file held in memory.
pub fn parse(bytes: &[u8]) -> Result<Array, ParseError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        malformed(format!(
            "it is not text: invalid UTF-8 at byte {}",
            e.valid_up_to()
        ))
    })?;
    // A byte-order mark is not part of the banner.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = split_lines(text).enumerate();
    let banner = lines.next().map(|(_, l)| l).unwrap_or("");
    let symmetric = parse_banner(banner)?;

    // Comment lines (starting with '%') and blank lines come before the size line.
    let (size_line_no, size_line) = lines
        .by_ref()
        .find(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('%'))
        .ok_or_else(|| malformed("truncated: no size line after the banner"))?;
    let dims: Vec<&str> = size_line.split_whitespace().collect();
    let [rows, cols] = dims[..] else {
        return Err(malformed(format!(
            "line {}: the size line of an array must hold two numbers (rows columns), found {:?}",
            size_line_no + 1,
            excerpt(size_line, 60)
        )));
    };
    let parse_dim = |s: &str| {
        s.parse::<usize>().map_err(|_| {
            malformed(format!(
                "line {}: {s:?} is not a row or column count",
                size_line_no + 1
            ))
        })
    };
    let (rows, cols) = (parse_dim(rows)?, parse_dim(cols)?);
    if symmetric && rows != cols {
        return Err(malformed(format!(
            "a symmetric matrix must be square, but the size line says {rows}x{cols}"
        )));
    }
    let expected = if symmetric {
        rows.checked_add(1)
            .and_then(|r1| rows.checked_mul(r1))
            .map(|x| x / 2)
    } else {
        rows.checked_mul(cols)
    }
    .ok_or_else(|| malformed(format!("size {rows}x{cols} is too large to address")))?;

    // Never allocate more than the text could hold: each value takes at least two bytes.
    let mut values = Vec::with_capacity(expected.min(text.len() / 2 + 1));
    for (line_no, line) in lines {
        let line = line.trim();
        if line.is_empty() || line.starts_with('%') {
            continue;
        }
        for token in line.split_whitespace() {
            if values.len() == expected {
                return Err(malformed(format!(
                    "line {}: more values than the {expected} that a {rows}x{cols} {} array holds",
                    line_no + 1,
                    if symmetric { "symmetric" } else { "general" }
                )));
            }
            let v = token.parse::<f64>().map_err(|_| {
                malformed(format!(
                    "line {}: {token:?} is not a real number",
                    line_no + 1
                ))
            })?;
            values.push(v);
        }
    }
    if values.len() < expected {
        return Err(malformed(format!(
            "truncated: a {rows}x{cols} {} array holds {expected} values, but the file has {}",
            if symmetric { "symmetric" } else { "general" },
            values.len()
        )));
    }

    // Column-major (or packed lower, column-major) to row-major. An empty array (a zero
    // dimension) has nothing to move, however large its other dimension.
    let mut data = vec![0.0; rows * cols];
    if data.is_empty() {
        return Ok(Array {
            shape: vec![rows, cols],
            data,
            precision: Precision::F64,
        });
    }
    if symmetric {
        let mut next = values.into_iter();
        for j in 0..cols {
            for i in j..rows {
                let v = next.next().unwrap_or(0.0);
                data[i * cols + j] = v;
                data[j * cols + i] = v;
            }
        }
    } else {
        for j in 0..cols {
            for i in 0..rows {
                data[i * cols + j] = values[j * rows + i];
            }
        }
    }
    Ok(Array {
        shape: vec![rows, cols],
        data,
        precision: Precision::F64,
    })
}

/// Writes a `general` real array, column by column, each value in the shortest form that
/// reads back to the same `T`. A vector is written as an n x 1 column.
pub fn write<T: Element>(w: &mut impl Write, shape: &[usize], data: &[T]) -> std::io::Result<()> {
    let (rows, cols) = match shape {
        [n] => (*n, 1),
        [r, c] => (*r, *c),
        _ => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "Matrix Market holds only 1-D or 2-D arrays",
            ));
        }
    };
    debug_assert_eq!(rows * cols, data.len());
    writeln!(w, "%%MatrixMarket matrix array real general")?;
    writeln!(w, "% written by symraster ({})", T::NAME)?;
    writeln!(w, "{rows} {cols}")?;
    // The text goes out a megabyte at a time, never held whole.
    let mut out = String::new();
    for j in 0..cols {
        for i in 0..rows {
            data[i * cols + j].push_text(&mut out);
            out.push('\n');
            if out.len() >= 1 << 20 {
                w.write_all(out.as_bytes())?;
                out.clear();
            }
        }
    }
    w.write_all(out.as_bytes())
}

/// The lines of `text`, ended by LF, CR LF or a lone CR (old Mac files), without their ends.
fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    let lone_cr = !text.contains('\n');
    text.split(move |c| c == '\n' || (lone_cr && c == '\r'))
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
}

/// At most `max` characters of `text`, with "…" when cut: a line quoted in a message.
fn excerpt(text: &str, max: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

fn malformed(detail: impl Into<String>) -> ParseError {
    ParseError::Malformed(detail.into())
}

/// Checks the `%%MatrixMarket` banner; returns whether the matrix is symmetric.
fn parse_banner(banner: &str) -> Result<bool, ParseError> {
    let words: Vec<String> = banner
        .split_whitespace()
        .map(|w| w.to_ascii_lowercase())
        .collect();
    if words.first().map(String::as_str) != Some("%%matrixmarket") {
        return Err(malformed(
            "it does not start with a %%MatrixMarket banner line",
        ));
    }
    let [_, object, format, field, symmetry] = &words[..] else {
        return Err(malformed(format!(
            "the banner must read '%%MatrixMarket matrix array real general' (or symmetric), \
             found {:?}",
            excerpt(banner, 80)
        )));
    };
    if object != "matrix" {
        return Err(malformed(format!(
            "object {object:?} in the banner is not 'matrix'"
        )));
    }
    match format.as_str() {
        "array" => {}
        "coordinate" => {
            return Err(ParseError::Unsupported(
                "the coordinate (sparse) format is not supported; write the matrix in the dense \
                 array format ('%%MatrixMarket matrix array real general', values column by \
                 column)"
                    .into(),
            ));
        }
        other => {
            return Err(malformed(format!(
                "format {other:?} in the banner is not 'array'"
            )));
        }
    }
    match field.as_str() {
        "real" | "double" => {}
        "integer" | "complex" | "pattern" => {
            return Err(ParseError::UnsupportedType(format!("field '{field}'")));
        }
        other => {
            return Err(malformed(format!(
                "field {other:?} in the banner is not 'real'"
            )));
        }
    }
    match symmetry.as_str() {
        "general" => Ok(false),
        "symmetric" => Ok(true),
        "skew-symmetric" | "hermitian" => Err(ParseError::UnsupportedType(format!(
            "symmetry '{symmetry}'"
        ))),
        other => Err(malformed(format!(
            "symmetry {other:?} in the banner is not 'general' or 'symmetric'"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn general_and_symmetric_read_in_column_order() {
        let general =
            "%%MatrixMarket matrix array real general\n% a comment\n\n2 3\n1\n4\n2 5\n3\n6\n";
        let a = parse(general.as_bytes()).unwrap();
        assert_eq!(a.shape, vec![2, 3]);
        assert_eq!(a.data, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);

        let symmetric = "%%MatrixMarket MATRIX Array Real Symmetric\n3 3\n1\n2\n3\n4\n5\n6\n";
        let a = parse(symmetric.as_bytes()).unwrap();
        assert_eq!(a.shape, vec![3, 3]);
        assert_eq!(a.data, vec![1.0, 2.0, 3.0, 2.0, 4.0, 5.0, 3.0, 5.0, 6.0]);
    }

    #[test]
    fn byte_order_marks_and_every_line_ending_are_read() {
        let expected = vec![1.0, 2.0, 3.0, 4.0];
        for text in [
            "\u{feff}%%MatrixMarket matrix array real general\n2 2\n1\n3\n2\n4\n",
            "%%MatrixMarket matrix array real general\r\n% c\r\n2 2\r\n1\r\n3\r\n2\r\n4\r\n",
            "%%MatrixMarket matrix array real general\r% c\r2 2\r1\r3\r2\r4\r",
        ] {
            let a = parse(text.as_bytes()).unwrap();
            assert_eq!(
                (a.shape, a.data),
                (vec![2, 2], expected.clone()),
                "{text:?}"
            );
        }
    }

    #[test]
    fn extreme_sizes_are_errors_or_empty_never_a_panic_or_a_hang() {
        let max = usize::MAX;
        for (symmetry, size) in [
            ("symmetric", format!("{max} {max}")),
            ("symmetric", format!("{} {}", max / 2, max / 2)),
            ("general", format!("{max} {max}")),
            ("general", format!("{max} 2")),
            ("general", "4294967296 4294967296".to_string()),
        ] {
            let text = format!("%%MatrixMarket matrix array real {symmetry}\n{size}\n1\n");
            let e = parse(text.as_bytes()).unwrap_err().to_string();
            assert!(
                e.contains("too large") || e.contains("truncated"),
                "{size}: {e}"
            );
        }
        // A zero dimension is an empty array, however large the other one.
        let text = format!("%%MatrixMarket matrix array real general\n0 {max}\n");
        let a = parse(text.as_bytes()).unwrap();
        assert_eq!((a.shape, a.data.len()), (vec![0, max], 0));
    }

    #[test]
    fn writer_round_trips_exactly() {
        let data = [0.1f32, -3.0e-20, 7.0, 1.0 / 3.0, f32::MAX, 0.0];
        let mut buf = Vec::new();
        write(&mut buf, &[3, 2], &data).unwrap();
        let a = parse(&buf).unwrap();
        assert_eq!(a.shape, vec![3, 2]);
        let back: Vec<f32> = a.data.iter().map(|&x| x as f32).collect();
        assert_eq!(back, data);

        let v = [0.1f64, 1.0 / 3.0, -1e-300];
        let mut buf = Vec::new();
        write(&mut buf, &[3], &v).unwrap();
        let a = parse(&buf).unwrap();
        assert_eq!((a.shape.clone(), a.data), (vec![3, 1], v.to_vec()));
    }

    #[test]
    fn rejects_what_it_should_with_a_reason() {
        let cases = [
            ("1 2\n", "banner"),
            (
                "%%MatrixMarket matrix array real\n1 1\n1\n",
                "banner must read",
            ),
            (
                "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n",
                "coordinate",
            ),
            (
                "%%MatrixMarket matrix array integer general\n1 1\n1\n",
                "field 'integer'",
            ),
            (
                "%%MatrixMarket matrix array complex general\n1 1\n1 0\n",
                "field 'complex'",
            ),
            (
                "%%MatrixMarket matrix array real hermitian\n1 1\n1\n",
                "hermitian",
            ),
            ("%%MatrixMarket matrix array real general\n", "no size line"),
            (
                "%%MatrixMarket matrix array real general\n2 x\n",
                "\"x\" is not a row",
            ),
            (
                "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n",
                "holds 4 values, but the file has 3",
            ),
            (
                "%%MatrixMarket matrix array real general\n1 1\n1\n2\n",
                "more values",
            ),
            (
                "%%MatrixMarket matrix array real general\n1 1\nabc\n",
                "line 3: \"abc\" is not a real number",
            ),
            (
                "%%MatrixMarket matrix array real symmetric\n2 3\n",
                "must be square",
            ),
            (
                "%%MatrixMarket matrix array real general\n99999999999 99999999999\n",
                "too large",
            ),
        ];
        for (text, expected) in cases {
            let e = parse(text.as_bytes()).unwrap_err().to_string();
            assert!(e.contains(expected), "expected {expected:?} in {e:?}");
        }
        let e = parse(b"%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("the coordinate (sparse) format is not supported; write the matrix")
                && !e.contains("symraster reads"),
            "{e}"
        );
        let long = format!("{}\n", "x".repeat(5000));
        let e = parse(long.as_bytes()).unwrap_err().to_string();
        assert!(e.len() < 200, "a long first line is not quoted whole: {e}");
        assert!(
            parse(b"\xff\xfe")
                .unwrap_err()
                .to_string()
                .contains("UTF-8")
        );
    }
}
