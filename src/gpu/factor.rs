//! [`Cholesky`], what every Cholesky entry of [`Gpu`](super::Gpu) returns: L where the method
//! computed it (on the GPU for the tiled method, on the host otherwise) with its solves.

use super::Method;
use super::tiled::DeviceFactor;
use crate::error::{Error, Result};
use crate::layout::{Format, PackedMatrix, rfp};
use crate::matrix::{Matrix, check_finite, check_finite_vec};

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
        }
    }

    /// A factor kept on the GPU.
    pub(crate) fn device(l: DeviceFactor, format: Format) -> Self {
        Self {
            l: Place::Device(l),
            method: Method::Tiled,
            format,
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
        match &self.l {
            Place::Host(l) => Ok(l.clone()),
            Place::Device(f) => f.download(),
        }
    }

    /// L by value ([`Cholesky::l`] without a copy where L is on the host).
    pub fn into_l(self) -> Result<Matrix<f32>> {
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

    /// Solves L·Lᵀ·x = b in f32 (forward then back substitution, section 2), on the GPU where
    /// L is there. `b` must have m finite entries ([`crate::InputError::NonFinite`] otherwise:
    /// a NaN would make x all NaN). The result carries f32's accuracy (about κ(C)·2⁻²⁴
    /// relative error); [`Gpu::spd_solve`](super::Gpu::spd_solve) refines it to f64.
    pub fn solve(&self, b: &[f32]) -> Result<Vec<f32>> {
        let mut x = b.to_vec();
        self.solve_in_place(&mut x)?;
        Ok(x)
    }

    /// [`Cholesky::solve`] overwriting `b` with x.
    pub fn solve_in_place(&self, b: &mut [f32]) -> Result<()> {
        let m = self.order();
        if b.len() != m {
            return Err(Error::shape(format!(
                "the factor is {m}x{m}, so the right side needs {m} entries, but has {}",
                b.len()
            )));
        }
        check_finite_vec("b (the right side)", b)?;
        match &self.l {
            Place::Host(l) => substitute(l, b),
            Place::Device(f) => {
                let x = f.solve_many(&Matrix::from_row_major(m, 1, b.to_vec())?)?;
                b.copy_from_slice(x.as_slice());
            }
        }
        Ok(())
    }

    /// Solves L·Lᵀ·X = B for the columns of B (m x r), on the GPU where L is there.
    /// B must be finite ([`crate::InputError::NonFinite`] otherwise).
    pub fn solve_many(&self, b: &Matrix<f32>) -> Result<Matrix<f32>> {
        let m = self.order();
        if b.rows() != m {
            return Err(Error::shape(format!(
                "the factor is {m}x{m}, so B needs {m} rows, but has {}",
                b.rows()
            )));
        }
        check_finite("B (the right sides)", b)?;
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

    /// C⁻¹ = L⁻ᵀ·L⁻¹, symmetric, in f32: the m columns of the identity solved against L (on the
    /// GPU where L is there). An entry beyond f32's range is [`crate::NumericalError::OutOfRange`].
    pub fn inverse(&self) -> Result<Matrix<f32>> {
        let m = self.order();
        let x = self.solve_many(&Matrix::identity(m))?;
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
            f.solve(&[1.0]),
            Err(Error::Input(crate::InputError::Shape(_)))
        ));
    }
}
