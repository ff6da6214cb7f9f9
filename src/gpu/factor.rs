//! [`Cholesky`], what every Cholesky entry of [`Gpu`](super::Gpu) returns: L where the method
//! computed it (on the GPU for the tiled method, on the host otherwise) with its solves.

use super::Method;
use super::tiled::DeviceFactor;
use crate::error::{Error, NumericalError, Result};
use crate::layout::{Format, PackedMatrix, rfp};
use crate::matrix::{Element, Matrix, check_finite, check_finite_vec};
use crate::scaling::{exponent_of, times_power_of_two};

/// The Cholesky factor L of a symmetric positive definite C = L·Lᵀ, in single precision.
///
/// Where the method computed L on the GPU (tiled), L stays there and [`Cholesky::solve`] and
/// [`Cholesky::solve_many`] run there; otherwise L is on the host and they run on the CPU.
/// A factor on the GPU holds its own reference to the OpenGL context it was made on and makes
/// that context current whenever it is used (src/gl/context.rs), so it answers right beside
/// another [`Gpu`](super::Gpu) and after its own `Gpu` is gone (tests/contexts.rs).
pub struct Cholesky {
    l: Place,
    method: Method,
    format: Format,
    /// L as already read back from the GPU (unscaled, zeros above), where the factorization
    /// read it for its check: [`Cholesky::l`] and [`Cholesky::into_l`] then read it no more.
    read_back: Option<Matrix<f32>>,
}

/// Where L is.
enum Place {
    Host(Matrix<f32>),
    Device(DeviceFactor),
}

impl std::fmt::Debug for Cholesky {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cholesky")
            .field("order", &self.order())
            .field("method", &self.method)
            .field("format", &self.format)
            .field("on_gpu", &self.on_gpu())
            .finish()
    }
}

impl Cholesky {
    /// Wraps a lower-triangular L computed elsewhere (the upper triangle is ignored), held on
    /// the host; a non-square L is [`crate::InputError::Shape`].
    pub fn from_l(l: Matrix<f32>) -> Result<Self> {
        crate::matrix::check_square("L", &l, "(a Cholesky factor)")?;
        Ok(Self::host(l, Method::Faithful, Format::Full))
    }

    /// A factor held on the host (the upper triangle of `l` is ignored).
    pub(crate) fn host(l: Matrix<f32>, method: Method, format: Format) -> Self {
        Self {
            l: Place::Host(l.lower_triangle()),
            method,
            format,
            read_back: None,
        }
    }

    /// A factor kept on the GPU.
    pub(crate) fn device(l: DeviceFactor, format: Format) -> Self {
        Self {
            l: Place::Device(l),
            method: Method::Tiled,
            format,
            read_back: None,
        }
    }

    /// A factor kept on the GPU whose L (unscaled, zeros above) was read back already.
    pub(crate) fn device_read_back(l: DeviceFactor, format: Format, read: Matrix<f32>) -> Self {
        Self {
            read_back: Some(read),
            ..Self::device(l, format)
        }
    }

    /// L on the host, or the factor on the GPU.
    pub(crate) fn into_place(self) -> std::result::Result<Matrix<f32>, DeviceFactor> {
        match self.l {
            Place::Host(l) => Ok(l),
            Place::Device(f) => Err(f),
        }
    }

    /// How many storage buffers hold L on the GPU (`None` where L is on the host): for tests
    /// of the split storage.
    #[doc(hidden)]
    pub fn gpu_parts(&self) -> Option<usize> {
        self.on_device().map(|f| f.matrix().part_count())
    }

    /// The factor on the GPU, where it is there.
    pub(crate) fn on_device(&self) -> Option<&DeviceFactor> {
        match &self.l {
            Place::Device(f) => Some(f),
            Place::Host(_) => None,
        }
    }

    /// The order m.
    pub fn order(&self) -> usize {
        match &self.l {
            Place::Host(l) => l.rows(),
            Place::Device(f) => f.order(),
        }
    }

    /// The method that computed L.
    pub fn method(&self) -> Method {
        self.method
    }

    /// The storage format L was computed in (packed for the tiled method is LAPACK's RFP).
    pub fn format(&self) -> Format {
        self.format
    }

    /// Whether L is held on the GPU (so that solves run there).
    pub fn on_gpu(&self) -> bool {
        matches!(self.l, Place::Device(_))
    }

    /// L, lower triangular with the upper triangle zero (read back where it is on the GPU).
    pub fn l(&self) -> Result<Matrix<f32>> {
        if let Some(l) = &self.read_back {
            return l.try_clone(|| "a copy of L".into());
        }
        match &self.l {
            Place::Host(l) => l.try_clone(|| "a copy of L".into()),
            Place::Device(f) => f.download(),
        }
    }

