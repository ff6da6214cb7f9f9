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

/// A symmetric, strictly diagonally dominant m x m matrix with positive diagonal (off-diagonal
/// entries uniform in (−1, 1), diagonal m + 1): positive definite, and generated in O(m²), for
/// timing factorizations at large m.
pub fn diagonally_dominant_spd(rng: &mut impl Rng, m: usize) -> Matrix<f32> {
    let mut c = diagonally_dominant(rng, m);
    for i in 0..m {
        for j in 0..i {
            c[(j, i)] = c[(i, j)];
        }
    }
    c
}

/// A weighted least-squares problem min ‖D(b − Aᵀx)‖₂ (section 2): A is m x n, `d` holds the
/// diagonal of D² (the paper's texture d), `b` has n entries.
#[derive(Clone, Debug)]
pub struct LeastSquaresProblem {
    /// The m x n data matrix (row j: basis function j at the n data points).
    pub a: Matrix<f64>,
    /// The n weights d_k², the diagonal of D².
    pub d: Vec<f64>,
    /// The n observations.
    pub b: Vec<f64>,
}

/// Section 5.3's random problem: n = 2m, A, the diagonal of D² and b uniform in (0, 1).
pub fn random_least_squares(seed: u64, m: usize) -> LeastSquaresProblem {
    let n = 2 * m;
    let mut rng = rng(seed);
    let mut uniform = || rng.random_range(f64::MIN_POSITIVE..1.0);
    let a = Matrix::from_fn(m, n, |_, _| uniform());
    let d = (0..n).map(|_| uniform()).collect();
    let b = (0..n).map(|_| uniform()).collect();
    LeastSquaresProblem { a, d, b }
}

/// Section 5.3's ill-conditioned problem: A and b as [`random_least_squares`] with the same
/// seed (the very same entries), and the i-th diagonal element of D² equal to
/// 10^(−4 + 8i/(n−1)), i = 0..n−1, so the weights span eight orders of magnitude.
pub fn ill_conditioned_least_squares(seed: u64, m: usize) -> LeastSquaresProblem {
    let mut problem = random_least_squares(seed, m);
    let n = problem.d.len();
    let last = n.saturating_sub(1).max(1) as f64;
    for (i, d) in problem.d.iter_mut().enumerate() {
        *d = 10f64.powf(-4.0 + 8.0 * i as f64 / last);
    }
    problem
}
