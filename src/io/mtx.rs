//! Matrix Market (`%%MatrixMarket matrix array|coordinate real|integer|pattern
//! general|symmetric|skew-symmetric`): a reader into dense storage that checks the banner, the
//! size line and every count and index, and a writer of the dense `array real general` form.
//!
//! The array form stores values column by column (`symmetric`: the lower triangle with the
//! diagonal; `skew-symmetric`: the strict lower triangle). The coordinate form (SuiteSparse's)
//! lists `row column [value]` entries, 1-based: duplicates are summed, a symmetric entry is
//! mirrored and a skew-symmetric one mirrored with its sign flipped. Every count is checked
//! before anything is allocated from it, so arbitrary bytes give an error, never a panic.

use super::{Array, Element, ParseError, Precision};
use std::io::Write;

/// The dense or the sparse layout of the values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    Array,
    Coordinate,
}

/// What a value is: a real, an integer, or (coordinate only) absent, meaning 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Real,
    Integer,
    Pattern,
}

/// Which entries the file lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Symmetry {
    General,
    Symmetric,
    Skew,
}

impl Symmetry {
    fn name(self) -> &'static str {
        match self {
            Symmetry::General => "general",
            Symmetry::Symmetric => "symmetric",
            Symmetry::Skew => "skew-symmetric",
        }
    }
}

/// What the banner line says.
#[derive(Clone, Copy, Debug)]
struct Banner {
    layout: Layout,
    field: Field,
    symmetry: Symmetry,
}

/// Parses a whole Matrix Market file held in memory.
pub fn parse(bytes: &[u8]) -> Result<Array, ParseError> {
    parse_checked(bytes, &mut |_| Ok(()))
}

/// [`parse`], calling `check` with the shape the size line declares (`[rows, cols]`) once the
/// size line has been checked against the bytes that follow it, and before anything is
/// allocated for the values: an error from `check` is returned as it is. A caller that knows
/// what shapes its operation takes (a square matrix, a vector of a given length) refuses the
/// others here, before the dense matrix a few bytes of a coordinate file can declare exists.
pub fn parse_checked(
    bytes: &[u8],
    check: &mut dyn FnMut(&[usize]) -> Result<(), ParseError>,
) -> Result<Array, ParseError> {
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
    let banner = parse_banner(banner)?;

    // Comment lines (starting with '%') and blank lines come before the size line.
    let (size_line_no, size_line) = lines
        .by_ref()
        .find(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('%'))
        .ok_or_else(|| malformed("truncated: no size line after the banner"))?;
    let size_line_no = size_line_no + 1;
    // The bytes after the size line: every value or entry line lies there.
    let remaining =
        text.len() - (size_line.as_ptr() as usize - text.as_ptr() as usize) - size_line.len();
    let dims: Vec<&str> = size_line.split_whitespace().collect();
    let parse_count = |s: &str| {
        s.parse::<usize>().map_err(|_| {
            malformed(format!(
                "line {size_line_no}: {s:?} is not a row, column or entry count"
            ))
        })
    };
    let body = lines.map(|(no, l)| (no + 1, l.trim()));
    let body = body.filter(|(_, l)| !l.is_empty() && !l.starts_with('%'));
    match banner.layout {
        Layout::Array => {
            let [rows, cols] = dims[..] else {
                return Err(malformed(format!(
                    "line {size_line_no}: the size line of an array must hold two numbers (rows \
                     columns), found {:?}",
                    excerpt(size_line, 60)
                )));
            };
            let (rows, cols) = (parse_count(rows)?, parse_count(cols)?);
            check_square(banner.symmetry, rows, cols)?;
            parse_array(banner, rows, cols, remaining, check, body)
        }
        Layout::Coordinate => {
            let [rows, cols, entries] = dims[..] else {
                return Err(malformed(format!(
                    "line {size_line_no}: the size line of a coordinate file must hold three \
                     numbers (rows columns entries), found {:?}",
                    excerpt(size_line, 60)
                )));
            };
            let (rows, cols) = (parse_count(rows)?, parse_count(cols)?);
            let entries = parse_count(entries)?;
            check_square(banner.symmetry, rows, cols)?;
            parse_coordinate(banner, rows, cols, entries, remaining, check, body)
        }
    }
}