    /// L by value ([`Cholesky::l`] without a copy where L is on the host).
    pub fn into_l(self) -> Result<Matrix<f32>> {
        if let Some(l) = self.read_back {
            return Ok(l);
        }
        match self.l {
            Place::Host(l) => Ok(l),
            Place::Device(f) => f.download(),
        }
    }

    /// L in the paper's rectangular packed format.
    pub fn to_packed(&self) -> Result<PackedMatrix> {
        PackedMatrix::from_lower(&self.l()?)
    }

    /// L as LAPACK's RFP array (TRANSR = 'N', UPLO = 'L'), m(m+1)/2 values.
    pub fn to_rfp(&self) -> Result<Vec<f32>> {
        match &self.l {
            Place::Host(l) => rfp::from_lower(l),
            Place::Device(f) => f.download_rfp(),
        }
    }

    /// Solves L·Lᵀ·x = b (forward then back substitution, section 2), on the GPU where L is
    /// there. `b` may be f32 or f64 ([`Element`]) and x comes back in the same type, but the
    /// solve runs in f32 against the f32 factor: b is scaled by a power of two (exact) so that
    /// its largest entry is in [1, 2), rounded to f32 once, and x scaled back, so x carries
    /// f32's accuracy (about κ(C)·2⁻²⁴ relative error) whatever the type.
    /// [`Gpu::spd_solve`](super::Gpu::spd_solve) gives x to f64's accuracy (refined in f64).
    ///
    /// `b` must have m finite entries ([`crate::InputError::NonFinite`] otherwise: a NaN would
    /// make x all NaN); an x beyond f32's range in the solve (C near singular in f32), or beyond
    /// `T`'s once scaled back, is [`crate::NumericalError::OutOfRange`], never ±inf.
    pub fn solve<T: Element>(&self, b: &[T]) -> Result<Vec<T>> {
        let mut x = b.to_vec();
        self.solve_in_place(&mut x)?;
        Ok(x)
    }

    /// [`Cholesky::solve`] overwriting `b` with x (written whole, or not at all on an error).
    pub fn solve_in_place<T: Element>(&self, b: &mut [T]) -> Result<()> {
        let m = self.order();
        if b.len() != m {
            return Err(Error::shape(format!(
                "the factor is {m}x{m}, so the right side needs {m} entries, but has {}",
                b.len()
            )));
        }
        check_finite_vec("b (the right side)", b)?;
        let k = scale_exponent(b.iter().map(|&v| v.into()));
        let single = Matrix::from_row_major(m, 1, scaled_single(b.iter().copied(), k))?;
        let x = self.solve_many_single(&single)?;
        let x = unscaled(&x, |i| (i, 0, k))?;
        b.copy_from_slice(&x);
        Ok(())
    }

    /// Solves L·Lᵀ·X = B for the columns of B (m x r), on the GPU where L is there: each
    /// column as [`Cholesky::solve`] does (scaled by its own power of two, rounded once to
    /// f32, solved in f32, scaled back), so X carries f32's accuracy whatever `T`. B must be
    /// finite ([`crate::InputError::NonFinite`] otherwise).
    pub fn solve_many<T: Element>(&self, b: &Matrix<T>) -> Result<Matrix<T>> {
        let m = self.order();
        if b.rows() != m {
            return Err(Error::shape(format!(
                "the factor is {m}x{m}, so B needs {m} rows, but has {}",
                b.rows()
            )));
        }
        check_finite("B (the right sides)", b)?;
        let r = b.cols();
        let k: Vec<i32> = (0..r)
            .map(|j| scale_exponent((0..m).map(|i| b[(i, j)].into())))
            .collect();
        let single = Matrix::from_row_major(
            m,
            r,
            b.as_slice()
                .iter()
                .enumerate()
                .map(|(p, &v)| times_power_of_two(v.into(), -k[p % r]) as f32)
                .collect(),
        )?;
        let x = self.solve_many_single(&single)?;
        let x = unscaled(&x, |p| (p / r, p % r, k[p % r]))?;
        Matrix::from_row_major(m, r, x)
    }

    /// L·Lᵀ·X = B in f32 as given, on the GPU where L is there (no scaling, no check of X):
    /// the refined solves scale their own right sides and read an overflow as a condition.
    pub(crate) fn solve_many_single(&self, b: &Matrix<f32>) -> Result<Matrix<f32>> {
        let m = self.order();
        match &self.l {
            Place::Device(f) => f.solve_many(b),
            Place::Host(l) => {
                let mut x = b.transpose();
                for j in 0..x.rows() {
                    let row = &mut x.as_mut_slice()[j * m..(j + 1) * m];
                    substitute(l, row);
                }
                Ok(x.transpose())
            }
        }
    }

