//! The blocked method's storage (after the Brook+ sample's float4 blocks): an RGBA32F texture
//! whose texel (x, y) holds the 2 x 2 block of entries (2y..2y+2, 2x..2x+2), row by row, so
//! entry (i, j) is component 2·(i mod 2) + (j mod 2) of texel (j/2, i/2).
//!
//! The matrix is padded to an order that is a whole number of block columns
//! ([`BLOCK_COLUMN`] entries): the padding is the identity, so the padded matrix is C ⊕ I,
//! positive definite exactly when C is, and its factor is L ⊕ I.

use crate::matrix::Matrix;

/// Matrix entries per texel side: each RGBA32F texel holds a 2 x 2 block.
pub const TEXEL_BLOCK: usize = 2;

/// Columns of one Cholesky block column (the panel width and the trailing update's rank): the
/// padded order is a multiple of it. Must equal 2·KB of `glsl/blocked/*`'s Cholesky kernels.
pub const BLOCK_COLUMN: usize = 16;

/// Columns of A applied by one assembly pass (the rank of its update). The padded n is a
/// multiple of it. Must equal 2·KB of `glsl/blocked/rank_k_addition.frag`.
pub const ASSEMBLY_RANK: usize = 32;

/// One RGBA32F texel: the block [[a, b], [c, d]] as (a, b, c, d).
pub type Block = [f32; 4];

/// Where each entry of an m x m symmetric matrix lives in the blocked texture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockLayout {
    m: usize,
}

impl BlockLayout {
    /// The layout of an m x m matrix.
    pub fn new(m: usize) -> Self {
        Self { m }
    }

    /// The matrix order m.
    pub fn order(&self) -> usize {
        self.m
    }

    /// The padded order: m rounded up to whole block columns (at least one).
    pub fn padded_order(&self) -> usize {
        self.m.max(1).div_ceil(BLOCK_COLUMN) * BLOCK_COLUMN
    }

    /// Texels per side of the square texture: padded order / 2.
    pub fn texels(&self) -> usize {
        self.padded_order() / TEXEL_BLOCK
    }

    /// Texels per block column.
    pub fn block_column_texels(&self) -> usize {
        BLOCK_COLUMN / TEXEL_BLOCK
    }

    /// Number of block columns (Cholesky steps).
    pub fn block_columns(&self) -> usize {
        self.padded_order() / BLOCK_COLUMN
    }

    /// The texel (x, y) and component holding entry (i, j) of the padded matrix.
    pub fn texel_of(i: usize, j: usize) -> (usize, usize, usize) {
        (j / 2, i / 2, 2 * (i % 2) + j % 2)
    }

    /// The texture (row by row) holding the lower triangle of `c` padded with the identity.
    /// Entries of the strict upper triangle (whole texels above the diagonal and the upper
    /// entry of each diagonal texel) get `upper`.
    pub fn pack(&self, c: &Matrix<f32>, upper: f32) -> Vec<Block> {
        assert_eq!(c.shape(), (self.m, self.m));
        let (p, t) = (self.padded_order(), self.texels());
        let mut data = vec![[upper; 4]; t * t];
        for i in 0..p {
            for j in 0..=i {
                let (x, y, s) = Self::texel_of(i, j);
                data[y * t + x][s] = if i < self.m {
                    c[(i, j)]
                } else if i == j {
                    1.0
                } else {
                    0.0
                };
            }
        }
        data
    }

    /// The identity padding alone: the lower triangle zero except the padded diagonal, the
    /// upper entries zero (assembly's starting C, so that C ⊕ I comes out).
    pub fn padding(&self) -> Vec<Block> {
        self.pack(&Matrix::zeros(self.m, self.m), 0.0)
    }

    /// The m x m lower triangle held by texture contents `data` (upper triangle zero).
    pub fn unpack(&self, data: &[Block]) -> Matrix<f32> {
        let t = self.texels();
        assert_eq!(data.len(), t * t);
        Matrix::from_fn(self.m, self.m, |i, j| {
            if j > i {
                return 0.0;
            }
            let (x, y, s) = Self::texel_of(i, j);
            data[y * t + x][s]
        })
    }

