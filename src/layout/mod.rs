//! Where each entry of a symmetric (or lower-triangular) matrix lives: the full and the
//! rectangular packed texture layouts (sections 3.2-3.3), the host-side [`PackedMatrix`], and
//! LAPACK's RFP format ([`rfp`]).

pub(crate) mod by_rows;
mod packed;
pub mod rfp;

internal_modules! {
    blocked;
}

pub use crate::format::Format;
pub use blocked::{BlockColumn, BlockLayout, Blocking};
pub use packed::PackedMatrix;

use crate::error::{Error, InputError, Result};
use crate::matrix::Matrix;

/// The texel layout of an m x m lower triangle in a given format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    m: usize,
    format: Format,
}

impl Layout {
    /// The layout of an m x m matrix; no size check.
    pub fn new(m: usize, format: Format) -> Self {
        Self { m, format }
    }

    /// The layout, or [`InputError::TooLarge`] when its texture exceeds `max_texture_size`.
    pub fn checked(m: usize, format: Format, max_texture_size: usize) -> Result<Self> {
        let layout = Self::new(m, format);
        let (w, h) = layout.texture_size();
        if w > max_texture_size || h > max_texture_size {
            return Err(Error::from(InputError::TooLarge {
                m,
                format,
                width: w,
                height: h,
                limit: max_texture_size,
                max_full: max_texture_size,
                max_packed: max_packed_order(max_texture_size),
            }));
        }
        Ok(layout)
    }

    /// The rectangular packed layout of an m x m lower triangle (section 3.3); no size check.
    pub fn packed(m: usize) -> Self {
        Self::new(m, Format::Packed)
    }

    /// Matrix order m.
    pub fn order(&self) -> usize {
        self.m
    }

    /// The format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Texture (width, height).
    pub fn texture_size(&self) -> (usize, usize) {
        let m = self.m;
        match self.format {
            Format::Full => (m, m),
            Format::Packed => (m.div_ceil(2), m + (m + 1) % 2),
        }
    }

    /// The texel (x, y) holding entry (i, j) of the lower triangle (requires j ≤ i < m).
    pub fn texel_of(&self, i: usize, j: usize) -> (usize, usize) {
        debug_assert!(
            j <= i && i < self.m,
            "({i}, {j}) is not in the lower triangle"
        );
        let m = self.m;
        match self.format {
            Format::Full => (j, i),
            Format::Packed => {
                let w = m.div_ceil(2);
                match (m.is_multiple_of(2), j < w) {
                    (true, true) => (j, i + 1),
                    (true, false) => (m - 1 - j, m - 1 - i),
                    (false, true) => (j, i),
                    (false, false) => (m - j, m - 1 - i),
                }
            }
        }
    }

    /// The entry (i, j), i ≥ j, held by texel (x, y), the inverse of [`Layout::texel_of`]; `None`
    /// for texels outside the texture and for the strict upper triangle of the full format.
    /// The packed texture has no spare texel: w·h = m(m+1)/2 for both parities of m.
    pub fn entry_of(&self, x: usize, y: usize) -> Option<(usize, usize)> {
        let (w, h) = self.texture_size();
        if x >= w || y >= h {
            return None;
        }
        let m = self.m;
        match self.format {
            Format::Full => (y >= x).then_some((y, x)),
            Format::Packed => Some(match (m.is_multiple_of(2), y > x, y >= x) {
                // m even: trapezoid one row down (y ≥ x+1), rotated corner y ≤ x.
                (true, true, _) => (y - 1, x),
                (true, false, _) => (m - 1 - y, m - 1 - x),
                // m odd: trapezoid in place (y ≥ x), rotated corner y < x.
                (false, _, true) => (y, x),
                (false, _, false) => (m - 1 - y, m - x),
            }),
        }
    }

    /// The texture contents holding the lower triangle of `c`; texels that hold no entry
    /// (the strict upper triangle in full format; packed has none) get `fill`.
    pub fn pack(&self, c: &Matrix<f32>, fill: f32) -> Vec<f32> {
        assert_eq!(c.shape(), (self.m, self.m));
        let (w, h) = self.texture_size();
        let mut data = vec![fill; w * h];
        for i in 0..self.m {
            for j in 0..=i {
                let (x, y) = self.texel_of(i, j);
                data[y * w + x] = c[(i, j)];
            }
        }
        data
    }

