//! The blocked method's storage (after the Brook+ sample's float4 blocks), in two blockings
//! ([`Blocking`]):
//!
//! - 2 x 2: one RGBA32F texture whose texel (x, y) holds the 2 x 2 block of entries
//!   (2y..2y+2, 2x..2x+2), row by row, so entry (i, j) is component 2·(i mod 2) + (j mod 2)
//!   of texel (j/2, i/2). A fragment writes one block.
//! - 4 x 4 (the Brook+ sample's blocks over four render targets): four RGBA32F textures, texel
//!   (x, y) of layer q holding column q of the 4 x 4 block of entries (4y..4y+4, 4x..4x+4), so
//!   entry (i, j) is component i mod 4 of texel (j/4, i/4) of layer j mod 4. A fragment
//!   writes one 4 x 4 block, its four columns into the four targets.
//!
//! The matrix is padded to an order that is a whole number of block columns
//! ([`BlockColumn`]: 16 or 32 entries): the padding is the identity, so the padded matrix is C ⊕ I,
//! positive definite exactly when C is, and its factor is L ⊕ I.
//!
//! Two formats, as in the paper (section 3.3, Fig 3) but with texel = block: full (block
//! (I, J) at texel (J, I) of a T x T texture, T = padded order / block side) and rectangular
//! packed (the lower triangle of blocks folded into W x (T+4) texels, about half: block
//! columns J < W stay in place [`PACKED_ROW_OFFSET`] rows down (the paper has one row), the
//! triangle of columns J ≥ W is rotated by 180° into the free upper corner; inside a block the
//! entries keep their order). T is even, so
//! this is the paper's even-m case; the fold W is T/2 rounded up to whole block columns, so
//! that no block column straddles the fold.

use crate::layout::Format;
use crate::matrix::Matrix;

/// Matrix entries per texel side in the 2 x 2 blocking: each RGBA32F texel holds a 2 x 2
/// block.
pub const TEXEL_BLOCK: usize = 2;

/// What a fragment of the blocked method owns, and how it is stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Blocking {
    /// A 2 x 2 block per RGBA32F texel of one texture (one render target).
    Two,
    /// A 4 x 4 block per fragment over four RGBA32F textures (four render targets, as the
    /// Brook+ sample), layer q holding the block's column q: half the fetches per
    /// multiply-add of [`Blocking::Two`] in the rank-K updates.
    #[default]
    Four,
}

impl Blocking {
    /// Both, the default first.
    pub const ALL: [Blocking; 2] = [Blocking::Four, Blocking::Two];

    /// Matrix entries per block side.
    pub fn side(self) -> usize {
        match self {
            Blocking::Two => 2,
            Blocking::Four => 4,
        }
    }

    /// Textures (render targets) per matrix.
    pub fn layers(self) -> usize {
        match self {
            Blocking::Two => 1,
            Blocking::Four => 4,
        }
    }

    /// Columns of A (and B) per texel row of their textures: 2 x 2 blocks of A, or columns of
    /// 4 rows.
    pub fn a_columns_per_texel(self) -> usize {
        match self {
            Blocking::Two => 2,
            Blocking::Four => 1,
        }
    }

    /// The name in messages and CSV: "2x2" or "4x4".
    pub fn name(self) -> &'static str {
        match self {
            Blocking::Two => "2x2",
            Blocking::Four => "4x4",
        }
    }
}

impl std::fmt::Display for Blocking {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Columns of one Cholesky block column of the default [`BlockColumn`] (the panel width and
/// the trailing update's rank): the padded order is a multiple of it.
pub const BLOCK_COLUMN: usize = 16;

/// Columns per Cholesky block column, a per-run choice: the panel width, the trailing
/// update's rank and the diagonal block factored in one fragment (16 x 16 or 32 x 32). 32
/// halves the Cholesky's passes and doubles each trailing update's rank, at the cost of a
/// diagonal factor four times the registers (and eight times the work) per fragment. The
/// kernels get KB (texel columns per block column) as a `#define` (`src/kernels.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BlockColumn {
    /// 16 columns (the default on software renderers: there the 32 x 32 diagonal factor costs
    /// several times the 16 x 16 one and 32 is slower overall; measured in docs/results.md).
    #[default]
    Sixteen,
    /// 32 columns (the default on GPUs: half the passes, a faster Cholesky than 16;
    /// `figures/h200/experiments/bench_blocked.csv`).
    ThirtyTwo,
}

impl BlockColumn {
    /// Both, the default first.
    pub const ALL: [BlockColumn; 2] = [BlockColumn::Sixteen, BlockColumn::ThirtyTwo];

