//! Solve C·x = b for a symmetric positive definite C: the factor in float32 on the GPU, the
//! refinement in float64 (LAPACK's dsposv), x accurate to float64.
//!
//! `cargo run --example solve`

use symraster::{Gpu, Matrix, SolveOptions};

pub fn main() -> Result<(), symraster::Error> {
    let gpu = Gpu::new()?;
    // A 200 x 200 SPD matrix: diagonally dominant, symmetric.
    let m = 200;
    let c = Matrix::from_fn(m, m, |i, j| {
        if i == j {
            m as f64
        } else {
            1.0 / (1.0 + i.abs_diff(j) as f64)
        }
    });
    let b: Vec<f64> = (0..m).map(|i| (i as f64).sin()).collect();

    let s = gpu.spd_solve(&c, &b, SolveOptions::default())?;

    let r = c.mul_vec(&s.x)?;
    let residual = r
        .iter()
        .zip(&b)
        .map(|(r, b)| (r - b).abs())
        .fold(0.0, f64::max);
    println!(
        "x[0..3] = {:?}, {} refinement steps, max |C·x − b| = {residual:.1e}",
        &s.x[..3],
        s.iterations
    );
    assert!(s.converged && residual < 1e-12);
    Ok(())
}