    /// [`Layout::unpack`] taking the texels by value: in full format the texture already is
    /// the m x m matrix row by row, so its upper triangle is zeroed in place and no second
    /// m² copy is made (the host memory peak stays at one matrix).
    pub fn unpack_owned(&self, mut data: Vec<f32>) -> Matrix<f32> {
        match self.format {
            Format::Full => {
                let m = self.m;
                assert_eq!(data.len(), m * m);
                for (i, row) in data.chunks_exact_mut(m.max(1)).enumerate() {
                    row[i + 1..].fill(0.0);
                }
                Matrix::from_row_major(m, m, data).expect("m x m texels")
            }
            Format::Packed => self.unpack(&data),
        }
    }

    /// The lower-triangular matrix held by texture contents `data` (upper triangle zero).
    pub fn unpack(&self, data: &[f32]) -> Matrix<f32> {
        let (w, h) = self.texture_size();
        assert_eq!(data.len(), w * h);
        let mut out = Matrix::zeros(self.m, self.m);
        for i in 0..self.m {
            for j in 0..=i {
                let (x, y) = self.texel_of(i, j);
                out[(i, j)] = data[y * w + x];
            }
        }
        out
    }
}

/// The largest m whose packed texture fits: h = m+1 for even m, so an even limit fits only
/// up to limit − 1.
pub fn max_packed_order(max_texture_size: usize) -> usize {
    if max_texture_size % 2 == 1 {
        max_texture_size
    } else {
        max_texture_size.saturating_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_layout_is_transposed_index() {
        let l = Layout::new(5, Format::Full);
        assert_eq!(l.texture_size(), (5, 5));
        assert_eq!(l.texel_of(3, 1), (1, 3));
    }

    /// The mapping of `docs/geometry.md`, written out for m = 4 (w = 2, h = 5) and m = 5
    /// (w = 3, h = 5): each texel's entry, row by row, as "ij".
    #[test]
    fn packed_mapping_matches_the_table() {
        let picture = |m: usize| {
            let l = Layout::packed(m);
            let (w, h) = l.texture_size();
            (0..h)
                .map(|y| {
                    (0..w)
                        .map(|x| {
                            let (i, j) = l.entry_of(x, y).expect("no spare texel");
                            assert_eq!(l.texel_of(i, j), (x, y));
                            format!("{i}{j}")
                        })
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect::<Vec<_>>()
        };
        // m even: row 0 and the upper corner hold the rotated triangle of columns 2, 3.
        assert_eq!(picture(4), ["33 32", "00 22", "10 11", "20 21", "30 31"]);
        // m odd: the corner (y < x) holds columns 3, 4 rotated.
        assert_eq!(
            picture(5),
            ["00 44 43", "10 11 33", "20 21 22", "30 31 32", "40 41 42"]
        );
    }

    #[test]
    fn packed_mapping_is_a_bijection_onto_the_texture() {
        for m in 1..=40 {
            let l = Layout::packed(m);
            let (w, h) = l.texture_size();
            assert_eq!(w, m.div_ceil(2));
            assert_eq!(h, if m.is_multiple_of(2) { m + 1 } else { m });
            assert_eq!(w * h, m * (m + 1) / 2, "m = {m}");
            let mut seen = vec![false; w * h];
            for i in 0..m {
                for j in 0..=i {
                    let (x, y) = l.texel_of(i, j);
                    assert!(x < w && y < h, "m = {m}: ({i}, {j}) -> ({x}, {y})");
                    assert!(!std::mem::replace(&mut seen[y * w + x], true));
                    assert_eq!(l.entry_of(x, y), Some((i, j)));
                }
            }
            assert_eq!(l.entry_of(w, 0), None);
            assert_eq!(l.entry_of(0, h), None);
        }
    }

    #[test]
    fn full_inverse_is_none_above_the_diagonal() {
        let l = Layout::new(4, Format::Full);
        assert_eq!(l.entry_of(1, 3), Some((3, 1)));
        assert_eq!(l.entry_of(3, 1), None);
    }

    #[test]
    fn pack_unpack_round_trip() {
        for m in 1..=12 {
            let c = Matrix::from_fn(m, m, |i, j| (i * 31 + j) as f32);
            for format in [Format::Full, Format::Packed] {
                let l = Layout::new(m, format);
                let data = l.pack(&c, f32::NAN);
                assert_eq!(l.unpack(&data), c.lower_triangle());
                assert_eq!(l.unpack_owned(data.clone()), c.lower_triangle());
                if format == Format::Packed {
                    assert!(data.iter().all(|v| !v.is_nan()), "packed texture is full");
                }
            }
        }
    }

    #[test]
    fn size_limit_names_largest_orders() {
        let e = Layout::checked(4096, Format::Packed, 4096).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("4097") && msg.contains("4095 in packed"),
            "{msg}"
        );
        assert!(Layout::checked(4096, Format::Full, 4096).is_ok());
        assert!(Layout::checked(4095, Format::Packed, 4096).is_ok());
    }
}
