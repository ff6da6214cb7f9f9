//! CPU solves of the normal equations AD²Aᵀx = AD²b (3) entirely in double precision: the
//! x_CPU of section 5.3. faer's blocked f64 Cholesky is the speed baseline of Tables 1 and 2 (the
//! paper used MATLAB with Intel MKL); the plain Algorithms 2 and 4 serve small checks.

use super::{NormalEquations, check_problem};
use crate::cpu;
use crate::error::Result;
use crate::matrix::Matrix;
use crate::reference;
use faer::Mat;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt;

/// x_CPU with faer in f64: the lower triangle of (A·diag(d))·Aᵀ (one triangular product, half
/// the work of a full one), its Cholesky factor in place, and the two triangular solves with
/// AD²b; faer's global parallelism (all cores).
pub fn solve_normal_equations_faer(a: &Matrix<f64>, d: &[f64], b: &[f64]) -> Result<Vec<f64>> {
    check_problem(a, d, b)?;
    let m = a.rows();
    let par = crate::cpu::all_cores();
    let a_mat = cpu::to_faer(a);
    let scaled = cpu::scale_columns(&a_mat, d);
    let mut c = Mat::<f64>::zeros(m, m);
    cpu::assemble_lower_into(&mut c, &a_mat, &scaled, par);
    cpu::cholesky_in_place(&mut c, par)?;
    let g = NormalEquations::new(a, d, b).rhs().to_vec();
    let mut rhs = Mat::from_fn(m, 1, |i, _| g[i]);
    let mut buffer = MemBuffer::new(llt::solve::solve_in_place_scratch::<f64>(m, 1, par));
    llt::solve::solve_in_place(c.as_ref(), rhs.as_mut(), par, MemStack::new(&mut buffer));
    Ok((0..m).map(|i| rhs[(i, 0)]).collect())
}

/// x_CPU by the paper's plain CPU algorithms in f64: Algorithm 2 (assembly), Algorithm 4
/// (Cholesky), then forward and back substitution. O(m²n + m³) without blocking: small m only.
pub fn solve_normal_equations_reference(a: &Matrix<f64>, d: &[f64], b: &[f64]) -> Result<Vec<f64>> {
    check_problem(a, d, b)?;
    let l = reference::cholesky(&reference::assemble(a, d))?;
    Ok(solve_with_factor(&l, NormalEquations::new(a, d, b).rhs()))
}

/// Solves LLᵀx = g in f64 by forward then back substitution (L lower triangular).
pub fn solve_with_factor(l: &Matrix<f64>, g: &[f64]) -> Vec<f64> {
    let m = l.rows();
    assert_eq!(g.len(), m, "solve_with_factor: right side length");
    let mut y = g.to_vec();
    for i in 0..m {
        let s: f64 = l.row(i)[..i].iter().zip(&y[..i]).map(|(a, b)| a * b).sum();
        y[i] = (y[i] - s) / l[(i, i)];
    }
    for i in (0..m).rev() {
        y[i] /= l[(i, i)];
        let yi = y[i];
        for (yk, &lik) in y[..i].iter_mut().zip(&l.row(i)[..i]) {
            *yk -= lik * yi;
        }
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::least_squares::relative_error_vec;
    use crate::problems::{ill_conditioned_least_squares, random_least_squares};
    use crate::{Error, NumericalError};

    #[test]
    fn faer_agrees_with_plain_reference() {
        for p in [
            random_least_squares(2, 40),
            ill_conditioned_least_squares(2, 40),
        ] {
            let x_faer = solve_normal_equations_faer(&p.a, &p.d, &p.b).unwrap();
            let x_ref = solve_normal_equations_reference(&p.a, &p.d, &p.b).unwrap();
            let e = relative_error_vec(&x_faer, &x_ref);
            assert!(e < 1e-8, "faer vs reference: {e:.2e}");
        }
    }

    #[test]
    fn faer_reports_singular_matrix() {
        let mut p = random_least_squares(4, 6);
        for k in 0..p.a.cols() {
            p.a[(3, k)] = 0.0;
        }
        assert!(matches!(
            solve_normal_equations_faer(&p.a, &p.d, &p.b),
            Err(Error::Numerical(NumericalError::NotPositiveDefinite {
                column: 3,
                ..
            }))
        ));
    }
}
