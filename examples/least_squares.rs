//! Weighted least squares: fit y ≈ x₀ + x₁·t + x₂·t² to noisy samples, weighting each sample,
//! as min ‖D(b − Aᵀx)‖₂ with A holding one column per observation (the paper's section 5.3).
//!
//! `cargo run --example least_squares`

use symraster::{Gpu, Matrix, SolveOptions};

pub fn main() -> Result<(), symraster::Error> {
    let gpu = Gpu::new()?;
    let n = 500; // observations
    let t: Vec<f64> = (0..n).map(|j| j as f64 / n as f64).collect();
    // A is 3 x n: the basis functions 1, t, t² evaluated at every sample.
    let a = Matrix::from_fn(3, n, |i, j| t[j].powi(i as i32));
    let truth = [1.0, -2.0, 3.0];
    let noise = |j: usize| 1e-3 * ((j * 7919) % 13) as f64 - 6e-3;
    let b: Vec<f64> = (0..n)
        .map(|j| truth[0] + truth[1] * t[j] + truth[2] * t[j] * t[j] + noise(j))
        .collect();
    // d holds the diagonal of D²: the weights; the last tenth of the samples counts double.
    let d: Vec<f64> = (0..n)
        .map(|j| if j >= 9 * n / 10 { 2.0 } else { 1.0 })
        .collect();

    let s = gpu.least_squares(&a, &d, &b, SolveOptions::default())?;

    println!(
        "x = {:.4?} (truth {truth:?}), {} refinement steps",
        s.x, s.iterations
    );
    assert!(s.converged);
    assert!(s.x.iter().zip(truth).all(|(x, t)| (x - t).abs() < 0.05));
    Ok(())
}