    /// Matrix columns per block column.
    pub fn entries(self) -> usize {
        match self {
            BlockColumn::Sixteen => BLOCK_COLUMN,
            BlockColumn::ThirtyTwo => 2 * BLOCK_COLUMN,
        }
    }

    /// The default for a device: 16 on software renderers, 32 on GPUs.
    pub fn for_device(software: bool) -> Self {
        if software {
            BlockColumn::Sixteen
        } else {
            BlockColumn::ThirtyTwo
        }
    }

    /// The block column of `entries` columns, if there is one.
    pub fn of(entries: usize) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.entries() == entries)
    }
}

impl std::fmt::Display for BlockColumn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.entries())
    }
}

/// Columns of A applied by one assembly pass (the rank of its update). The padded n is a
/// multiple of it. Must equal 2·KB of `glsl/blocked/rank_k_addition.frag`.
pub const ASSEMBLY_RANK: usize = 32;

/// Rows the packed format's trapezoid lies below its place in the full format (the paper's
/// layout has 1). A multiple of 4, so that the fragments of a 2 x 2 quad, and of a 4-row group
/// of a warp, read A's texels (whose x is the block row I = y - this) in aligned pairs and
/// fours, as in the full format and the rotated corner. With 1, the trapezoid's quads read A
/// across two 32-byte sectors: the likely cause of packed assembly running slower than the
/// full format (packed Cholesky, reading its rows along y, did not); docs/geometry.md gives the
/// measurements. Costs 3W texels.
pub const PACKED_ROW_OFFSET: usize = 4;

/// One RGBA32F texel: the block [[a, b], [c, d]] as (a, b, c, d).
pub type Block = [f32; 4];

/// Where each entry of an m x m symmetric matrix lives in the blocked texture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockLayout {
    m: usize,
    format: Format,
    blocking: Blocking,
    column: BlockColumn,
}

impl BlockLayout {
    /// The full-format layout of an m x m matrix, 2 x 2 blocks.
    pub fn new(m: usize) -> Self {
        Self::in_format(m, Format::Full)
    }

    /// The rectangular packed layout of an m x m matrix (blocks folded as in Fig 3), 2 x 2
    /// blocks.
    pub fn packed(m: usize) -> Self {
        Self::in_format(m, Format::Packed)
    }

    /// The layout of an m x m matrix in `format`, 2 x 2 blocks.
    pub fn in_format(m: usize, format: Format) -> Self {
        Self::with(m, format, Blocking::Two)
    }

    /// The layout of an m x m matrix in `format` with `blocking`, default block columns.
    pub fn with(m: usize, format: Format, blocking: Blocking) -> Self {
        Self {
            m,
            format,
            blocking,
            column: BlockColumn::default(),
        }
    }

    /// The same layout with block columns of `column` (the padding and the packed fold follow).
    pub fn with_column(self, column: BlockColumn) -> Self {
        Self { column, ..self }
    }

    /// The Cholesky's block column.
    pub fn column(&self) -> BlockColumn {
        self.column
    }

