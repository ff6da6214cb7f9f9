//! The rectangular packed format on the host (section 3.3): a w x h array holding the lower
//! triangle of an m x m matrix in half the space, and the GPU operations that keep it packed.

use crate::error::{Error, Result};
use crate::execution::Execution;
use crate::gpu::{Gpu, Method, check_factor_entries};
use crate::layout::{Format, Layout};
use crate::matrix::{Matrix, check_finite_vec};

/// The lower triangle of an m x m symmetric or triangular matrix in rectangular packed format:
/// the texture's w x h texels row by row (texel (x, y) at `data[y * w + x]`), w = ceil(m/2),
/// h = m + mod(m+1, 2), so w·h = m(m+1)/2 with no texel to spare.
#[derive(Clone, Debug, PartialEq)]
pub struct PackedMatrix {
    layout: Layout,
    data: Vec<f32>,
}

impl PackedMatrix {
    /// Packs the lower triangle (with diagonal) of the square `c`; its upper triangle is not read.
    pub fn from_lower(c: &Matrix<f32>) -> Result<Self> {
        let (m, n) = c.shape();
        if m != n {
            return Err(Error::Shape(format!(
                "a packed matrix holds a square matrix's lower triangle, but this one is {m}x{n}"
            )));
        }
        let layout = Layout::packed(m);
        Ok(Self {
            data: layout.pack(c, 0.0),
            layout,
        })
    }

    /// Wraps raw texture contents of an m x m packed triangle; the length must be w·h.
    pub fn from_raw(m: usize, data: Vec<f32>) -> Result<Self> {
        let layout = Layout::packed(m);
        let (w, h) = layout.texture_size();
        if data.len() != w * h {
            return Err(Error::Length {
                what: format!("a packed {w}x{h} texture"),
                n: m,
                expected: w * h,
                actual: data.len(),
            });
        }
        Ok(Self { layout, data })
    }

    /// The unpacked lower-triangular matrix (upper triangle zero).
    pub fn to_lower(&self) -> Matrix<f32> {
        self.layout.unpack(&self.data)
    }

    /// Matrix order m.
    pub fn order(&self) -> usize {
        self.layout.order()
    }

    /// The layout (always [`Format::Packed`]).
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Texture (width, height) = (w, h).
    pub fn size(&self) -> (usize, usize) {
        self.layout.texture_size()
    }

    /// Entry (i, j) of the lower triangle; `None` above the diagonal or outside the matrix.
    pub fn get(&self, i: usize, j: usize) -> Option<f32> {
        if j > i || i >= self.order() {
            return None;
        }
        let (x, y) = self.layout.texel_of(i, j);
        Some(self.data[y * self.size().0 + x])
    }

    /// The texels, row by row.
    pub fn as_slice(&self) -> &[f32] {
        &self.data
    }

    /// The texels, row by row, by value.
    pub fn into_vec(self) -> Vec<f32> {
        self.data
    }
}

impl Gpu {
    /// The layout of an m x m matrix in `format` if it fits this GPU's textures, else
    /// [`Error::TooLarge`] naming GL_MAX_TEXTURE_SIZE and the largest m in each format.
    pub fn check_order(&self, m: usize, format: Format) -> Result<Layout> {
        Layout::checked(m, format, self.info().max_texture_size)
    }

    /// Algorithm 3 in packed format, the result left packed: the lower triangle of
    /// A·diag(d)·Aᵀ as a w x h [`PackedMatrix`].
    pub fn assemble_packed_raw(&self, a: &Matrix<f32>, d: &[f32]) -> Result<PackedMatrix> {
        let mut run = self.start_assembly(a, d, Format::Packed)?;
        run.finish()?;
        download_packed(&run)
    }

    /// Uploads a packed C into L_S and prepares Algorithm 5 in packed format (Figs 6 and 7)
    /// without running it; the host never holds the m x m matrix.
    pub fn start_cholesky_packed(&self, c: &PackedMatrix) -> Result<Execution<'_>> {
        let m = c.order();
        if m == 0 {
            return Err(Error::Empty {
                input: "C".into(),
                rows: 0,
                cols: 0,
            });
        }
        let layout = self.check_order(m, Format::Packed)?;
        check_finite_vec("C (packed)", c.as_slice())?;
        self.start_cholesky_texels(layout, Method::Faithful, c.as_slice())
    }

    /// The Cholesky factor of a packed C, left packed (half the storage of the full format).
    /// A pivot ≤ 0 or NaN gives [`Error::NotPositiveDefinite`] with its column (0-based).
    pub fn cholesky_packed_raw(&self, c: &PackedMatrix) -> Result<PackedMatrix> {
        let mut run = self.start_cholesky_packed(c)?;
        run.finish()?;
        let l = download_packed(&run)?;
        check_packed_factor(&l)?;
        Ok(l)
    }
}

/// The packed texture in the run's source (its current state, the result once done).
pub fn download_packed(run: &Execution<'_>) -> Result<PackedMatrix> {
    let layout = run.layout();
    if layout.format() != Format::Packed {
        return Err(Error::Unsupported(format!(
            "download_packed needs a packed run, this one is in {} format",
            layout.format()
        )));
    }
    let data = run.pair().source().texture().download()?;
    PackedMatrix::from_raw(layout.order(), data)
}

/// [`crate::check_factor`] on a packed factor: the first pivot that is not positive, or the
/// first non-finite entry below the diagonal.
pub fn check_packed_factor(l: &PackedMatrix) -> Result<()> {
    check_factor_entries(l.order(), |i, j| l.get(i, j).unwrap_or(f32::NAN))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_matrix_round_trips_and_is_w_by_h() {
        for m in 1..=11 {
            let c = Matrix::from_fn(m, m, |i, j| (10 * i + j) as f32);
            let p = PackedMatrix::from_lower(&c).unwrap();
            assert_eq!(p.size(), (m.div_ceil(2), m + (m + 1) % 2));
            assert_eq!(p.as_slice().len(), m * (m + 1) / 2);
            assert_eq!(p.to_lower(), c.lower_triangle());
            assert_eq!(p.get(m - 1, 0), Some(c[(m - 1, 0)]));
            assert_eq!(p.get(0, m), None);
            let again = PackedMatrix::from_raw(m, p.clone().into_vec()).unwrap();
            assert_eq!(again, p);
        }
    }

    #[test]
    fn bad_shapes_are_typed_errors() {
        assert!(matches!(
            PackedMatrix::from_lower(&Matrix::<f32>::zeros(2, 3)),
            Err(Error::Shape(_))
        ));
        match PackedMatrix::from_raw(4, vec![0.0; 9]) {
            Err(Error::Length {
                expected, actual, ..
            }) => assert_eq!((expected, actual), (10, 9)),
            other => panic!("expected a length error, got {other:?}"),
        }
    }

    #[test]
    fn packed_factor_check_names_the_column() {
        let mut l = Matrix::<f32>::zeros(3, 3);
        l[(0, 0)] = 1.0;
        l[(1, 1)] = -1.0;
        l[(2, 2)] = 1.0;
        let p = PackedMatrix::from_lower(&l).unwrap();
        assert!(matches!(
            check_packed_factor(&p),
            Err(Error::NotPositiveDefinite { column: 1, .. })
        ));
    }
}
