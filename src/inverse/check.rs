//! Whether an inverse is one: a cheap estimate of ‖I − M·X‖_F for the f32 GPU inverse (random
//! probes, O(s²)), the bound at or above which X is no inverse, and the f64 CPU inverse that
//! refinement falls back to when the f32 one fails (as LAPACK's dsposv falls back to dpotrf).

use super::Kind;
use crate::cpu::{cholesky_in_place, from_faer, par, to_faer};
use crate::error::{Error, NumericalError, Result};
use crate::matrix::Matrix;
use faer::linalg::cholesky::llt::factor::LltError;
use faer::linalg::solvers::DenseSolveCore;
use rayon::prelude::*;

/// ‖I − M·X‖_F at or above which X is no inverse: Newton-Schulz refinement cannot start from
/// it, and X may be wrong in every digit.
pub const NOT_AN_INVERSE: f64 = 0.5;

/// Whether a residual ‖I − M·X‖_F (or its estimate) leaves X an inverse: below
/// [`NOT_AN_INVERSE`] (NaN is not).
pub fn is_inverse(residual: f64) -> bool {
    residual < NOT_AN_INVERSE
}

/// Random ±1 probes of [`residual_estimate`].
const PROBES: usize = 4;

/// y = M·v for the row-major `m` and `PROBES` interleaved vectors `v` (n·PROBES values), in f64.
fn multiply<T: Copy + Into<f64> + Sync>(m: &Matrix<T>, v: &[f64]) -> Vec<f64> {
    let n = m.cols();
    let mut y = vec![0.0; m.rows() * PROBES];
    y.par_chunks_mut(PROBES).enumerate().for_each(|(i, yi)| {
        for (j, &a) in m.row(i).iter().enumerate() {
            let a: f64 = a.into();
            for (k, y) in yi.iter_mut().enumerate() {
                *y += a * v[j * PROBES + k];
            }
        }
        debug_assert!(n * PROBES == v.len());
    });
    y
}

/// An estimate of ‖I − M·X‖_F from four random ±1 probes v (E‖(I − MX)v‖² = ‖I − MX‖_F²),
/// in f64 at O(s²) cost; `m` is the full matrix.
pub fn residual_estimate<T, U>(m: &Matrix<T>, x: &Matrix<U>) -> f64
where
    T: Copy + Into<f64> + Sync,
    U: Copy + Into<f64> + Sync,
{
    let n = m.rows();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let v: Vec<f64> = (0..n * PROBES)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if state >> 63 == 0 { 1.0 } else { -1.0 }
        })
        .collect();
    let mv = multiply(m, &multiply(x, &v));
    let sum: f64 = v.iter().zip(&mv).map(|(a, b)| (a - b) * (a - b)).sum();
    (sum / PROBES as f64).sqrt()
}

/// κ_F(M) ≈ ‖M‖_F·‖X‖_F from a computed X ≈ M⁻¹.
pub fn condition<T: Copy + Into<f64>, U: Copy + Into<f64>>(m: &Matrix<T>, x: &Matrix<U>) -> f64 {
    let norm = |s: &mut dyn Iterator<Item = f64>| s.map(|v| v * v).sum::<f64>().sqrt();
    norm(&mut m.as_slice().iter().map(|&v| v.into()))
        * norm(&mut x.as_slice().iter().map(|&v| v.into()))
}

/// The error for an f32 inverse X of `m` whose residual (estimated) shows it is none.
pub fn single_precision_failed<T, U>(m: &Matrix<T>, x: &Matrix<U>, residual: f64) -> Error
where
    T: Copy + Into<f64>,
    U: Copy + Into<f64>,
{
    NumericalError::IllConditioned {
        precision: "single",
        residual,
        after: "for the GPU's float32 inverse (estimated by random probes)".into(),
        condition: condition(m, x),
        advice: "refinement (at least one step) falls back to a double-precision inverse on \
                 the CPU",
    }
    .into()
}

/// M⁻¹ in f64 on the CPU (faer): via Cholesky for [`Kind::Spd`] (a pivot that is not positive
/// is [`NumericalError::NotPositiveDefinite`] at its column), via LU with partial pivoting
/// otherwise. `full` is the whole matrix.
pub fn cpu_inverse(full: &Matrix<f64>, kind: Kind) -> Result<Matrix<f64>> {
    let fa = to_faer(full);
    let x = match kind {
        Kind::Spd => match fa.llt(faer::Side::Lower) {
            Ok(llt) => llt.inverse(),
            Err(LltError::NonPositivePivot { index }) => {
                // The same factorisation in place again, for the pivot's value.
                let mut c = fa.clone();
                cholesky_in_place(&mut c, par(0))?;
                return Err(NumericalError::NotPositiveDefinite {
                    column: index,
                    pivot: f64::NAN,
                }
                .into());
            }
        },
        Kind::General => fa.partial_piv_lu().inverse(),
    };
    Ok(from_faer(&x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_sees_a_wrong_inverse_and_passes_a_right_one() {
        let n = 40;
        let m = Matrix::from_fn(
            n,
            n,
            |i, j| if i == j { 2.0 } else { 0.01 * (i + j) as f64 },
        );
        let x = cpu_inverse(&m, Kind::General).unwrap();
        assert!(residual_estimate(&m, &x) < 1e-12);
        let id = Matrix::from_fn(n, n, |i, j| f64::from(u8::from(i == j)));
        // I − M·I = I − M has ‖·‖_F ≈ the off-diagonal and the −1 diagonal.
        let exact = (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .map(|(i, j)| (f64::from(u8::from(i == j)) - m[(i, j)]).powi(2))
            .sum::<f64>()
            .sqrt();
        let est = residual_estimate(&m, &id);
        assert!(est > 0.3 * exact && est < 3.0 * exact, "{est} vs {exact}");
        let mut bad = m.clone();
        bad[(3, 3)] = -5.0;
        assert!(matches!(
            cpu_inverse(&bad, Kind::Spd),
            Err(Error::Numerical(NumericalError::NotPositiveDefinite {
                column: 3,
                ..
            }))
        ));
    }
}
