//! The blocked method's storage (after the Brook+ sample's float4 blocks): an RGBA32F texture
//! whose texel (x, y) holds the 2 x 2 block of entries (2y..2y+2, 2x..2x+2), row by row, so
//! entry (i, j) is component 2·(i mod 2) + (j mod 2) of texel (j/2, i/2).
//!
//! The matrix is padded to an order that is a whole number of block columns
//! ([`BLOCK_COLUMN`] entries): the padding is the identity, so the padded matrix is C ⊕ I,
//! positive definite exactly when C is, and its factor is L ⊕ I.
//!
//! Two formats, as in the paper (section 3.3, Fig 3) but with texel = block: full (block
//! (I, J) at texel (J, I) of a T x T texture, T = padded order / 2) and rectangular packed
//! (the lower triangle of blocks folded into W x (T+1) texels, about half: block columns
//! J < W stay in place one row down, the triangle of columns J ≥ W is rotated by 180° into
//! the free upper corner). T is even, so this is the paper's even-m case; the fold W is T/2
//! rounded up to whole block columns, so that no block column straddles the fold.

use super::Format;
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
    format: Format,
}

impl BlockLayout {
    /// The full-format layout of an m x m matrix.
    pub fn new(m: usize) -> Self {
        Self::in_format(m, Format::Full)
    }

    /// The rectangular packed layout of an m x m matrix (blocks folded as in Fig 3).
    pub fn packed(m: usize) -> Self {
        Self::in_format(m, Format::Packed)
    }

    /// The layout of an m x m matrix in `format`.
    pub fn in_format(m: usize, format: Format) -> Self {
        Self { m, format }
    }

    /// The matrix order m.
    pub fn order(&self) -> usize {
        self.m
    }

    /// The storage format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Packed format's fold W: block columns J < W form the trapezoid, J ≥ W the rotated
    /// corner. T/2 rounded up to whole block columns (T/2 itself when T is a multiple of
    /// 2·[`BLOCK_COLUMN`] / 2 texels).
    pub fn fold(&self) -> usize {
        let kb = self.block_column_texels();
        (self.texels() / 2).div_ceil(kb) * kb
    }

    /// Texture (width, height) in texels: (T, T) full; (W, T + 1) packed.
    pub fn texture_size(&self) -> (usize, usize) {
        let t = self.texels();
        match self.format {
            Format::Full => (t, t),
            Format::Packed => (self.fold(), t + 1),
        }
    }

    /// The texel (x, y) holding block (I, J), J ≤ I < T, of the padded matrix. Packed: the
    /// trapezoid J < W at (J, I + 1), the corner J ≥ W rotated to (T-1-J, T-1-I), as the
    /// paper's even-m mapping (section 3.3) with entries replaced by blocks.
    pub fn texel_of_block(&self, bi: usize, bj: usize) -> (usize, usize) {
        debug_assert!(bj <= bi && bi < self.texels(), "block ({bi}, {bj})");
        let t = self.texels();
        match self.format {
            Format::Full => (bj, bi),
            Format::Packed if bj < self.fold() => (bj, bi + 1),
            Format::Packed => (t - 1 - bj, t - 1 - bi),
        }
    }

    /// The block (I, J) held by texel (x, y), the inverse of [`BlockLayout::texel_of_block`];
    /// `None` for texels outside the texture, above the diagonal (full), or in the packed
    /// texture's unused part (x ≥ T - W with y ≤ x, empty when T/2 is whole block columns).
    pub fn block_of_texel(&self, x: usize, y: usize) -> Option<(usize, usize)> {
        let (w, h) = self.texture_size();
        if x >= w || y >= h {
            return None;
        }
        let t = self.texels();
        match self.format {
            Format::Full => (y >= x).then_some((y, x)),
            Format::Packed if y > x => Some((y - 1, x)),
            Format::Packed => (x < t - self.fold()).then(|| (t - 1 - y, t - 1 - x)),
        }
    }

