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
