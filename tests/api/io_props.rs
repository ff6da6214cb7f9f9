//! Property tests of the .npy and .mtx readers: arbitrary or corrupted bytes give an error,
//! never a panic, and whatever the writers write reads back exactly.

use proptest::prelude::*;
use symraster::io::{mtx, npy};

/// A valid .npy file of the given shape, in either precision, to corrupt.
fn valid_npy(rows: usize, cols: usize, f32s: bool) -> Vec<u8> {
    let mut buf = Vec::new();
    let data: Vec<f64> = (0..rows * cols).map(|k| k as f64 * 0.5 - 3.0).collect();
    if f32s {
        let data: Vec<f32> = data.iter().map(|&x| x as f32).collect();
        npy::write(&mut buf, &[rows, cols], &data).unwrap();
    } else {
        npy::write(&mut buf, &[rows, cols], &data).unwrap();
    }
    buf
}

fn valid_mtx(rows: usize, cols: usize) -> Vec<u8> {
    let mut buf = Vec::new();
    let data: Vec<f64> = (0..rows * cols).map(|k| k as f64 / 7.0).collect();
    mtx::write(&mut buf, &[rows, cols], &data).unwrap();
    buf
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn npy_arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = npy::parse(&bytes);
    }

    #[test]
    fn npy_arbitrary_bytes_after_magic_never_panic(
        version in 0u8..5,
        tail in proptest::collection::vec(any::<u8>(), 0..300),
    ) {
        let mut bytes = b"\x93NUMPY".to_vec();
        bytes.extend([version, 0]);
        bytes.extend(tail);
        let _ = npy::parse(&bytes);
    }

    #[test]
    fn npy_arbitrary_header_text_never_panics(header in "[{}()\\[\\]':, 0-9a-zA-Z_<>=|\"L-]{0,120}") {
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend((header.len() as u16).to_le_bytes());
        bytes.extend(header.as_bytes());
        bytes.extend([0u8; 64]);
        let _ = npy::parse(&bytes);
    }

    #[test]
    fn npy_corrupted_or_truncated_files_never_panic(
        rows in 0usize..5, cols in 0usize..5, f32s in any::<bool>(),
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..6),
        cut in any::<usize>(),
    ) {
        let mut bytes = valid_npy(rows, cols, f32s);
        for (at, value) in flips {
            let n = bytes.len();
            bytes[at % n] = value;
        }
        let keep = cut % (bytes.len() + 1);
        let _ = npy::parse(&bytes[..keep]);
        let _ = npy::parse(&bytes);
    }

    /// The streaming float32 reader agrees with the whole-file parser: the same error or the
    /// same values rounded (Fortran order too), the first value float32 cannot hold found, and
    /// with `lower_only` the upper triangle zero.
    #[test]
    fn npy_read_f32_agrees_with_parse(
        rows in 0usize..5, cols in 0usize..5, f32s in any::<bool>(), lower_only in any::<bool>(),
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..3),
        cut in any::<usize>(),
    ) {
        let mut bytes = valid_npy(rows, cols, f32s);
        for (at, value) in flips {
            let n = bytes.len();
            bytes[at % n] = value;
        }
        let keep = bytes.len() - cut % 3;
        let bytes = &bytes[..keep];
        let streamed = npy::read_f32(&mut &bytes[..], bytes.len() as u64, lower_only);
        match (npy::parse(bytes), streamed) {
            (Ok(a), Ok(n)) if a.shape.len() == 2 => {
                prop_assert_eq!(vec![n.rows, n.cols], a.shape.clone());
                let mut unfit = None;
                for (at, &v) in a.data.iter().enumerate() {
                    let upper = lower_only && at % n.cols > at / n.cols;
                    let expected = if upper { 0.0 } else { v as f32 };
                    prop_assert!(n.data[at] == expected || (expected.is_nan() && n.data[at].is_nan()));
                    if !upper && unfit.is_none() && (!v.is_finite() || v.abs() > f64::from(f32::MAX)) {
                        unfit = Some(at);
                    }
                }
                prop_assert_eq!(n.first_unfit.map(|(at, _)| at), unfit);
            }
            (Ok(a), Err(npy::ReadError::Rank(shape))) => prop_assert_eq!(a.shape, shape),
            (Err(e), Err(npy::ReadError::Parse(f))) => prop_assert_eq!(e, f),
            (a, n) => prop_assert!(false, "parse {:?} but read_f32 {:?}", a.map(|a| a.shape), n.map(|n| (n.rows, n.cols))),
        }
    }

    #[test]
    fn npy_round_trips(
        rows in 0usize..6, cols in 0usize..6,
        seed in proptest::collection::vec(-1e30f64..1e30, 36),
    ) {
        let data: Vec<f64> = seed[..rows * cols].to_vec();
        let mut buf = Vec::new();
        npy::write(&mut buf, &[rows, cols], &data).unwrap();
        let a = npy::parse(&buf).unwrap();
        prop_assert_eq!(a.shape, vec![rows, cols]);
        prop_assert_eq!(a.data, data);
    }

    #[test]
    fn mtx_arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = mtx::parse(&bytes);
    }

    #[test]
    fn mtx_arbitrary_text_after_banner_never_panics(
        symmetric in any::<bool>(),
        body in "[0-9 .eE+\\-%\nnaif]{0,200}",
    ) {
        let text = format!(
            "%%MatrixMarket matrix array real {}\n{body}",
            if symmetric { "symmetric" } else { "general" }
        );
        let _ = mtx::parse(text.as_bytes());
    }

    #[test]
    fn mtx_corrupted_or_truncated_files_never_panic(
        rows in 0usize..5, cols in 0usize..5,
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..6),
        cut in any::<usize>(),
    ) {
        let mut bytes = valid_mtx(rows, cols);
        for (at, value) in flips {
            let n = bytes.len();
            bytes[at % n] = value;
        }
        let keep = cut % (bytes.len() + 1);
        let _ = mtx::parse(&bytes[..keep]);
        let _ = mtx::parse(&bytes);
    }

    #[test]
    fn mtx_round_trips(
        rows in 0usize..6, cols in 0usize..6,
        seed in proptest::collection::vec(-1e30f64..1e30, 36),
    ) {
        let data: Vec<f64> = seed[..rows * cols].to_vec();
        let mut buf = Vec::new();
        mtx::write(&mut buf, &[rows, cols], &data).unwrap();
        let a = mtx::parse(&buf).unwrap();
        prop_assert_eq!(a.shape, vec![rows, cols]);
        prop_assert_eq!(a.data, data);
    }
}