    /// The blocking.
    pub fn blocking(&self) -> Blocking {
        self.blocking
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
    /// corner. T/2 rounded up to whole block columns (T/2 itself when T is a multiple of two
    /// block columns).
    pub fn fold(&self) -> usize {
        let kb = self.block_column_texels();
        (self.texels() / 2).div_ceil(kb) * kb
    }

    /// Texture (width, height) in texels: (T, T) full; (W, T + S) packed, S =
    /// `PACKED_ROW_OFFSET`.
    pub fn texture_size(&self) -> (usize, usize) {
        let t = self.texels();
        match self.format {
            Format::Full => (t, t),
            Format::Packed => (self.fold(), t + PACKED_ROW_OFFSET),
        }
    }

    /// The texel (x, y) holding block (I, J), J ≤ I < T, of the padded matrix. Packed: the
    /// trapezoid J < W at (J, I + S), the corner J ≥ W rotated to (T-1-J, T-1-I), as the
    /// paper's even-m mapping (section 3.3) with entries replaced by blocks and the trapezoid
    /// S = `PACKED_ROW_OFFSET` rows down instead of 1.
    pub fn texel_of_block(&self, bi: usize, bj: usize) -> (usize, usize) {
        debug_assert!(bj <= bi && bi < self.texels(), "block ({bi}, {bj})");
        let t = self.texels();
        match self.format {
            Format::Full => (bj, bi),
            Format::Packed if bj < self.fold() => (bj, bi + PACKED_ROW_OFFSET),
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
            Format::Packed if y >= x + PACKED_ROW_OFFSET => Some((y - PACKED_ROW_OFFSET, x)),
            Format::Packed if y <= x => (x < t - self.fold()).then(|| (t - 1 - y, t - 1 - x)),
            Format::Packed => None,
        }
    }

    /// The texel (x, y), layer and component holding entry (i, j), j ≤ i, of the padded
    /// matrix.
    pub fn locate(&self, i: usize, j: usize) -> (usize, usize, usize, usize) {
        let side = self.blocking.side();
        let (x, y) = self.texel_of_block(i / side, j / side);
        match self.blocking {
            Blocking::Two => (x, y, 0, 2 * (i % 2) + j % 2),
            Blocking::Four => (x, y, j % 4, i % 4),
        }
    }

    /// The padded order: m rounded up to whole block columns (at least one).
    pub fn padded_order(&self) -> usize {
        let c = self.column.entries();
        self.m.max(1).div_ceil(c) * c
    }

    /// Texels per side of the square texture: padded order / block side.
    pub fn texels(&self) -> usize {
        self.padded_order() / self.blocking.side()
    }

    /// Texels per block column.
    pub fn block_column_texels(&self) -> usize {
        self.column.entries() / self.blocking.side()
    }

    /// Number of block columns (Cholesky steps).
    pub fn block_columns(&self) -> usize {
        self.padded_order() / self.column.entries()
    }

    /// The texel (x, y) and component holding entry (i, j) of the padded matrix in full format,
    /// 2 x 2 blocks.
    pub fn texel_of(i: usize, j: usize) -> (usize, usize, usize) {
        (j / 2, i / 2, 2 * (i % 2) + j % 2)
    }

    /// The texture (row by row) holding the lower triangle of `c` padded with the identity,
    /// 2 x 2 blocks ([`BlockLayout::pack_layers`]' one layer).
    pub fn pack(&self, c: &Matrix<f32>, upper: f32) -> Vec<Block> {
        assert_eq!(self.blocking.layers(), 1, "pack: one layer only");
        self.pack_layers(c, upper).remove(0)
    }

    /// The textures (one per layer, row by row) holding the lower triangle of `c` padded with
    /// the identity. Entries of the strict upper triangle (whole texels above the diagonal
    /// and the upper entries of each diagonal block) get `upper`.
    /// Packed texels that hold no block get `upper` too.
    pub fn pack_layers(&self, c: &Matrix<f32>, upper: f32) -> Vec<Vec<Block>> {
        assert_eq!(c.shape(), (self.m, self.m));
        let p = self.padded_order();
        let (w, h) = self.texture_size();
        let mut data = vec![vec![[upper; 4]; w * h]; self.blocking.layers()];
        for i in 0..p {
            for j in 0..=i {
                let (x, y, layer, s) = self.locate(i, j);
                data[layer][y * w + x][s] = if i < self.m {
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
    /// upper entries zero (assembly's starting C, so that C ⊕ I comes out). One texture per
    /// layer.
    pub fn padding(&self) -> Vec<Vec<Block>> {
        self.pack_layers(&Matrix::zeros(self.m, self.m), 0.0)
    }

    /// The m x m lower triangle held by one-layer texture contents `data` (2 x 2 blocks).
    pub fn unpack(&self, data: &[Block]) -> Matrix<f32> {
        self.unpack_layers(&[data])
    }

    /// The m x m lower triangle held by the layers' contents (upper triangle zero).
    pub fn unpack_layers(&self, layers: &[&[Block]]) -> Matrix<f32> {
        let (w, h) = self.texture_size();
        assert_eq!(layers.len(), self.blocking.layers());
        assert!(layers.iter().all(|data| data.len() == w * h));
        Matrix::from_fn(self.m, self.m, |i, j| {
            if j > i {
                return 0.0;
            }
            let (x, y, layer, s) = self.locate(i, j);
            layers[layer][y * w + x][s]
        })
    }

    /// n rounded up to whole assembly passes.
    pub fn padded_columns(n: usize) -> usize {
        n.max(1).div_ceil(ASSEMBLY_RANK) * ASSEMBLY_RANK
    }

    /// Texel rows of A's and B's textures for n columns of A.
    pub fn a_height(&self, n: usize) -> usize {
        Self::padded_columns(n) / self.blocking.a_columns_per_texel()
    }

    /// A (m x n) as the T x [`BlockLayout::a_height`] texture (blocks of A transposed, so
    /// the fragments of one pass, which read neighbouring rows of A at the same columns, read
    /// neighbouring texels); padding zero. 2 x 2: texel (x, y) is the block of rows 2x, 2x+1
    /// and columns 2y, 2y+1, row by row. 4 x 4: texel (x, y) is rows 4x..4x+4 of column y.
    pub fn pack_a(&self, a: &Matrix<f32>) -> Vec<Block> {
        assert_eq!(a.rows(), self.m);
        let (w, h) = (self.texels(), self.a_height(a.cols()));
        let at = |i: usize, k: usize| {
            if i < a.rows() && k < a.cols() {
                a[(i, k)]
            } else {
                0.0
            }
        };
        let blocking = self.blocking;
        (0..h)
            .flat_map(|y| {
                (0..w).map(move |x| match blocking {
                    Blocking::Two => {
                        let (i, k) = (2 * x, 2 * y);
                        [at(i, k), at(i, k + 1), at(i + 1, k), at(i + 1, k + 1)]
                    }
                    Blocking::Four => [0, 1, 2, 3].map(|r| at(4 * x + r, y)),
                })
            })
            .collect()
    }

    /// d as a [`BlockLayout::a_height`] x 1 texture, padding zero: 2 x 2, texel x holds
    /// (d(2x), d(2x+1), 0, 0); 4 x 4, texel x holds d(x) in every component.
    pub fn pack_d(&self, d: &[f32]) -> Vec<Block> {
        let w = self.a_height(d.len());
        let at = |k: usize| d.get(k).copied().unwrap_or(0.0);
        (0..w)
            .map(|x| match self.blocking {
                Blocking::Two => [at(2 * x), at(2 * x + 1), 0.0, 0.0],
                Blocking::Four => [at(x); 4],
            })
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
    fn block_columns_of_32_pad_and_fold_by_32() {
        let l = BlockLayout::with(33, Format::Packed, Blocking::Four)
            .with_column(BlockColumn::ThirtyTwo);
        assert_eq!(
            (l.padded_order(), l.texels(), l.block_column_texels()),
            (64, 16, 8)
        );
        assert_eq!((l.fold(), l.block_columns()), (8, 2));
        // m = 48: T = 16 with 32, but T = 12 (fold 8, not T/2) with 16.
        let l = BlockLayout::with(48, Format::Packed, Blocking::Four);
        assert_eq!((l.texels(), l.fold()), (12, 8));
        let l = l.with_column(BlockColumn::ThirtyTwo);
        assert_eq!((l.texels(), l.fold()), (16, 8));
        assert_eq!(BlockColumn::of(32), Some(BlockColumn::ThirtyTwo));
        assert_eq!(BlockColumn::of(8), None);
        for m in [1, 31, 32, 33, 63, 64, 65] {
            for blocking in Blocking::ALL {
                for format in [Format::Full, Format::Packed] {
                    let l =
                        BlockLayout::with(m, format, blocking).with_column(BlockColumn::ThirtyTwo);
                    let c = Matrix::from_fn(m, m, |i, j| (i * 31 + j) as f32 + 1.0);
                    let data = l.pack_layers(&c, f32::NAN);
                    let layers: Vec<&[Block]> = data.iter().map(Vec::as_slice).collect();
                    assert_eq!(l.unpack_layers(&layers), c.lower_triangle(), "m={m}");
                    assert_eq!(l.texture_size().0 % l.block_column_texels(), 0);
                }
            }
        }
    }

    #[test]
    fn packed_pack_unpack_round_trip() {
        for m in [1, 2, 3, 7, 16, 17, 33, 40] {
            let c = Matrix::from_fn(m, m, |i, j| (i * 31 + j) as f32 + 1.0);
            let l = BlockLayout::packed(m);
            let data = l.pack(&c, f32::NAN);
            assert_eq!(l.unpack(&data), c.lower_triangle(), "m={m}");
            assert_eq!(
                l.unpack(&l.padding()[0]),
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
                    if j <= i {
                        assert_eq!(l.locate(i, j).0, BlockLayout::texel_of(i, j).0);
                    }
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
            assert_eq!(h, t + PACKED_ROW_OFFSET);
            assert_eq!(w % l.block_column_texels(), 0, "m={m}: the fold straddles");
            assert!(
                2 * w >= t && w <= t / 2 + l.block_column_texels() / 2,
                "m={m}"
            );
            if t.is_multiple_of(2 * l.block_column_texels()) {
                assert_eq!(
                    w * h,
                    t * (t + 1) / 2 + (PACKED_ROW_OFFSET - 1) * w,
                    "m={m}: the lower blocks and the rows between trapezoid and corner"
                );
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
    /// T = 16 (m = 32): the paper's even-order fold, w = T/2, with blocks for entries (the
    /// trapezoid 4 rows down where the paper has 1).
    #[test]
    fn packed_block_mapping_matches_the_paper_for_even_order() {
        let l = BlockLayout::packed(16);
        assert_eq!((l.texels(), l.fold(), l.texture_size()), (8, 8, (8, 12)));
        let l = BlockLayout::packed(32);
        let (t, w) = (l.texels(), l.fold());
        assert_eq!((t, w), (16, 8));
        assert_eq!(l.texel_of_block(15, 15), (0, 0));
        assert_eq!(l.texel_of_block(15, 8), (7, 0));
        assert_eq!(l.texel_of_block(8, 8), (7, 7));
        assert_eq!(l.texel_of_block(0, 0), (0, 4));
        assert_eq!(l.texel_of_block(15, 7), (7, 19));
        // Between the corner's diagonal (y = x) and the trapezoid's (y = x + 4): nothing.
        assert_eq!(l.block_of_texel(3, 5), None);
        assert_eq!(l.block_of_texel(3, 7), Some((3, 3)));
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
        let d = BlockLayout::new(3).pack_d(&[1.0, 2.0, 3.0]);
        assert_eq!(&d[..2], &[[1.0, 2.0, 0.0, 0.0], [3.0, 0.0, 0.0, 0.0]]);
        // 4 x 4: texel (x, y) is rows 4x.. of column y; d(y) in every component.
        let four = BlockLayout::with(3, Format::Full, Blocking::Four);
        let data = four.pack_a(&a);
        let w = BLOCK_COLUMN / 4;
        assert_eq!(data.len(), w * ASSEMBLY_RANK);
        assert_eq!(data[0], [0.0, 10.0, 20.0, 0.0]);
        assert_eq!(data[w], [1.0, 11.0, 21.0, 0.0]);
        assert_eq!(data[1], [0.0; 4]);
        let d = four.pack_d(&[1.0, 2.0, 3.0]);
        assert_eq!(&d[..2], &[[1.0; 4], [2.0; 4]]);
    }

    #[test]
    fn four_by_four_layers_hold_block_columns() {
        for format in [Format::Full, Format::Packed] {
            for m in [1, 3, 16, 17, 33, 40, 64] {
                let l = BlockLayout::with(m, format, Blocking::Four);
                let c = Matrix::from_fn(m, m, |i, j| (i * 31 + j) as f32 + 1.0);
                let data = l.pack_layers(&c, f32::NAN);
                assert_eq!(data.len(), 4);
                let layers: Vec<&[Block]> = data.iter().map(Vec::as_slice).collect();
                assert_eq!(l.unpack_layers(&layers), c.lower_triangle(), "m={m}");
                let padding = l.padding();
                let layers: Vec<&[Block]> = padding.iter().map(Vec::as_slice).collect();
                assert_eq!(l.unpack_layers(&layers), Matrix::zeros(m, m));
            }
        }
        // Entry (6, 5) of the full format: block (1, 1) at texel (1, 1), layer 1, component 2.
        let l = BlockLayout::with(8, Format::Full, Blocking::Four);
        assert_eq!(l.locate(6, 5), (1, 1, 1, 2));
        assert_eq!(l.texels(), 4);
        assert_eq!(l.block_column_texels(), 4);
    }
}
