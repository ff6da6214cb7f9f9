//! The rectangular packed format on the host (section 3.3): a w x h array holding the lower
//! triangle of an m x m matrix in half the space.

use super::Layout;
use crate::error::{Error, InputError, Result};
use crate::matrix::Matrix;

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
            return Err(Error::shape(format!(
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
            return Err(InputError::Length {
                what: format!("a packed {w}x{h} texture"),
                n: m,
                expected: w * h,
                actual: data.len(),
            }
            .into());
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

    /// The layout (always [`Format::Packed`](super::Format::Packed)).
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
            Err(Error::Input(InputError::Shape(_)))
        ));
        match PackedMatrix::from_raw(4, vec![0.0; 9]) {
            Err(Error::Input(InputError::Length {
                expected, actual, ..
            })) => assert_eq!((expected, actual), (10, 9)),
            other => panic!("expected a length error, got {other:?}"),
        }
    }
}
