//! What the batched operations return: per-problem status as LAPACK's and cuSOLVER's batched
//! INFO (0 ok, k > 0 not positive definite at column k − 1), beside the values.

use super::batch::Batch;

/// Why one problem of a batch has no result (its outputs are NaN; the others are right).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The pivot of `column` (0-based; LAPACK's INFO − 1) was not positive (or NaN) in f32.
    NotPositiveDefinite {
        /// The failing column, 0-based.
        column: usize,
    },
    /// A pivot or the solution left float32's range (INFO = −1): scale that problem's data.
    Overflow,
}

impl Failure {
    /// The failure an INFO value stands for (`None` for 0).
    pub fn from_info(info: i32) -> Option<Self> {
        match info {
            0 => None,
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
        Failure::from_info(self.info[p])
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
#[derive(Clone, Debug, PartialEq)]
pub struct BatchSolution {
    /// The solutions, (B, n) (vectors).
    pub x: Batch<f64>,
    /// Per problem: 0, k > 0 (column k − 1 not positive definite) or −1 (overflow).
    pub info: Vec<i32>,
    /// The refinement steps run on every problem.
    pub refinement_steps: usize,
}

impl BatchSolution {
    /// The problems that failed (INFO ≠ 0), in order.
    pub fn failed(&self) -> Vec<usize> {
        failed(&self.info)
    }

    /// Why problem p failed, if it did.
    pub fn failure(&self, p: usize) -> Option<Failure> {
        Failure::from_info(self.info[p])
    }
}