/// A coordinate file listing `dense` (rows x cols, row-major) as the given symmetry lists it,
/// in a shuffled order, each nonzero value split into two duplicate entries that sum to it.
fn coordinate_text(
    rows: usize,
    cols: usize,
    dense: &[f64],
    symmetry: &str,
    order: &[usize],
) -> String {
    let mut entries = Vec::new();
    for i in 0..rows {
        for j in 0..cols {
            let v = dense[i * cols + j];
            let listed = match symmetry {
                "general" => true,
                "symmetric" => i >= j,
                _ => i > j,
            };
            if listed && v != 0.0 {
                // Halves of a multiple of 0.5 are exact: the sum is exact.
                entries.push(format!("{} {} {:e}", i + 1, j + 1, v / 2.0));
                entries.push(format!("{} {} {:e}", i + 1, j + 1, v / 2.0));
            }
        }
    }
    // A permutation of the entries from the random keys.
    let mut keyed: Vec<(usize, String)> = entries
        .into_iter()
        .enumerate()
        .map(|(k, e)| (order[k % order.len()].wrapping_mul(31).wrapping_add(k), e))
        .collect();
    keyed.sort();
    let mut text = format!(
        "%%MatrixMarket matrix coordinate real {symmetry}\n% made by io_props\n{rows} {cols} {}\n",
        keyed.len()
    );
    for (_, e) in keyed {
        text.push_str(&e);
        text.push('\n');
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Coordinate files of every symmetry read back to the dense matrix they list: duplicates
    /// summed, symmetric entries mirrored, skew-symmetric ones mirrored with the sign flipped.
    #[test]
    fn mtx_coordinate_reads_the_dense_matrix(
        rows in 0usize..6, cols in 0usize..6, kind in 0usize..3,
        seed in proptest::collection::vec(-8i32..8, 36),
        order in proptest::collection::vec(any::<usize>(), 1..40),
    ) {
        let symmetry = ["general", "symmetric", "skew-symmetric"][kind];
        let cols = if kind == 0 { cols } else { rows };
        // Sparse: about half the values are zero; multiples of 0.5.
        let value = |i: usize, j: usize| {
            let s = seed[i * 6 + j];
            if s % 2 == 0 { 0.0 } else { f64::from(s) * 0.5 }
        };
        let dense: Vec<f64> = (0..rows * cols)
            .map(|k| {
                let (i, j) = (k / cols, k % cols);
                match kind {
                    0 => value(i, j),
                    1 => value(i.max(j), i.min(j)),
                    _ if i == j => 0.0,
                    _ if i > j => value(i, j),
                    _ => -value(j, i),
                }
            })
            .collect();
        let text = coordinate_text(rows, cols, &dense, symmetry, &order);
        let a = mtx::parse(text.as_bytes()).unwrap();
        prop_assert_eq!(a.shape, vec![rows, cols]);
        prop_assert_eq!(a.data, dense);
    }

    #[test]
    fn mtx_coordinate_arbitrary_text_after_banner_never_panics(
        kind in 0usize..3, pattern in any::<bool>(),
        body in "[0-9 .eE+\\-%\nnaif]{0,200}",
    ) {
        let text = format!(
            "%%MatrixMarket matrix coordinate {} {}\n{body}",
            if pattern { "pattern" } else { "real" },
            ["general", "symmetric", "skew-symmetric"][kind]
        );
        let _ = mtx::parse(text.as_bytes());
    }
}

/// Sizes at the edges of what a header can say: zero, one, around 2^32 and usize::MAX.
fn extreme_size() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(1),
        Just(u64::from(u32::MAX)),
        Just(1u64 << 32),
        Just(u64::MAX / 2),
        Just(u64::MAX / 2 + 1),
        Just(u64::MAX - 1),
        Just(u64::MAX),
        any::<u64>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Matrix Market headers of every kind with extreme sizes: an error or an empty array,
    /// never a panic (size arithmetic must not wrap) and never a long loop.
    #[test]
    fn mtx_extreme_sizes_in_every_header_kind(
        rows in extreme_size(), cols in extreme_size(),
        symmetric in any::<bool>(), values in 0usize..4,
    ) {
        let symmetry = if symmetric { "symmetric" } else { "general" };
        let mut text = format!("%%MatrixMarket matrix array real {symmetry}\n{rows} {cols}\n");
        for k in 0..values {
            text.push_str(&format!("{k}\n"));
        }
        if let Ok(a) = mtx::parse(text.as_bytes()) {
            prop_assert_eq!(a.data.len() as u64, rows.saturating_mul(cols));
        }
    }

    /// Coordinate headers with extreme sizes and entry counts: an error (a count past what the
    /// bytes hold, a size past the address space, or no memory for the dense matrix) or the
    /// matrix; never a panic or an abort.
    #[test]
    fn mtx_coordinate_extreme_sizes(
        rows in extreme_size(), cols in extreme_size(), entries in extreme_size(),
        kind in 0usize..3,
    ) {
        let symmetry = ["general", "symmetric", "skew-symmetric"][kind];
        let text = format!(
            "%%MatrixMarket matrix coordinate real {symmetry}\n{rows} {cols} {entries}\n1 1 0\n"
        );
        if let Ok(a) = mtx::parse(text.as_bytes()) {
            prop_assert_eq!(a.data.len() as u64, rows.saturating_mul(cols));
        }
    }

    /// .npy headers of every rank and order with extreme sizes: an error or an empty array.
    #[test]
    fn npy_extreme_sizes_in_every_header_kind(
        shape in proptest::collection::vec(extreme_size(), 0..4),
        fortran in any::<bool>(), f32s in any::<bool>(), version in 1u8..4,
    ) {
        let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
        let shape_text = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
        let header = format!(
            "{{'descr': '{}', 'fortran_order': {}, 'shape': {shape_text}, }}",
            if f32s { "<f4" } else { "<f8" },
            if fortran { "True" } else { "False" },
        );
        let mut bytes = b"\x93NUMPY".to_vec();
        bytes.extend([version, 0]);
        if version == 1 {
            bytes.extend((header.len() as u16).to_le_bytes());
        } else {
            bytes.extend((header.len() as u32).to_le_bytes());
        }
        bytes.extend(header.as_bytes());
        bytes.extend([0u8; 16]);
        if let Ok(a) = npy::parse(&bytes) {
            let count = shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d));
            prop_assert_eq!(Some(a.data.len() as u64), count);
        }
    }
}
