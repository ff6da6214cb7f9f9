//! NumPy's `.npy` format (versions 1.0, 2.0 and 3.0): a careful reader for float32/float64
//! arrays in C or Fortran order, and a writer of little-endian C-order arrays.
//!
//! The reader never trusts the header: every length is checked against the bytes actually
//! present before anything is allocated, and the header's Python-literal dictionary is parsed
//! with a depth limit, so arbitrary bytes give an error, never a panic (see the property tests).

mod header;

use super::{Array, Element, ParseError, Precision};
use header::*;
use std::io::{Read, Write};

/// The six bytes every .npy file starts with.
const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Parses a whole .npy file held in memory.
pub fn parse(bytes: &[u8]) -> Result<Array, ParseError> {
    parse_checked(bytes, &mut |_| Ok(()))
}

/// [`parse`], calling `check` with the shape the header declares once the data's length is
/// known to match it, and before anything is allocated for the values: an error from `check`
/// is returned as it is.
pub fn parse_checked(
    bytes: &[u8],
    check: &mut dyn FnMut(&[usize]) -> Result<(), ParseError>,
) -> Result<Array, ParseError> {
    let (header, data_start) = preamble(bytes)?;
    let payload = &bytes[data_start..];
    let count = payload_count(&header, payload.len() as u64)?;
    check(&header.shape)?;
    let what = || format!("the {} values (float64)", shape_text(&header.shape));
    let mut values = crate::memory::with_capacity(count, what)?;
    decode(&header, payload, |_, v| values.push(v));
    let data = if header.fortran_order {
        fortran_to_c(&header.shape, &values).ok_or_else(|| crate::memory::OutOfMemory {
            what: what(),
            bytes: crate::memory::bytes_of::<f64>(count),
        })?
    } else {
        values
    };
    Ok(Array {
        shape: header.shape,
        data,
        precision: header.precision,
    })
}

/// A 2-D array read straight into float32 by [`read_f32`].
#[derive(Debug)]
pub struct Narrowed {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// The values rounded to float32, row-major.
    pub data: Vec<f32>,
    /// The first value (row-major) that float32 cannot hold (NaN, ±inf, or beyond its range),
    /// as the file stores it, with its row-major index.
    pub first_unfit: Option<(usize, f64)>,
}

/// Why [`read_f32`] failed.
#[derive(Debug)]
pub enum ReadError {
    /// The bytes are not a valid file, or hold a type we do not read.
    Parse(ParseError),
    /// The array is not 2-D: its shape.
    Rank(Vec<usize>),
    /// Reading failed.
    Io(std::io::Error),
}

impl From<ParseError> for ReadError {
    fn from(e: ParseError) -> Self {
        ReadError::Parse(e)
    }
}

/// Bytes of the payload decoded at a time by [`read_f32`].
const READ_CHUNK: usize = 1 << 20;

/// Reads a 2-D .npy array of `len` bytes from `r` straight into float32, a chunk at a time:
/// neither the file's bytes nor a float64 copy are ever held whole, so the peak is the float32
/// matrix. With `lower_only`, entries above the diagonal are neither read into the matrix
/// (they are zero) nor checked.
pub fn read_f32(r: &mut impl Read, len: u64, lower_only: bool) -> Result<Narrowed, ReadError> {
    read_f32_checked(r, len, lower_only, &mut |_| Ok(()))
}

