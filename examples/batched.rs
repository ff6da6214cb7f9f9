//! Many small problems in one launch: 10,000 independent straight-line fits (as per-pixel fits
//! of an image time series are), with one sample of each fit weighted zero, and one member
//! that cannot be solved reported by its INFO instead of failing the batch.
//!
//! `cargo run --example batched`

use symraster::{Batch, BatchOptions, Gpu};

pub fn main() -> Result<(), symraster::Error> {
    let gpu = Gpu::new()?;
    let (count, n, k) = (10_000, 2, 12); // problems, unknowns, observations
    let mut a = Vec::with_capacity(count * n * k);
    let mut d = Vec::with_capacity(count * k);
    let mut b = Vec::with_capacity(count * k);
    for p in 0..count {
        let (intercept, slope) = (p as f32 * 1e-3, 1.0 - p as f32 * 1e-4);
        // A (n x k) row-major: a row of ones, then the times.
        a.extend((0..k).map(|_| 1.0f32));
        a.extend((0..k).map(|j| j as f32));
        // The last problem has every weight zero: its normal matrix is singular.
        d.extend((0..k).map(|j| {
            if p == count - 1 || j == 3 {
                0.0f32
            } else {
                1.0
            }
        }));
        b.extend((0..k).map(|j| intercept + slope * j as f32));
    }
    let a = Batch::new(count, n, k, a)?;
    let d = Batch::vectors(count, k, d)?;
    let b = Batch::vectors(count, k, b)?;

    let s = gpu
        .batched()
        .least_squares(&a, &d, &b, BatchOptions::default())?;

    println!(
        "problem 1: x = {:?}; failed: {:?} ({:?})",
        s.x.problem(1),
        s.failed(),
        s.failure(count - 1)
    );
    assert_eq!(s.failed(), vec![count - 1]);
    let x = s.x.problem(1);
    assert!((x[0] - 1e-3).abs() < 1e-5 && (x[1] - (1.0 - 1e-4)).abs() < 1e-5);
    Ok(())
}