    /// [`Cholesky::solve_many_single`] of each of `bs`, each solved as it would be alone; where L is
    /// on the GPU, all are queued before one read brings them back.
    pub(crate) fn solve_each_single(&self, bs: &[&[f32]]) -> Result<Vec<Vec<f32>>> {
        match &self.l {
            Place::Device(f) => f.solve_each(bs),
            Place::Host(_) => bs
                .iter()
                .map(|b| {
                    let b = Matrix::from_row_major(self.order(), 1, b.to_vec())?;
                    Ok(self.solve_many_single(&b)?.into_vec())
                })
                .collect(),
        }
    }

    /// C⁻¹ = L⁻ᵀ·L⁻¹, symmetric, in f32: the m columns of the identity solved against L (on the
    /// GPU where L is there). An entry beyond f32's range is [`crate::NumericalError::OutOfRange`].
    pub fn inverse(&self) -> Result<Matrix<f32>> {
        let m = self.order();
        let x = self.solve_many_single(&Matrix::identity(m))?;
        if let Some(p) = x.as_slice().iter().position(|v| !v.is_finite()) {
            return Err(crate::NumericalError::OutOfRange {
                what: "C⁻¹",
                row: p / m,
                col: p % m,
                value: f64::INFINITY,
                why: format!("above float32's largest value {:.3e}", f32::MAX),
                fix: "scale C by a power of two",
            }
            .into());
        }
        // The average of X and Xᵀ: symmetric exactly.
        Ok(Matrix::from_fn(m, m, |i, j| 0.5 * (x[(i, j)] + x[(j, i)])))
    }
}

/// The k with 2^-k·max|v| in [1, 2) (0 for a zero or empty v).
fn scale_exponent(v: impl Iterator<Item = f64>) -> i32 {
    let max = v.fold(0.0, |m: f64, x| m.max(x.abs()));
    if max > 0.0 { exponent_of(max) } else { 0 }
}

/// The values times 2^-k, each rounded to f32 once.
fn scaled_single<T: Element>(v: impl Iterator<Item = T>, k: i32) -> Vec<f32> {
    v.map(|x| times_power_of_two(x.into(), -k) as f32).collect()
}

/// x'·2^k in `T` for each entry p of `x` (row-major), with (row, column, k) of p from `at`; an
/// entry beyond f32's range in the solve, or beyond `T`'s once scaled back, is
/// [`NumericalError::OutOfRange`].
fn unscaled<T: Element>(
    x: &Matrix<f32>,
    at: impl Fn(usize) -> (usize, usize, i32),
) -> Result<Vec<T>> {
    x.as_slice()
        .iter()
        .enumerate()
        .map(|(p, &v)| {
            let (row, col, k) = at(p);
            let value = times_power_of_two(f64::from(v), k);
            let out = T::from_double(value);
            if v.is_finite() && out.into().is_finite() {
                return Ok(out);
            }
            Err(NumericalError::OutOfRange {
                what: "x (the solution of C·x = b)",
                row,
                col,
                value: if v.is_finite() { value } else { f64::from(v) },
                why: if v.is_finite() {
                    "beyond the right side's type once scaled back".into()
                } else {
                    format!(
                        "beyond float32's range ({:.3e}) in the f32 solve with b scaled into [1, 2): C is singular to float32",
                        f32::MAX
                    )
                },
                fix: "scale C up or b down by a power of two, or solve with Gpu::spd_solve",
            }
            .into())
        })
        .collect()
}

