//! Seeded random problems, shared by tests, the demo and benchmarks.

use crate::matrix::Matrix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A seeded generator.
pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// An m x n matrix with entries uniform in (0, 1), as the paper's random problems.
pub fn uniform_matrix(rng: &mut impl Rng, m: usize, n: usize) -> Matrix<f32> {
    Matrix::from_fn(m, n, |_, _| rng.random_range(f32::EPSILON..1.0))
}

/// A vector of n entries uniform in (0, 1).
pub fn uniform_vector(rng: &mut impl Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| rng.random_range(f32::EPSILON..1.0))
        .collect()
}

/// A well-conditioned symmetric positive definite m x m matrix: B·Bᵀ/m + I with B uniform in
/// (−1, 1). Its condition number stays small, so f32 factors are close to the f64 ones.
pub fn well_conditioned_spd(rng: &mut impl Rng, m: usize) -> Matrix<f32> {
    let b = Matrix::from_fn(m, m, |_, _| rng.random_range(-1.0f64..1.0));
    let c = Matrix::from_fn(m, m, |i, j| {
        let dot: f64 = (0..m).map(|k| b[(i, k)] * b[(j, k)]).sum();
        dot / m as f64 + if i == j { 1.0 } else { 0.0 }
    });
    c.to_f32()
}

/// A strictly diagonally dominant m x m matrix (entries uniform in (−1, 1), diagonal m + 1):
/// LU without pivoting is stable on it.
pub fn diagonally_dominant(rng: &mut impl Rng, m: usize) -> Matrix<f32> {
    Matrix::from_fn(m, m, |i, j| {
        let x: f32 = rng.random_range(-1.0..1.0);
        if i == j { m as f32 + 1.0 } else { x }
    })
}