fn check_square(symmetry: Symmetry, rows: usize, cols: usize) -> Result<(), ParseError> {
    if symmetry != Symmetry::General && rows != cols {
        return Err(malformed(format!(
            "a {} matrix must be square, but the size line says {rows}x{cols}",
            symmetry.name()
        )));
    }
    Ok(())
}

/// The dense array form: the values column by column (of the lower triangle when symmetric,
/// the strict lower one when skew-symmetric), each put in its place in the row-major matrix
/// as it is read. `remaining` is the bytes after the size line, which bound the count.
fn parse_array<'a>(
    banner: Banner,
    rows: usize,
    cols: usize,
    remaining: usize,
    check: &mut dyn FnMut(&[usize]) -> Result<(), ParseError>,
    body: impl Iterator<Item = (usize, &'a str)>,
) -> Result<Array, ParseError> {
    let symmetry = banner.symmetry;
    let expected = match symmetry {
        Symmetry::General => rows.checked_mul(cols),
        Symmetry::Symmetric => rows
            .checked_add(1)
            .and_then(|r1| rows.checked_mul(r1))
            .map(|x| x / 2),
        Symmetry::Skew => rows.checked_mul(rows.saturating_sub(1)).map(|x| x / 2),
    }
    .ok_or_else(|| malformed(format!("size {rows}x{cols} is too large to address")))?;
    if expected > remaining / 2 {
        // Each value takes at least two bytes (a line end and a digit): the file cannot hold
        // them all.
        return Err(malformed(format!(
            "truncated: a {rows}x{cols} {} array holds {expected} values, more than the \
             {remaining} bytes after its size line can hold",
            symmetry.name()
        )));
    }
    check(&[rows, cols])?;
    let mut data = dense_zeros(rows, cols)?;
    // The place of the next value: row i of column j, down the column's listed part.
    let first_row = |j: usize| match symmetry {
        Symmetry::General => 0,
        Symmetry::Symmetric => j,
        Symmetry::Skew => j + 1,
    };
    let (mut i, mut j, mut read) = (first_row(0), 0, 0usize);
    for (line_no, line) in body {
        for token in line.split_whitespace() {
            if read == expected {
                return Err(malformed(format!(
                    "line {line_no}: more values than the {expected} that a {rows}x{cols} {} \
                     array holds",
                    symmetry.name()
                )));
            }
            let v = parse_value(banner.field, token, line_no)?;
            while i >= rows {
                j += 1;
                i = first_row(j);
            }
            data[i * cols + j] = v;
            match symmetry {
                Symmetry::General => {}
                Symmetry::Symmetric => data[j * cols + i] = v,
                Symmetry::Skew => data[j * cols + i] = -v,
            }
            i += 1;
            read += 1;
        }
    }
    if read < expected {
        return Err(malformed(format!(
            "truncated: a {rows}x{cols} {} array holds {expected} values, but the file has {read}",
            symmetry.name(),
        )));
    }
    Ok(dense(rows, cols, data))
}