/// L·Lᵀ·x = b on the host in f32, b overwritten: forward substitution from the first equation
/// to the last, then back substitution from the last to the first.
fn substitute(l: &Matrix<f32>, b: &mut [f32]) {
    let m = l.rows();
    for i in 0..m {
        let s: f32 = l.row(i)[..i].iter().zip(&b[..i]).map(|(a, b)| a * b).sum();
        b[i] = (b[i] - s) / l[(i, i)];
    }
    for i in (0..m).rev() {
        b[i] /= l[(i, i)];
        let bi = b[i];
        for (bk, &lik) in b[..i].iter_mut().zip(&l.row(i)[..i]) {
            *bk -= lik * bi;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference;

    fn host(l: Matrix<f32>) -> Cholesky {
        Cholesky::host(l, Method::Faithful, Format::Full)
    }

    #[test]
    fn solve_inverts_llt_and_ignores_the_upper_triangle() {
        let l = Matrix::from_row_major(3, 3, vec![2.0f32, 9.0, 9.0, 1.0, 3.0, 9.0, 0.5, -1.0, 4.0])
            .unwrap();
        let z = [1.0f32, -2.0, 0.25];
        let llt = reference::multiply_lower_by_transpose(&l.lower_triangle().to_f64());
        let r: Vec<f32> = (0..3)
            .map(|i| (0..3).map(|j| llt[(i, j)] * f64::from(z[j])).sum::<f64>() as f32)
            .collect();
        let f = host(l);
        let got = f.solve(&r).unwrap();
        for (g, z) in got.iter().zip(z) {
            assert!((g - z).abs() < 1e-5, "{got:?}");
        }
        let many = f
            .solve_many(&Matrix::from_row_major(3, 1, r.clone()).unwrap())
            .unwrap();
        assert_eq!(many.as_slice(), &got[..]);
        let inv = f.inverse().unwrap().to_f64();
        let e = crate::relative_error(&llt.matmul(&inv).unwrap(), &Matrix::<f64>::identity(3));
        assert!(e < 1e-5, "{e}");
    }

    #[test]
    fn solve_checks_the_length() {
        let f = host(Matrix::from_fn(2, 2, |i, j| (i == j) as u8 as f32));
        assert!(matches!(
            f.solve(&[1.0f32]),
            Err(Error::Input(crate::InputError::Shape(_)))
        ));
    }

    /// L of C = [[4, 2], [2, 3]] and a right side b = C·z for z = (1, −2).
    fn small() -> (Cholesky, [f64; 2], [f64; 2]) {
        let l = Matrix::from_row_major(2, 2, vec![2.0f32, 0.0, 1.0, 2f32.sqrt()]).unwrap();
        (host(l), [0.0, -4.0], [1.0, -2.0])
    }

    #[test]
    fn f64_right_sides_of_any_scale_solve_to_f32_accuracy() {
        let (f, b, z) = small();
        // 2^±1000 is far outside f32's range: b is scaled into [1, 2) before it is rounded.
        for s in [1.0, 1e-300, 1e300, 2f64.powi(1000), 3.0e-310] {
            let bs: Vec<f64> = b.iter().map(|v| v * s).collect();
            let x = f.solve(&bs).unwrap();
            let mut in_place = bs.clone();
            f.solve_in_place(&mut in_place).unwrap();
            let many = f
                .solve_many(&Matrix::from_row_major(2, 1, bs.clone()).unwrap())
                .unwrap();
            for got in [&x[..], &in_place[..], many.as_slice()] {
                for (g, z) in got.iter().zip(z) {
                    assert!((g / s - z).abs() < 1e-5, "scale {s:e}: {got:?}");
                }
            }
        }
        // Each column of B by its own scale.
        let b2 = Matrix::from_fn(2, 2, |i, j| b[i] * if j == 0 { 1e-200 } else { 1e200 });
        let x2 = f.solve_many(&b2).unwrap();
        for i in 0..2 {
            assert!((x2[(i, 0)] / 1e-200 - z[i]).abs() < 1e-5, "{x2:?}");
            assert!((x2[(i, 1)] / 1e200 - z[i]).abs() < 1e-5, "{x2:?}");
        }
        // f32 in, f32 out, the same values.
        let x32 = f.solve(&[0.0f32, -4.0]).unwrap();
        assert_eq!(
            x32,
            f.solve(&b)
                .unwrap()
                .iter()
                .map(|&v| v as f32)
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn an_x_beyond_range_is_an_error_and_b_is_left_alone() {
        let diagonal = |v: f32| host(Matrix::from_fn(2, 2, |i, j| if i == j { v } else { 0.0 }));
        let out_of_range =
            |r: Result<()>| matches!(r, Err(Error::Numerical(NumericalError::OutOfRange { .. })));
        // C = 1e-20·I: x = 1e20·b fits f32 in the solve (b scaled into [1, 2)), but 1e50 does
        // not once scaled back; in f64 it does.
        let f = diagonal(1e-10);
        let mut b = [1e30f32, 1e30];
        assert!(out_of_range(f.solve_in_place(&mut b)));
        assert_eq!(b, [1e30, 1e30]);
        let x = f.solve(&[1e30f64, 1e30]).unwrap();
        assert!((x[0] / 1e50 - 1.0).abs() < 1e-5, "{x:?}");
        // C = 1e-40·I: x' = 1e40 leaves f32 in the solve itself, whatever b's type.
        let f = diagonal(1e-20);
        let mut b = [1.0f64, 1.0];
        assert!(out_of_range(f.solve_in_place(&mut b)));
        assert_eq!(b, [1.0, 1.0]);
        assert!(matches!(
            f.solve(&[f64::NAN, 1.0]),
            Err(Error::Input(crate::InputError::NonFinite { .. }))
        ));
    }
}
