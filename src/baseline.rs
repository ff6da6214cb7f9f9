//! The fast CPU baseline (faer, multi-threaded) the GPU is compared with: the lower triangle of
//! A·diag(d)·Aᵀ (as ATLAS's ssyrk in the paper) and the Cholesky factor (as spotrf), on the
//! library's CPU routines (`crate::cpu`).

pub use crate::cpu::{
    Real, assemble_lower_into, cholesky_in_place, from_faer, par, scale_columns, to_faer,
};
use crate::error::Result;
use crate::matrix::Matrix;
use faer::{Mat, Par};

/// The lower triangle of A·diag(d)·Aᵀ (upper zero), on the CPU with faer.
pub fn assemble<T: Real + Default>(a: &Matrix<T>, d: &[T], par: Par) -> Matrix<T> {
    let fa = to_faer(a);
    let b = scale_columns(&fa, d);
    let mut c = Mat::zeros(a.rows(), a.rows());
    assemble_lower_into(&mut c, &fa, &b, par);
    from_faer(&c).lower_triangle()
}

/// The Cholesky factor of the lower triangle of `c` (upper zero), on the CPU with faer.
pub fn cholesky<T: Real + Default>(c: &Matrix<T>, par: Par) -> Result<Matrix<T>> {
    let mut fc = to_faer(c);
    cholesky_in_place(&mut fc, par)?;
    Ok(from_faer(&fc).lower_triangle())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{Error, NumericalError};
    use crate::{problems as testing, reference, relative_error};

    #[test]
    fn faer_baseline_agrees_with_the_reference() {
        let mut rng = testing::rng(1);
        let a = testing::uniform_matrix(&mut rng, 37, 74).to_f64();
        let d: Vec<f64> = testing::uniform_vector(&mut rng, 74)
            .iter()
            .map(|&x| x as f64)
            .collect();
        let c = assemble(&a, &d, par(0));
        let c_ref = reference::assemble(&a, &d);
        assert!(relative_error(&c, &c_ref) < 1e-14);
        let spd = testing::well_conditioned_spd(&mut rng, 37).to_f64();
        let l = cholesky(&spd, par(0)).unwrap();
        assert!(relative_error(&l, &reference::cholesky(&spd).unwrap()) < 1e-13);
        let mut bad = spd.clone();
        bad[(4, 4)] = -100.0;
        assert!(matches!(
            cholesky(&bad, par(1)),
            Err(Error::Numerical(NumericalError::NotPositiveDefinite {
                column: 4,
                ..
            }))
        ));
    }
}
