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