/// [`read_f32`], calling `check` with the 2-D shape the header declares once the file's
/// length is known to match it, and before the matrix is allocated: an error from `check` is
/// returned as it is.
pub fn read_f32_checked(
    r: &mut impl Read,
    len: u64,
    lower_only: bool,
    check: &mut dyn FnMut(&[usize]) -> Result<(), ParseError>,
) -> Result<Narrowed, ReadError> {
    // The fixed part (magic, version, header length), then the header it announces.
    let mut prefix = Vec::new();
    r.by_ref()
        .take(12.min(len))
        .read_to_end(&mut prefix)
        .map_err(ReadError::Io)?;
    let header_end = match (prefix.get(6), prefix.get(8..12)) {
        (Some(1), _) if prefix.len() >= 10 => {
            10 + u64::from(u16::from_le_bytes([prefix[8], prefix[9]]))
        }
        (Some(2 | 3), Some(b)) => 12 + u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        _ => prefix.len() as u64,
    };
    r.by_ref()
        .take(header_end.min(len).saturating_sub(prefix.len() as u64))
        .read_to_end(&mut prefix)
        .map_err(ReadError::Io)?;
    let (header, data_start) = preamble(&prefix)?;
    // The payload's length before the rank, as the whole-file parser judges them.
    let count = payload_count(&header, len - data_start as u64)?;
    let [rows, cols] = header.shape[..] else {
        return Err(ReadError::Rank(header.shape));
    };
    check(&header.shape)?;
    let mut data =
        crate::memory::zeros::<f32>(count, || format!("the {rows}x{cols} matrix (float32)"))
            .map_err(ParseError::from)?;
    let mut first_unfit: Option<(usize, f64)> = None;
    let width = header.precision.bytes();
    let mut chunk = vec![0u8; READ_CHUNK - READ_CHUNK % width];
    let mut done = 0usize;
    while done < count {
        let n = chunk.len().min((count - done) * width);
        r.read_exact(&mut chunk[..n]).map_err(ReadError::Io)?;
        decode(&header, &chunk[..n], |k, v| {
            let k = done + k;
            // The row-major place of the k-th stored value.
            let (i, j) = if header.fortran_order {
                (k % rows, k / rows)
            } else {
                (k / cols, k % cols)
            };
            if lower_only && j > i {
                return;
            }
            let at = i * cols + j;
            if (!v.is_finite() || v.abs() > f64::from(f32::MAX))
                && first_unfit.is_none_or(|(first, _)| at < first)
            {
                first_unfit = Some((at, v));
            }
            data[at] = v as f32;
        });
        done += n / width;
    }
    Ok(Narrowed {
        rows,
        cols,
        data,
        first_unfit,
    })
}

/// Checks the magic, version and header of a .npy file whose first bytes are `bytes` (at least
/// up to the data, or the whole file); returns the header and where the data starts.
fn preamble(bytes: &[u8]) -> Result<(Header, usize), ParseError> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(malformed(
            "it does not start with the .npy magic bytes \\x93NUMPY",
        ));
    }
    let (major, minor) = match bytes.get(6..8) {
        Some(v) => (v[0], v[1]),
        None => return Err(malformed("truncated before the format version")),
    };
    let (header_start, header_len) = match major {
        1 => match bytes.get(8..10) {
            Some(b) => (10, u16::from_le_bytes([b[0], b[1]]) as usize),
            None => return Err(malformed("truncated before the header length")),
        },
        2 | 3 => match bytes.get(8..12) {
            Some(b) => (12, u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize),
            None => return Err(malformed("truncated before the header length")),
        },
        _ => {
            return Err(malformed(format!(
                "format version {major}.{minor} is not one of 1.0, 2.0, 3.0"
            )));
        }
    };
    let data_start = header_start + header_len;
    let header = bytes.get(header_start..data_start).ok_or_else(|| {
        malformed(format!(
            "truncated in the header: it claims {header_len} bytes but only {} follow",
            bytes.len().saturating_sub(header_start)
        ))
    })?;
    let header = std::str::from_utf8(header)
        .map_err(|e| malformed(format!("the header is not text ({e})")))?;
    Ok((Header::parse(header)?, data_start))
}

/// The number of values, after checking that the payload's length is exactly what the
/// header's shape and type need.
fn payload_count(header: &Header, payload_len: u64) -> Result<usize, ParseError> {
    let precision = header.precision;
    let count = header
        .shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .and_then(|c| c.checked_mul(precision.bytes()).map(|_| c))
        .ok_or_else(|| {
            malformed(format!(
                "shape {} is too large to address",
                shape_text(&header.shape)
            ))
        })?;
    let need = (count * precision.bytes()) as u64;
    if payload_len < need {
        return Err(malformed(format!(
            "truncated: shape {} of {} needs {need} bytes of data, but only {payload_len} follow \
             the header",
            shape_text(&header.shape),
            precision.numpy_name(),
        )));
    }
    if payload_len > need {
        return Err(malformed(format!(
            "{} unexpected bytes after the {need} bytes of data that shape {} of {} needs",
            payload_len - need,
            shape_text(&header.shape),
            precision.numpy_name()
        )));
    }
    Ok(count)
}

/// Calls `each(k, value)` for the values in `bytes` (whole values of the header's type and
/// byte order), k counting from 0 in the file's order.
fn decode(header: &Header, bytes: &[u8], mut each: impl FnMut(usize, f64)) {
    match header.precision {
        Precision::F32 => {
            for (k, c) in bytes.chunks_exact(4).enumerate() {
                let b = [c[0], c[1], c[2], c[3]];
                let v = if header.big_endian {
                    f32::from_be_bytes(b)
                } else {
                    f32::from_le_bytes(b)
                };
                each(k, f64::from(v));
            }
        }
        Precision::F64 => {
            for (k, c) in bytes.chunks_exact(8).enumerate() {
                let b = [c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]];
                let v = if header.big_endian {
                    f64::from_be_bytes(b)
                } else {
                    f64::from_le_bytes(b)
                };
                each(k, v);
            }
        }
    }
}