    /// The texel (x, y) and component holding entry (i, j), j ≤ i, of the padded matrix.
    pub fn locate(&self, i: usize, j: usize) -> (usize, usize, usize) {
        let (x, y) = self.texel_of_block(i / 2, j / 2);
        (x, y, 2 * (i % 2) + j % 2)
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

    /// The texel (x, y) and component holding entry (i, j) of the padded matrix in full format.
    pub fn texel_of(i: usize, j: usize) -> (usize, usize, usize) {
        (j / 2, i / 2, 2 * (i % 2) + j % 2)
    }

    /// The texture (row by row) holding the lower triangle of `c` padded with the identity.
    /// Entries of the strict upper triangle (whole texels above the diagonal and the upper
    /// entry of each diagonal texel) get `upper`.
    /// Packed texels that hold no block get `upper` too.
    pub fn pack(&self, c: &Matrix<f32>, upper: f32) -> Vec<Block> {
        assert_eq!(c.shape(), (self.m, self.m));
        let p = self.padded_order();
        let (w, h) = self.texture_size();
        let mut data = vec![[upper; 4]; w * h];
        for i in 0..p {
            for j in 0..=i {
                let (x, y, s) = self.locate(i, j);
                data[y * w + x][s] = if i < self.m {
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
        let (w, h) = self.texture_size();
        assert_eq!(data.len(), w * h);
        Matrix::from_fn(self.m, self.m, |i, j| {
            if j > i {
                return 0.0;
            }
            let (x, y, s) = self.locate(i, j);
            data[y * w + x][s]
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
    fn packed_pack_unpack_round_trip() {
        for m in [1, 2, 3, 7, 16, 17, 33, 40] {
            let c = Matrix::from_fn(m, m, |i, j| (i * 31 + j) as f32 + 1.0);
            let l = BlockLayout::packed(m);
            let data = l.pack(&c, f32::NAN);
            assert_eq!(l.unpack(&data), c.lower_triangle(), "m={m}");
            assert_eq!(
                l.unpack(&l.padding()),
                Matrix::zeros(m, m),
                "m={m}: padding"
            );
        }
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
    fn packed_blocks_fold_into_about_half_the_texels() {
        for m in [1, 16, 17, 32, 33, 48, 64, 100, 512, 1000] {
            let l = BlockLayout::packed(m);
            let (t, (w, h)) = (l.texels(), l.texture_size());
            assert_eq!(h, t + 1);
            assert_eq!(w % l.block_column_texels(), 0, "m={m}: the fold straddles");
            assert!(
                2 * w >= t && w <= t / 2 + l.block_column_texels() / 2,
                "m={m}"
            );
            if t.is_multiple_of(2 * l.block_column_texels()) {
                assert_eq!(w * h, t * (t + 1) / 2, "m={m}: exactly the lower blocks");
            }
            // A bijection from the lower blocks onto the used texels.
            let mut seen = vec![false; w * h];
            for bi in 0..t {
                for bj in 0..=bi {
                    let (x, y) = l.texel_of_block(bi, bj);
                    assert!(x < w && y < h, "m={m}: ({bi}, {bj}) -> ({x}, {y})");
                    assert!(!std::mem::replace(&mut seen[y * w + x], true));
                    assert_eq!(l.block_of_texel(x, y), Some((bi, bj)));
                }
            }
            let unused = seen.iter().filter(|s| !**s).count();
            assert_eq!(unused, w * h - t * (t + 1) / 2);
            for p in (0..w * h).filter(|&p| !seen[p]) {
                assert_eq!(l.block_of_texel(p % w, p / w), None);
            }
        }
    }

    /// T = 8 (m ≤ 16): the fold is one whole block column, W = T, so the corner is empty.
    /// T = 16 (m = 32): the paper's even-order fold, w = T/2, with blocks for entries.
    #[test]
    fn packed_block_mapping_matches_the_paper_for_even_order() {
        let l = BlockLayout::packed(16);
        assert_eq!((l.texels(), l.fold(), l.texture_size()), (8, 8, (8, 9)));
        let l = BlockLayout::packed(32);
        let (t, w) = (l.texels(), l.fold());
        assert_eq!((t, w), (16, 8));
        assert_eq!(l.texel_of_block(15, 15), (0, 0));
        assert_eq!(l.texel_of_block(15, 8), (7, 0));
        assert_eq!(l.texel_of_block(8, 8), (7, 7));
        assert_eq!(l.texel_of_block(0, 0), (0, 1));
        assert_eq!(l.texel_of_block(15, 7), (7, 16));
        let pack = l.pack(
            &Matrix::from_fn(32, 32, |i, j| (100 * i + j) as f32),
            f32::NAN,
        );
        // Entry (31, 17): block (15, 8) at texel (7, 0), component 2·1 + 1.
        assert_eq!(pack[7][3], 3117.0);
        // The upper entry of a diagonal block is strict upper: `upper`.
        assert!(pack[0][1].is_nan());
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
