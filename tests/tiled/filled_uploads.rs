//! Data computed straight into the upload (`Buffer::filled`, `TiledMatrix::from_rows`) or
//! handed out of the read-back piece by piece (`Buffer::read_pieces`):
//! below and above the staged size (8 MiB) and across several staging chunks (32 MiB), every
//! value where it belongs; a matrix's rows in one buffer and split over several equal to the
//! same rows uploaded from a host matrix (`TiledMatrix::from_lower`), NaN above the diagonal
//! and in the padding.

use crate::common;

use symraster::gl::{Buffer, BufferTarget, BufferUsage};
use symraster::internal::GpuInternals;
use symraster::tiled::{Storage, TiledMatrix};
use symraster::{Matrix, SymmetricView, Triangle};

#[test]
fn filled_buffers_hold_every_value_at_its_index() {
    let gpu = common::gpu();
    for len in [1, 1000, (1 << 18) + 3, (9 << 20) / 4, (70 << 20) / 4 + 5] {
        let b = Buffer::<f32>::filled(
            gpu.context(),
            BufferTarget::Storage,
            BufferUsage::Static,
            len,
            |first, out| {
                for (k, v) in out.iter_mut().enumerate() {
                    *v = ((first + k) % 1_000_003) as f32;
                }
            },
        )
        .unwrap();
        assert_eq!(b.len(), len);
        let got = b.download().unwrap();
        let bad = got
            .iter()
            .enumerate()
            .find(|&(k, &v)| v != (k % 1_000_003) as f32);
        assert!(bad.is_none(), "len {len}: {bad:?}");
    }
}

#[test]
fn pieces_read_back_hold_every_value_once_at_its_index() {
    use std::sync::atomic::{AtomicU32, Ordering};
    let gpu = common::gpu();
    for len in [1, 1000, (1 << 18) + 3, (9 << 20) / 4, (70 << 20) / 4 + 5] {
        let data: Vec<f32> = (0..len).map(|k| (k % 1_000_003) as f32).collect();
        let b = Buffer::new(
            gpu.context(),
            BufferTarget::Storage,
            BufferUsage::Static,
            &data,
        )
        .unwrap();
        let seen: Vec<AtomicU32> = (0..len).map(|_| AtomicU32::new(0)).collect();
        let wrong = AtomicU32::new(0);
        b.read_pieces(&|first, values| {
            for (k, &v) in values.iter().enumerate() {
                seen[first + k].fetch_add(1, Ordering::Relaxed);
                if v != data[first + k] {
                    wrong.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
        .unwrap();
        assert_eq!(
            wrong.into_inner(),
            0,
            "len {len}: values away from their index"
        );
        let bad = seen.iter().position(|s| s.load(Ordering::Relaxed) != 1);
        assert!(
            bad.is_none(),
            "len {len}: value {bad:?} not read exactly once"
        );
    }
}

#[test]
fn rows_computed_into_the_upload_match_the_host_matrix() {
    let gpu = common::gpu();
    if !gpu.info().has_compute() {
        eprintln!("skipped: no compute shaders on {}", gpu.info().renderer);
        return;
    }
    let value = |i: usize, j: usize| ((i * 31 + j * 17) % 97) as f32 - 48.0;
    // 600: pieces of 256 Ki values split rows; 1500: past the staged size; split parts.
    for (m, part_bytes) in [
        (3, i32::MAX as u64),
        (600, i32::MAX as u64),
        (1500, i32::MAX as u64),
        (600, 300_000),
    ] {
        let c = Matrix::from_fn(m, m, |i, j| if j <= i { value(i, j) } else { f32::NAN });
        let want = TiledMatrix::from_lower(gpu.context(), &c, Storage::Full, part_bytes)
            .unwrap()
            .download_raw()
            .unwrap();
        let got = TiledMatrix::from_rows(gpu.context(), m, Storage::Full, part_bytes, |i, row| {
            for (j, v) in row.iter_mut().enumerate() {
                *v = value(i, j);
            }
        })
        .unwrap();
        assert_eq!(
            got.part_count(),
            TiledMatrix::uninitialized(gpu.context(), m, Storage::Full, part_bytes)
                .unwrap()
                .part_count(),
            "m {m}"
        );
        let got = got.download_raw().unwrap();
        assert_eq!(got.len(), want.len(), "m {m}");
        for (k, (a, b)) in got.iter().zip(&want).enumerate() {
            assert!(
                a == b || (a.is_nan() && b.is_nan()),
                "m {m}, parts of {part_bytes} bytes, value {k}: {a} against {b}"
            );
        }
        assert!(
            got.iter().any(|v| v.is_nan()) || m == 1,
            "m {m}: the upper triangle must be NaN"
        );
        // The same rows a block at a time from an upper triangle (NaN in the lower one).
        let upper: Vec<f64> = (0..m * m)
            .map(|k| {
                let (i, j) = (k / m, k % m);
                if j >= i {
                    f64::from(value(j, i))
                } else {
                    f64::NAN
                }
            })
            .collect();
        let view = SymmetricView::new(&upper, m, m, Triangle::Upper).unwrap();
        let blocks = TiledMatrix::from_row_blocks(
            gpu.context(),
            m,
            Storage::Full,
            part_bytes,
            |rows, ld, out| {
                view.lower_rows_into(rows, ld, out, |v| v as f32);
            },
        )
        .unwrap()
        .download_raw()
        .unwrap();
        for (k, (a, b)) in blocks.iter().zip(&want).enumerate() {
            assert!(
                a == b || (a.is_nan() && b.is_nan()),
                "m {m}, parts of {part_bytes} bytes, blocks, value {k}: {a} against {b}"
            );
        }
    }
}