    /// n rounded up to whole assembly passes.
    pub fn padded_columns(n: usize) -> usize {
        n.max(1).div_ceil(ASSEMBLY_RANK) * ASSEMBLY_RANK
    }

    /// A (m x n) as the (padded m / 2) x (padded n / 2) texture whose texel (x, y) is the block
    /// of rows 2x, 2x+1 and columns 2y, 2y+1 (blocks of A transposed, so the fragments of one
    /// pass, which read neighbouring rows of A at the same columns, read neighbouring texels);
    /// padding zero.
    pub fn pack_a(&self, a: &Matrix<f32>) -> Vec<Block> {
        assert_eq!(a.rows(), self.m);
        let (w, h) = (self.texels(), Self::padded_columns(a.cols()) / 2);
        let at = |i: usize, k: usize| {
            if i < a.rows() && k < a.cols() {
                a[(i, k)]
            } else {
                0.0
            }
        };
        (0..h)
            .flat_map(|y| {
                (0..w).map(move |x| {
                    let (i, k) = (2 * x, 2 * y);
                    [at(i, k), at(i, k + 1), at(i + 1, k), at(i + 1, k + 1)]
                })
            })
            .collect()
    }

    /// d as a (padded n / 2) x 1 texture: texel x holds (d(2x), d(2x+1), 0, 0); padding zero.
    pub fn pack_d(d: &[f32]) -> Vec<Block> {
        let w = Self::padded_columns(d.len()) / 2;
        let at = |k: usize| d.get(k).copied().unwrap_or(0.0);
        (0..w)
            .map(|x| [at(2 * x), at(2 * x + 1), 0.0, 0.0])
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_is_whole_block_columns() {
        assert_eq!(BlockLayout::new(1).padded_order(), BLOCK_COLUMN);
        assert_eq!(BlockLayout::new(16).padded_order(), 16);
        assert_eq!(BlockLayout::new(17).padded_order(), 32);
        assert_eq!(BlockLayout::new(17).texels(), 16);
        assert_eq!(BlockLayout::padded_columns(33), 64);
    }

    #[test]
    fn pack_unpack_round_trip_with_identity_padding() {
        for m in [1, 2, 3, 7, 16, 17, 33] {
            let c = Matrix::from_fn(m, m, |i, j| (i * 31 + j) as f32 + 1.0);
            let l = BlockLayout::new(m);
            let data = l.pack(&c, f32::NAN);
            assert_eq!(l.unpack(&data), c.lower_triangle(), "m={m}");
            let t = l.texels();
            for i in 0..l.padded_order() {
                for j in 0..l.padded_order() {
                    let (x, y, s) = BlockLayout::texel_of(i, j);
                    let v = data[y * t + x][s];
                    if j > i {
                        assert!(v.is_nan(), "({i}, {j}) is upper");
                    } else if i >= m {
                        assert_eq!(v, if i == j { 1.0 } else { 0.0 });
                    }
                }
            }
        }
    }

    #[test]
    fn a_and_d_blocks() {
        let a = Matrix::from_fn(3, 3, |i, k| (10 * i + k) as f32);
        let data = BlockLayout::new(3).pack_a(&a);
        let w = BLOCK_COLUMN / 2;
        assert_eq!(data.len(), w * ASSEMBLY_RANK / 2);
        // Texel (x, y): rows 2x, 2x+1 and columns 2y, 2y+1.
        assert_eq!(data[0], [0.0, 1.0, 10.0, 11.0]);
        assert_eq!(data[1], [20.0, 21.0, 0.0, 0.0]);
        assert_eq!(data[w], [2.0, 0.0, 12.0, 0.0]);
        assert_eq!(data[w + 1], [22.0, 0.0, 0.0, 0.0]);
        let d = BlockLayout::pack_d(&[1.0, 2.0, 3.0]);
        assert_eq!(&d[..2], &[[1.0, 2.0, 0.0, 0.0], [3.0, 0.0, 0.0, 0.0]]);
    }
}