/// Writes a little-endian, C-order .npy (version 1.0) array of the given shape.
pub fn write<T: Element>(w: &mut impl Write, shape: &[usize], data: &[T]) -> std::io::Result<()> {
    debug_assert_eq!(shape.iter().product::<usize>(), data.len());
    let shape_literal = match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape_literal}, }}",
        T::NPY_DESCR
    );
    // numpy pads the header with spaces and a newline so that the data starts 64-byte aligned.
    let unpadded = MAGIC.len() + 2 + 2 + header.len() + 1;
    header.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    header.push('\n');
    let header_len = u16::try_from(header.len()).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "array has too many dimensions for a .npy 1.0 header",
        )
    })?;
    w.write_all(MAGIC)?;
    w.write_all(&[1, 0])?;
    w.write_all(&header_len.to_le_bytes())?;
    w.write_all(header.as_bytes())?;
    // In chunks, so that writing never holds a second copy of the data.
    let mut bytes = Vec::with_capacity(WRITE_CHUNK * 8);
    for chunk in data.chunks(WRITE_CHUNK) {
        bytes.clear();
        for &x in chunk {
            x.extend_le_bytes(&mut bytes);
        }
        w.write_all(&bytes)?;
    }
    Ok(())
}

/// Values converted to bytes at a time by the writer.
const WRITE_CHUNK: usize = 1 << 16;

fn malformed(detail: impl Into<String>) -> ParseError {
    ParseError::Malformed(detail.into())
}