/// The coordinate form: `entries` lines of `row column [value]` (1-based) summed into a dense
/// matrix; symmetric entries mirrored, skew-symmetric ones mirrored with the opposite sign.
fn parse_coordinate<'a>(
    banner: Banner,
    rows: usize,
    cols: usize,
    entries: usize,
    remaining: usize,
    check: &mut dyn FnMut(&[usize]) -> Result<(), ParseError>,
    body: impl Iterator<Item = (usize, &'a str)>,
) -> Result<Array, ParseError> {
    let symmetry = banner.symmetry;
    let tokens_per_entry = if banner.field == Field::Pattern { 2 } else { 3 };
    // Each entry takes at least two bytes a number (a line end or a space, and a digit): refuse
    // a count the bytes after the size line cannot hold.
    if entries > remaining / (2 * tokens_per_entry) {
        return Err(malformed(format!(
            "truncated: the size line promises {entries} entries, more than the {remaining} \
             bytes after it can hold"
        )));
    }
    // The declared shape is the caller's to refuse before the dense matrix is allocated: a few
    // bytes can declare any size.
    check(&[rows, cols])?;
    let mut data = dense_zeros(rows, cols)?;
    let mut seen = 0usize;
    // Which side of the diagonal a symmetric file's off-diagonal entries lie on (lower: true).
    let mut side: Option<(bool, usize)> = None;
    for (line_no, line) in body {
        if seen == entries {
            return Err(malformed(format!(
                "line {line_no}: more entries than the {entries} the size line promises"
            )));
        }
        let tokens: Vec<&str> = line.split_whitespace().collect();
        if tokens.len() != tokens_per_entry {
            return Err(malformed(format!(
                "line {line_no}: an entry of a {} file is {}, found {:?}",
                field_name(banner.field),
                if tokens_per_entry == 2 {
                    "'row column'"
                } else {
                    "'row column value'"
                },
                excerpt(line, 60)
            )));
        }
        let index = |token: &str, what: &str, limit: usize| match token.parse::<usize>() {
            Ok(k) if (1..=limit).contains(&k) => Ok(k - 1),
            _ => Err(malformed(format!(
                "line {line_no}: {what} index {:?} is not in 1..={limit}",
                excerpt(token, 30)
            ))),
        };
        let i = index(tokens[0], "row", rows)?;
        let j = index(tokens[1], "column", cols)?;
        let v = match tokens.get(2) {
            Some(token) => parse_value(banner.field, token, line_no)?,
            None => 1.0,
        };
        seen += 1;
        if symmetry == Symmetry::General {
            data[i * cols + j] += v;
            continue;
        }
        if i == j {
            if symmetry == Symmetry::Skew && v != 0.0 {
                return Err(malformed(format!(
                    "line {line_no}: a skew-symmetric matrix has zeros on its diagonal, but \
                     entry ({}, {}) is {v:e}",
                    i + 1,
                    j + 1
                )));
            }
            data[i * cols + j] += v;
            continue;
        }
        // One triangle is listed; an entry on the other side too would be counted twice.
        let lower = i > j;
        match side {
            None => side = Some((lower, line_no)),
            Some((first, first_line)) if first != lower => {
                return Err(malformed(format!(
                    "line {line_no}: entry ({}, {}) lies {} the diagonal, but the entry on line \
                     {first_line} lies {}: a {} file lists one triangle",
                    i + 1,
                    j + 1,
                    if lower { "below" } else { "above" },
                    if first { "below" } else { "above" },
                    symmetry.name()
                )));
            }
            Some(_) => {}
        }
        let mirror = if symmetry == Symmetry::Skew { -v } else { v };
        data[i * cols + j] += v;
        data[j * cols + i] += mirror;
    }
    if seen < entries {
        return Err(malformed(format!(
            "truncated: the size line promises {entries} entries, but the file has {seen}"
        )));
    }
    Ok(dense(rows, cols, data))
}

/// A rows x cols matrix of zeros, or an error (never an abort) when it cannot be addressed or
/// allocated ([`ParseError::OutOfMemory`]). The pages come zeroed from the allocator: those of
/// a sparse matrix that no entry touches cost nothing until the matrix is used.
fn dense_zeros(rows: usize, cols: usize) -> Result<Vec<f64>, ParseError> {
    let len = rows
        .checked_mul(cols)
        .ok_or_else(|| malformed(format!("size {rows}x{cols} is too large to address")))?;
    Ok(crate::memory::zeros(len, || {
        format!("the {rows}x{cols} matrix (float64)")
    })?)
}

fn dense(rows: usize, cols: usize, data: Vec<f64>) -> Array {
    Array {
        shape: vec![rows, cols],
        data,
        precision: Precision::F64,
    }
}

fn field_name(field: Field) -> &'static str {
    match field {
        Field::Real => "real",
        Field::Integer => "integer",
        Field::Pattern => "pattern",
    }
}

