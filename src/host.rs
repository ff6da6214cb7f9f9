//! f64 Cholesky factors and solves on the host (faer, all cores): LAPACK's dpotrf and dpotrs
//! for callers that need a factor itself to f64's accuracy (scipy's float64 `cholesky`,
//! `cho_factor` and `cho_solve`), where the GPU's factor carries f32's. The refined solves
//! ([`Gpu::spd_solve`](crate::Gpu::spd_solve)) reach f64 accuracy from the GPU's factor and
//! need none of this.

use crate::cpu;
use crate::error::{Error, NumericalError, Result};
use crate::matrix::{Matrix, check_finite_lower, check_square};
use crate::scaling::{equilibration_exponents, pivot_in_units, times_power_of_two};
use faer::Mat;
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};

/// The side of the tiles the copies between row-major and faer's column-major storage move.
const TILE: usize = 64;

/// L with C = L·Lᵀ in f64 from the lower triangle of the symmetric positive definite `c`
/// (LAPACK's dpotrf). Each row and column is scaled by its own power of two first (dpoequ's
/// scaling, exact), so C of any scale and any grading factors wherever L fits f64; a pivot
/// that is not positive is [`NumericalError::NotPositiveDefinite`] with its column (0-based)
/// and the pivot in C's units.
///
/// ```
/// use symraster::{Matrix, host};
/// let c = Matrix::from_row_major(2, 2, vec![4.0, 2.0, 2.0, 3.0])?;
/// let l = host::cholesky(&c)?;
/// assert_eq!((l[(0, 0)], l[(1, 0)], l[(0, 1)]), (2.0, 1.0, 0.0));
/// assert!((l[(1, 1)] - 2f64.sqrt()).abs() < 1e-15);
/// # Ok::<(), symraster::Error>(())
/// ```
pub fn cholesky(c: &Matrix<f64>) -> Result<Matrix<f64>> {
    check_square("C", c, "(a symmetric matrix)")?;
    check_finite_lower("C (lower triangle)", c)?;
    let m = c.rows();
    // k_j with 4^k_j·C(j,j) near 1; a non-positive diagonal entry is left unscaled and fails.
    let k = equilibration_exponents((0..m).map(|j| c[(j, j)]));
    // Row-major C into faer's column-major L in tiles of TILE x TILE over all cores: C's lower
    // triangle scaled, zeros above.
    let mut l = Mat::<f64>::zeros(m, m);
    {
        use rayon::prelude::*;
        l.par_col_chunks_mut(TILE)
            .enumerate()
            .for_each(|(block, mut cols)| {
                let j0 = block * TILE;
                for i0 in (j0..m).step_by(TILE) {
                    for jj in 0..cols.ncols() {
                        let j = j0 + jj;
                        for i in i0.max(j)..(i0 + TILE).min(m) {
                            cols[(i, jj)] = times_power_of_two(c[(i, j)], k[i] + k[j]);
                        }
                    }
                }
            });
    }
    cpu::cholesky_in_place(&mut l, crate::cpu::all_cores())
        .map_err(|e| pivot_in_units(e, |j| k[j]))?;
    // Back to row-major, unscaled, in bands of TILE rows over all cores.
    let mut out = crate::memory::zeros::<f64>(m * m, || "L (C = L·Lᵀ)".into())?;
    {
        use rayon::prelude::*;
        out.par_chunks_mut(TILE * m.max(1))
            .enumerate()
            .for_each(|(band, rows)| {
                let i0 = band * TILE;
                let height = rows.len() / m.max(1);
                for j0 in (0..(i0 + height).min(m)).step_by(TILE) {
                    for ii in 0..height {
                        let i = i0 + ii;
                        for j in j0..(j0 + TILE).min(i + 1) {
                            rows[ii * m + j] = times_power_of_two(l[(i, j)], -k[i]);
                        }
                    }
                }
            });
    }
    let l = Matrix::from_row_major(m, m, out)?;
    if let Some(j) = (0..m).find(|&j| !l[(j, j)].is_normal()) {
        return Err(NumericalError::ResultOutOfRange {
            what: "L (C = L·Lᵀ)",
            row: j,
            col: j,
            value: l[(j, j)],
        }
        .into());
    }
    Ok(l)
}

/// X with L·Lᵀ·X = B in f64 for the lower-triangular `l` (its strict upper triangle is not
/// read) and B of m rows (LAPACK's dpotrs): two triangular solves with the factor as given.
///
/// ```
/// use symraster::{Matrix, host};
/// let c = Matrix::from_row_major(2, 2, vec![4.0, 2.0, 2.0, 3.0])?;
/// let l = host::cholesky(&c)?;
/// let b = Matrix::from_row_major(2, 1, vec![6.0, 5.0])?;
/// let x = host::cholesky_solve(&l, &b)?;
/// assert!((x[(0, 0)] - 1.0).abs() < 1e-15 && (x[(1, 0)] - 1.0).abs() < 1e-15);
/// # Ok::<(), symraster::Error>(())
/// ```
pub fn cholesky_solve(l: &Matrix<f64>, b: &Matrix<f64>) -> Result<Matrix<f64>> {
    check_square("L", l, "(a lower-triangular factor)")?;
    let m = l.rows();
    cholesky_solve_strided(l.as_slice(), m, m, 1, b)
}