/// "(3, 4)" as numpy writes shapes.
fn shape_text(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Reorders column-major (Fortran) data of any rank into row-major (C) order (None: no memory
/// for the copy).
fn fortran_to_c(shape: &[usize], values: &[f64]) -> Option<Vec<f64>> {
    let mut out = Vec::new();
    out.try_reserve_exact(values.len()).ok()?;
    if shape.len() < 2 {
        out.extend_from_slice(values);
        return Some(out);
    }
    // Fortran strides: the first index varies fastest.
    let mut strides = vec![1usize; shape.len()];
    for k in 1..shape.len() {
        strides[k] = strides[k - 1] * shape[k - 1];
    }
    let mut index = vec![0usize; shape.len()];
    for _ in 0..values.len() {
        let offset: usize = index.iter().zip(&strides).map(|(i, s)| i * s).sum();
        out.push(values[offset]);
        // Advance the C-order index: the last index varies fastest.
        for k in (0..shape.len()).rev() {
            index[k] += 1;
            if index[k] < shape[k] {
                break;
            }
            index[k] = 0;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A .npy file with a hand-written header and raw data bytes.
    fn npy(version: u8, header: &str, data: &[u8]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend([version, 0]);
        if version == 1 {
            out.extend((header.len() as u16).to_le_bytes());
        } else {
            out.extend((header.len() as u32).to_le_bytes());
        }
        out.extend(header.as_bytes());
        out.extend(data);
        out
    }

    #[test]
    fn read_f32_streams_fortran_and_big_endian_and_finds_the_first_unfit_value() {
        // 3x2, column by column: rows [1, 4], [1e39, 5], [3, NaN]; stored big-endian, Fortran.
        let columns = [1.0, 1e39, 3.0, 4.0, 5.0, f64::NAN];
        for version in [1, 2, 3] {
            let header = "{'descr': '>f8', 'fortran_order': True, 'shape': (3, 2), }";
            let bytes = npy(version, header, &f64_bytes(&columns, true));
            let n = read_f32(&mut &bytes[..], bytes.len() as u64, false).unwrap();
            assert_eq!((n.rows, n.cols), (3, 2));
            assert_eq!(&n.data[..3], &[1.0, 4.0, f32::INFINITY]);
            assert_eq!(n.data[3], 5.0);
            // Row-major first: (1, 0) = 1e39 comes before (2, 1) = NaN.
            assert_eq!(n.first_unfit, Some((2, 1e39)));
            // Lower triangle only: (0, 1) = 4 is zero, and the unfit values below still count.
            let n = read_f32(&mut &bytes[..], bytes.len() as u64, true).unwrap();
            assert_eq!(n.data[1], 0.0);
            assert_eq!(n.first_unfit, Some((2, 1e39)));
        }
        // A file shorter or longer than its header says, or of another rank.
        let header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }";
        let bytes = npy(1, header, &f64_bytes(&[1.0; 3], false));
        let e = read_f32(&mut &bytes[..], bytes.len() as u64, false).unwrap_err();
        assert!(format!("{e:?}").contains("needs 32 bytes"), "{e:?}");
        let bytes = npy(1, header, &f64_bytes(&[1.0; 5], false));
        let e = read_f32(&mut &bytes[..], bytes.len() as u64, false).unwrap_err();
        assert!(format!("{e:?}").contains("8 unexpected bytes"), "{e:?}");
        let header = "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }";
        let bytes = npy(1, header, &f64_bytes(&[1.0; 4], false));
        let e = read_f32(&mut &bytes[..], bytes.len() as u64, false).unwrap_err();
        assert!(matches!(e, ReadError::Rank(ref s) if s == &[4]), "{e:?}");
        // A file that shrank after its length was taken: an I/O error, not a panic.
        let header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }";
        let bytes = npy(1, header, &f64_bytes(&[1.0; 4], false));
        let short = &bytes[..bytes.len() - 8];
        let e = read_f32(&mut &short[..], bytes.len() as u64, false).unwrap_err();
        assert!(matches!(e, ReadError::Io(_)), "{e:?}");
    }

    #[test]
    fn declared_shapes_are_bounded_by_the_file_and_checked_before_allocation() {
        // A header of 100000 x 100000 float64 (80 GB) over 16 bytes: an error before anything
        // is allocated or the caller is asked, from both readers.
        let header = "{'descr': '<f8', 'fortran_order': True, 'shape': (100000, 100000), }";
        let bytes = npy(1, header, &[0; 16]);
        let never = &mut |_: &[usize]| -> Result<(), ParseError> { panic!("checked") };
        let e = parse_checked(&bytes, never).unwrap_err().to_string();
        assert!(
            e.contains("needs 80000000000 bytes of data, but only 16 follow"),
            "{e}"
        );
        let e = read_f32_checked(&mut &bytes[..], bytes.len() as u64, false, never).unwrap_err();
        assert!(
            format!("{e:?}").contains("needs 80000000000 bytes"),
            "{e:?}"
        );
        // A file that holds what it declares: the caller's refusal comes before the values.
        let header = "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 3), }";
        let bytes = npy(1, header, &f64_bytes(&[1.0, 2.0, 3.0], false));
        let refuse = &mut |shape: &[usize]| {
            assert_eq!(shape, [1, 3]);
            Err(ParseError::Unsupported("C must be square".into()))
        };
        let e = parse_checked(&bytes, refuse).unwrap_err();
        assert_eq!(e, ParseError::Unsupported("C must be square".into()));
        let e = read_f32_checked(&mut &bytes[..], bytes.len() as u64, false, refuse).unwrap_err();
        assert!(
            matches!(e, ReadError::Parse(ParseError::Unsupported(_))),
            "{e:?}"
        );
    }

    fn f64_bytes(v: &[f64], big: bool) -> Vec<u8> {
        v.iter()
            .flat_map(|x| {
                if big {
                    x.to_be_bytes()
                } else {
                    x.to_le_bytes()
                }
            })
            .collect()
    }

    #[test]
    fn writer_output_reads_back_and_is_aligned() {
        let mut buf = Vec::new();
        write(&mut buf, &[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.5]).unwrap();
        let header_len = u16::from_le_bytes([buf[8], buf[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0);
        assert_eq!(buf[10 + header_len - 1], b'\n');
        let a = parse(&buf).unwrap();
        assert_eq!(a.shape, vec![2, 3]);
        assert_eq!(a.precision, Precision::F32);
        assert_eq!(a.data, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.5]);

        let mut buf = Vec::new();
        write(&mut buf, &[3], &[0.1f64, -2.0, 1e300]).unwrap();
        let a = parse(&buf).unwrap();
        assert_eq!(a.shape, vec![3]);
        assert_eq!(a.data, vec![0.1, -2.0, 1e300]);
    }

    #[test]
    fn fortran_order_and_big_endian_and_versions() {
        // The 2x3 matrix [[1,2,3],[4,5,6]] stored column by column.
        let col_major = [1.0, 4.0, 2.0, 5.0, 3.0, 6.0];
        for (version, big) in [(1, false), (2, true), (3, false)] {
            let descr = if big { ">f8" } else { "<f8" };
            let header =
                format!("{{'descr': '{descr}', 'fortran_order': True, 'shape': (2, 3), }}\n");
            let a = parse(&npy(version, &header, &f64_bytes(&col_major, big))).unwrap();
            assert_eq!(a.shape, vec![2, 3]);
            assert_eq!(a.data, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        }
        // Rank 3 in Fortran order: element (i, j, k) at i + 2j + 4k.
        let values: Vec<f64> = (0..8).map(f64::from).collect();
        let c = fortran_to_c(&[2, 2, 2], &values).unwrap();
        assert_eq!(c, vec![0.0, 4.0, 2.0, 6.0, 1.0, 5.0, 3.0, 7.0]);
    }

    #[test]
    fn numpy_spellings_of_the_float_types_are_read() {
        for (descr, precision, bytes) in [
            ("<d", Precision::F64, 8),
            ("<f", Precision::F32, 4),
            ("float64", Precision::F64, 8),
            ("<f4", Precision::F32, 4),
        ] {
            let header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': (2,), }}");
            let data: Vec<u8> = if bytes == 8 {
                f64_bytes(&[1.5, -2.0], false)
            } else {
                [1.5f32, -2.0]
                    .iter()
                    .flat_map(|x| x.to_le_bytes())
                    .collect()
            };
            let a = parse(&npy(1, &header, &data)).unwrap();
            assert_eq!(
                (a.precision, a.data),
                (precision, vec![1.5, -2.0]),
                "{descr}"
            );
        }
    }

    #[test]
    fn rejects_what_it_should_with_a_reason() {
        let ok_header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }";
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (b"PK\x03\x04".to_vec(), "magic"),
            (MAGIC.to_vec(), "version"),
            (npy(4, ok_header, &[]), "version 4.0"),
            (
                npy(1, ok_header, &[0; 8]),
                "truncated: shape (2,) of float64 needs 16 bytes",
            ),
            (npy(1, ok_header, &[0; 17]), "1 unexpected bytes"),
            (
                npy(
                    1,
                    "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
                    &[0; 16],
                ),
                "'<i8' (integer)",
            ),
            (
                npy(
                    1,
                    "{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }",
                    &[0; 16],
                ),
                "complex",
            ),
            (
                npy(
                    1,
                    "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,), }",
                    &[0; 8],
                ),
                "structured",
            ),
            (
                npy(1, "{'descr': '<f8', 'shape': (2,), }", &[0; 16]),
                "no 'fortran_order'",
            ),
            (
                npy(
                    1,
                    "{'descr': '<f8', 'fortran_order': False, 'shape': (2,)",
                    &[0; 16],
                ),
                "expected ','",
            ),
            (
                npy(
                    1,
                    "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999, 99999999999, 99999999999), }",
                    &[],
                ),
                "too large",
            ),
            (npy(1, &"[".repeat(100), &[]), "nested too deeply"),
            (
                npy(
                    1,
                    "{'descr': '<f8', 'fortran_order': False, 'shape': (-3, 2), }",
                    &[],
                ),
                "'shape' entries must be non-negative integers, not the number -3",
            ),
            (
                npy(
                    1,
                    "{'descr': '<f8', 'fortran_order': False, 'shape': (2.5,), }",
                    &[],
                ),
                "not the number 2.5",
            ),
            (
                npy(
                    1,
                    "{'descr': '<e', 'fortran_order': False, 'shape': (1,), }",
                    &[0; 2],
                ),
                "half precision",
            ),
            (
                npy(
                    1,
                    "{'descr': '<i', 'fortran_order': False, 'shape': (1,), }",
                    &[0; 4],
                ),
                "integer",
            ),
        ];
        for (bytes, expected) in cases {
            let e = parse(&bytes).unwrap_err().to_string();
            assert!(e.contains(expected), "expected {expected:?} in {e:?}");
        }
        // Each kind of dtype is named as what it is.
        for (descr, kind) in [
            ("|b1", "boolean"),
            ("?", "boolean"),
            ("b", "integer"),
            ("|u1", "integer"),
            ("<i4", "integer"),
            ("<c16", "complex"),
            ("<U3", "text"),
            ("|S5", "text"),
            ("c", "text"),
            ("|O", "Python objects"),
            ("<M8[ns]", "date/time"),
            ("|V8", "raw bytes"),
        ] {
            let header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': (1,), }}");
            let e = parse(&npy(1, &header, &[0; 16])).unwrap_err().to_string();
            assert!(
                e.contains(&format!("dtype '{descr}' ({kind})")),
                "{descr}: {e}"
            );
        }
        // A header length past the end of the file.
        let mut bytes = npy(1, ok_header, &[0; 16]);
        bytes[8] = 0xff;
        bytes[9] = 0xff;
        assert!(
            parse(&bytes)
                .unwrap_err()
                .to_string()
                .contains("truncated in the header")
        );
    }
}