/// One value as the banner's field says: a real number or a whole number.
fn parse_value(field: Field, token: &str, line_no: usize) -> Result<f64, ParseError> {
    match field {
        Field::Integer => token.parse::<i64>().map(|k| k as f64).map_err(|_| {
            malformed(format!(
                "line {line_no}: {:?} is not an integer (the banner says integer)",
                excerpt(token, 30)
            ))
        }),
        _ => token.parse::<f64>().map_err(|_| {
            malformed(format!(
                "line {line_no}: {:?} is not a real number",
                excerpt(token, 30)
            ))
        }),
    }
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

/// Checks the `%%MatrixMarket` banner: the layout, the field and the symmetry.
fn parse_banner(banner: &str) -> Result<Banner, ParseError> {
    let words: Vec<String> = banner
        .split_whitespace()
        .map(|w| w.to_ascii_lowercase())
        .collect();
    if words.first().map(String::as_str) != Some("%%matrixmarket") {
        return Err(malformed(
            "it does not start with a %%MatrixMarket banner line",
        ));
    }
    let [_, object, layout, field, symmetry] = &words[..] else {
        return Err(malformed(format!(
            "the banner must read '%%MatrixMarket matrix array|coordinate real|integer|pattern \
             general|symmetric|skew-symmetric', found {:?}",
            excerpt(banner, 80)
        )));
    };
    if object != "matrix" {
        return Err(malformed(format!(
            "object {object:?} in the banner is not 'matrix'"
        )));
    }
    let layout = match layout.as_str() {
        "array" => Layout::Array,
        "coordinate" => Layout::Coordinate,
        other => {
            return Err(malformed(format!(
                "format {other:?} in the banner is not 'array' or 'coordinate'"
            )));
        }
    };
    let field = match field.as_str() {
        "real" | "double" => Field::Real,
        "integer" => Field::Integer,
        "pattern" if layout == Layout::Coordinate => Field::Pattern,
        "pattern" => {
            return Err(malformed(
                "field 'pattern' is only for the coordinate format, not for an array",
            ));
        }
        "complex" => return Err(ParseError::UnsupportedType(format!("field '{field}'"))),
        other => {
            return Err(malformed(format!(
                "field {other:?} in the banner is not 'real', 'integer' or 'pattern'"
            )));
        }
    };
    let symmetry = match symmetry.as_str() {
        "general" => Symmetry::General,
        "symmetric" => Symmetry::Symmetric,
        "skew-symmetric" => Symmetry::Skew,
        "hermitian" => {
            return Err(ParseError::UnsupportedType(format!(
                "symmetry '{symmetry}'"
            )));
        }
        other => {
            return Err(malformed(format!(
                "symmetry {other:?} in the banner is not 'general', 'symmetric' or \
                 'skew-symmetric'"
            )));
        }
    };
    Ok(Banner {
        layout,
        field,
        symmetry,
    })
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
    fn coordinate_entries_are_summed_and_mirrored() {
        // General: duplicates summed, a pattern entry is 1, comments and blank lines skipped.
        let general = "%%MatrixMarket matrix coordinate real general\n% c\n2 3 3\n1 3 2.5\n\n\
                       2 1 -1\n1 3 0.5\n";
        let a = parse(general.as_bytes()).unwrap();
        assert_eq!(a.shape, vec![2, 3]);
        assert_eq!(a.data, vec![0.0, 0.0, 3.0, -1.0, 0.0, 0.0]);
        let pattern = "%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n2 2\n";
        assert_eq!(
            parse(pattern.as_bytes()).unwrap().data,
            vec![0.0, 1.0, 0.0, 1.0]
        );
        // Symmetric: mirrored (either triangle, not both); integer values.
        let symmetric = "%%MatrixMarket matrix coordinate integer symmetric\n3 3 3\n1 1 4\n\
                         3 1 -2\n3 2 7\n";
        let a = parse(symmetric.as_bytes()).unwrap();
        assert_eq!(a.data, vec![4.0, 0.0, -2.0, 0.0, 0.0, 7.0, -2.0, 7.0, 0.0]);
        // Skew-symmetric: mirrored with the sign flipped; a zero on the diagonal may be listed.
        let skew = "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 2\n2 1 3\n1 1 0\n";
        assert_eq!(
            parse(skew.as_bytes()).unwrap().data,
            vec![0.0, -3.0, 3.0, 0.0]
        );
        // The array form of skew-symmetric lists the strict lower triangle.
        let skew = "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n";
        assert_eq!(
            parse(skew.as_bytes()).unwrap().data,
            vec![0.0, -1.0, -2.0, 1.0, 0.0, -3.0, 2.0, 3.0, 0.0]
        );
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
    fn declared_sizes_are_bounded_by_the_bytes_and_checked_before_the_matrix_exists() {
        // A few bytes declaring 1 x 150,000,000: the caller's check sees the shape before the
        // 1.2 GB dense matrix would be allocated, and its refusal is the error.
        let text = "%%MatrixMarket matrix coordinate real general\n1 150000000 1\n1 1 1\n";
        let mut seen = Vec::new();
        let e = parse_checked(text.as_bytes(), &mut |shape| {
            seen.push(shape.to_vec());
            Err(ParseError::Unsupported("C must be square".into()))
        })
        .unwrap_err();
        assert_eq!(e, ParseError::Unsupported("C must be square".into()));
        assert_eq!(seen, [vec![1, 150_000_000]]);
        // The same for the array form, once its values are known to fit the bytes.
        let text = "%%MatrixMarket matrix array real general\n1 2\n1\n2\n";
        let e = parse_checked(text.as_bytes(), &mut |_| {
            Err(ParseError::Unsupported("no".into()))
        });
        assert_eq!(e.unwrap_err(), ParseError::Unsupported("no".into()));
        // Entry and value counts are bounded by the bytes after the size line (two a number),
        // before the check is asked and before anything is allocated.
        for (text, expected) in [
            (
                "%%MatrixMarket matrix coordinate real general\n1 150000000 4\n1 1 1\n1 2 1\n",
                "promises 4 entries, more than the 13 bytes after it can hold",
            ),
            (
                "%%MatrixMarket matrix coordinate pattern symmetric\n9 9 3\n1 1\n2 2\n",
                "promises 3 entries, more than the 9 bytes after it can hold",
            ),
            (
                "%%MatrixMarket matrix array real general\n1000 1000\n1\n",
                "holds 1000000 values, more than the 3 bytes after its size line can hold",
            ),
            (
                "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n",
                "holds 6 values, more than the 11 bytes after its size line can hold",
            ),
        ] {
            let e = parse_checked(text.as_bytes(), &mut |_| panic!("checked: {text:?}"));
            let e = e.unwrap_err().to_string();
            assert!(e.contains(expected), "{expected:?} in {e:?}");
        }
        // A file that holds what it declares reads, with the check asked once.
        let mut asked = 0;
        let text = "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n";
        let a = parse_checked(text.as_bytes(), &mut |shape| {
            asked += 1;
            assert_eq!(shape, [3, 3]);
            Ok(())
        })
        .unwrap();
        assert_eq!(asked, 1);
        assert_eq!(a.data, vec![0.0, -1.0, -2.0, 1.0, 0.0, -3.0, 2.0, 3.0, 0.0]);
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
                "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n",
                "line 3: row index \"3\" is not in 1..=2",
            ),
            (
                "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n% pad\n",
                "promises 2 entries, but the file has 1",
            ),
            (
                "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n",
                "promises 2 entries, more than the 7 bytes after it can hold",
            ),
            (
                "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 1\n",
                "line 4: more entries than the 1",
            ),
            (
                "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1\n",
                "'row column', found",
            ),
            (
                "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n",
                "\"1.5\" is not an integer",
            ),
            (
                "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 2 1\n",
                "line 3: a skew-symmetric matrix has zeros on its diagonal",
            ),
            (
                "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 1\n1 2 1\n",
                "line 4: entry (1, 2) lies above the diagonal, but the entry on line 3 lies below",
            ),
            (
                "%%MatrixMarket matrix coordinate real general\n2 2 99999999\n1 1 1\n",
                "more than the",
            ),
            (
                "%%MatrixMarket matrix coordinate real general\n99999999999 99999999999 1\n1 1 1\n",
                "too large",
            ),
            (
                "%%MatrixMarket matrix array pattern general\n1 1\n1\n",
                "only for the coordinate format",
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
                "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n% pad\n",
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