/// [`cholesky_solve`] with L of order m read where it lies: entry (i, j) at `i·row_stride +
/// j·col_stride` of `l` (a row-major or column-major array, or a transposed view of either),
/// its strict upper triangle not read, no copy made. A `l` too short for those strides is
/// [`InputError::Length`](crate::InputError::Length).
pub fn cholesky_solve_strided(
    l: &[f64],
    m: usize,
    row_stride: usize,
    col_stride: usize,
    b: &Matrix<f64>,
) -> Result<Matrix<f64>> {
    if b.rows() != m {
        return Err(Error::shape(format!(
            "L is {m}x{m}, so B needs {m} rows, but has {}",
            b.rows()
        )));
    }
    let needed = if m == 0 {
        0
    } else {
        (m - 1)
            .saturating_mul(row_stride.saturating_add(col_stride))
            .saturating_add(1)
    };
    if l.len() < needed {
        return Err(crate::InputError::Length {
            what: format!("L with strides ({row_stride}, {col_stride})"),
            n: m,
            expected: needed,
            actual: l.len(),
        }
        .into());
    }
    let par = crate::cpu::all_cores();
    // L's lower triangle for L·y = b, the same entries as Lᵀ's upper one for Lᵀ·x = y.
    // SAFETY: every (i, j) < (m, m) lies at i·row_stride + j·col_stride < needed ≤ l.len().
    let factor = unsafe {
        faer::MatRef::from_raw_parts(l.as_ptr(), m, m, row_stride as isize, col_stride as isize)
    };
    let mut x = Mat::from_fn(m, b.cols(), |i, j| b[(i, j)]);
    solve_lower_triangular_in_place(factor, x.as_mut(), par);
    solve_upper_triangular_in_place(factor.transpose(), x.as_mut(), par);
    Ok(Matrix::from_fn(m, b.cols(), |i, j| x[(i, j)]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strided_solve_reads_l_where_it_lies_and_refuses_a_short_slice() {
        let c = Matrix::from_row_major(3, 3, vec![4.0, 2.0, 0.4, 2.0, 5.0, 1.0, 0.4, 1.0, 3.0])
            .unwrap();
        let l = cholesky(&c).unwrap();
        let b = Matrix::from_row_major(3, 2, vec![1.0, 0.0, 2.0, 1.0, 3.0, -1.0]).unwrap();
        let want = cholesky_solve(&l, &b).unwrap();
        // L column-major, its strict upper triangle garbage.
        let mut columns = vec![f64::NAN; 9];
        for i in 0..3 {
            for j in 0..=i {
                columns[j * 3 + i] = l[(i, j)];
            }
        }
        let x = cholesky_solve_strided(&columns, 3, 1, 3, &b).unwrap();
        assert_eq!(x.as_slice(), want.as_slice());
        let err = cholesky_solve_strided(&columns[..8], 3, 1, 3, &b).unwrap_err();
        assert!(
            matches!(err, Error::Input(crate::InputError::Length { .. })),
            "{err}"
        );
    }

    #[test]
    fn graded_and_tiny_matrices_factor_to_f64_accuracy() {
        // diag(1, 1e-300, 2) with coupling: L(1,1) = 1e-150 fits f64.
        let mut c = Matrix::from_fn(
            3,
            3,
            |i, j| {
                if i == j { [1.0, 1e-300, 2.0][i] } else { 0.0 }
            },
        );
        c[(2, 0)] = 0.5;
        let l = cholesky(&c).unwrap();
        assert_eq!(l[(0, 0)], 1.0);
        assert!((l[(1, 1)] - 1e-150).abs() < 1e-165);
        assert_eq!(l[(2, 0)], 0.5);
        assert!((l[(2, 2)] - (2.0f64 - 0.25).sqrt()).abs() < 1e-15);
    }

    #[test]
    fn an_indefinite_matrix_names_its_column_in_its_units() {
        let c = Matrix::from_fn(
            3,
            3,
            |i, j| {
                if i == j { [4e20, 1e20, -1e20][i] } else { 0.0 }
            },
        );
        match cholesky(&c) {
            Err(Error::Numerical(NumericalError::NotPositiveDefinite { column, pivot })) => {
                assert_eq!(column, 2);
                assert_eq!(pivot, -1e20);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn solves_with_the_factor_as_given() {
        let c = Matrix::from_row_major(3, 3, vec![4.0, 2.0, 0.4, 2.0, 3.0, 0.1, 0.4, 0.1, 2.0])
            .unwrap();
        let l = cholesky(&c).unwrap();
        // The strict upper triangle is garbage and unread.
        let mut garbage = l.clone();
        garbage[(0, 2)] = f64::NAN;
        let b = Matrix::from_row_major(3, 2, vec![1.0, 0.0, 2.0, 1.0, 3.0, -1.0]).unwrap();
        let x = cholesky_solve(&garbage, &b).unwrap();
        let r = c.matmul(&x).unwrap();
        for i in 0..3 {
            for j in 0..2 {
                assert!((r[(i, j)] - b[(i, j)]).abs() < 1e-14, "{i} {j}");
            }
        }
    }
}
