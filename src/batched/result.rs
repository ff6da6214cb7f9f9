//! What the batched operations return: per-problem status as LAPACK's and cuSOLVER's batched
//! INFO (0 ok, 0 < k ≤ n not positive definite at column k − 1, n + 1 singular to working
//! precision as LAPACK's dposvx says it, −1 out of float32's range), beside the values.

use super::batch::Batch;

/// The pivot ratio L(j,j)²/C(j,j) at or below which the batched solves call a problem's C
/// singular to working precision (INFO n + 1, [`Failure::Singular`]): 32·2⁻²⁴ ≈ 1.9e-6, the
/// single least squares' `least_squares::pivot_tolerance` (whose doc says why this value). A
/// pivot of an exactly singular C (a rank n − 1 matrix, two equal unknowns in least squares) is
/// rounding noise of a few 2⁻²⁴·C(j,j), and where it comes out positive the factor passes and
/// x is noise.
pub const SINGULAR_PIVOT_RATIO: f64 = 32.0 * f32::EPSILON as f64 / 2.0;

/// Why one problem of a batch has no result (its outputs are NaN; the others are right).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The pivot of `column` (0-based; LAPACK's INFO − 1) was not positive (or NaN) in f32.
    NotPositiveDefinite {
        /// The failing column, 0-based.
        column: usize,
    },
    /// The solves only: C (A·D²·Aᵀ in least squares) is singular to working precision (INFO
    /// = n + 1, as LAPACK's dposvx says "rcond below machine precision"): the f32 factor
    /// passed, but a pivot ratio L(j,j)²/C(j,j) is at or below [`SINGULAR_PIVOT_RATIO`], so
    /// refinement cannot converge and x would be noise. Unlike dposvx, which returns x, x is
    /// NaN, as for every failure. Solve that problem alone with `Gpu::spd_solve` or
    /// `Gpu::least_squares` (f64 fallback, and an error that says what is singular), or check
    /// its rank (repeated or dependent unknowns).
    Singular,
    /// A pivot or the solution left float32's range (INFO = −1): scale that problem's data.
    Overflow,
}

impl Failure {
    /// The failure an INFO value of a problem of order `n` stands for (`None` for 0).
    pub fn from_info(info: i32, n: usize) -> Option<Self> {
        match info {
            0 => None,
            k if k > 0 && k as usize == n + 1 => Some(Failure::Singular),
            k if k > 0 => Some(Failure::NotPositiveDefinite {
                column: k as usize - 1,
            }),
            _ => Some(Failure::Overflow),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::NotPositiveDefinite { column } => write!(
                f,
                "not positive definite: the pivot of column {column} (0-based) is not positive"
            ),
            Failure::Singular => f.write_str(
                "singular to working precision: the float32 factor passed, but a pivot \
                 L(j,j)² is at most 1.9e-6·C(j,j), so x would be noise (check the problem's \
                 rank: repeated or dependent unknowns)",
            ),
            Failure::Overflow => f.write_str("left single precision's range (scale its data)"),
        }
    }
}

/// The problems whose INFO is not 0, in order.
fn failed(info: &[i32]) -> Vec<usize> {
    info.iter()
        .enumerate()
        .filter(|&(_, &s)| s != 0)
        .map(|(p, _)| p)
        .collect()
}

/// A batched Cholesky: Lₚ with Cₚ = Lₚ·Lₚᵀ (f32, full storage, zeros above the diagonal) and
/// each problem's INFO; a failed problem's L is all NaN.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchFactor {
    /// The factors, (B, n, n).
    pub l: Batch<f32>,
    /// Per problem: 0, k > 0 (column k − 1 not positive definite) or −1 (overflow).
    pub info: Vec<i32>,
}

impl BatchFactor {
    /// The problems that failed (INFO ≠ 0), in order.
    pub fn failed(&self) -> Vec<usize> {
        failed(&self.info)
    }

    /// Why problem p failed, if it did.
    pub fn failure(&self, p: usize) -> Option<Failure> {
        Failure::from_info(self.info[p], self.l.rows())
    }
}

/// A batched solve (SPD or least squares): xₚ in f64 and each problem's INFO; a failed
/// problem's x is all NaN.
///
/// Precision: the factor and the first solve are f32; `refinement_steps` steps of iterative
/// refinement follow, each with the residual in f64 from the data as the GPU holds it (the
/// inputs rounded once to f32) and the correction through the f32 factor, x kept in f64. One
/// step shrinks the error by about κ·2⁻²⁴ (κ = the condition number of C), so where κ·2⁻²⁴ ≪ 1
/// x comes close to the exact solution of the f32-rounded data, far beyond f32's own accuracy;
/// it says nothing about the rounding of f64 inputs to f32, which stays (κ·2⁻²⁴ relative).
/// Use `Gpu::spd_solve` or `Gpu::least_squares` per problem for a result to f64 accuracy.
/// `X` is f64 (`Batched::spd_solve`, `Batched::least_squares`), or f32 where the caller asks
/// for x rounded once from the f64 refinement (`Batched::spd_solve_as::<f32>`).
#[derive(Clone, Debug, PartialEq)]
pub struct BatchSolution<X = f64> {
    /// The solutions, (B, n) (vectors).
    pub x: Batch<X>,
    /// Per problem: 0; 0 < k ≤ n (column k − 1 not positive definite); n + 1 (C singular to
    /// working precision: [`Failure::Singular`]); or −1 (overflow).
    pub info: Vec<i32>,
    /// The refinement steps run on every problem.
    pub refinement_steps: usize,
}

impl<X: Copy> BatchSolution<X> {
    /// The problems that failed (INFO ≠ 0), in order.
    pub fn failed(&self) -> Vec<usize> {
        failed(&self.info)
    }

    /// Why problem p failed, if it did.
    pub fn failure(&self, p: usize) -> Option<Failure> {
        Failure::from_info(self.info[p], self.x.rows())
    }
}
