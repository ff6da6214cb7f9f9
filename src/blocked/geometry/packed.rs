//! The blocked method's geometry in the rectangular packed format: Figs 4, 6 and 7 with texel =
//! block, 2 x 2 or 4 x 4 ([`BlockLayout::packed`]). T = texels per side of the padded matrix,
//! W = the fold, S = [`PACKED_ROW_OFFSET`] (4), H = T + S, the corner T - W wide. Block (I, J)
//! lies at (J, I+S) in the trapezoid (J < W) and at (T-1-J, T-1-I) in the rotated corner
//! (J ≥ W). Every pass over the lower triangle draws the trapezoid's triangle (clipped by the
//! viewport at x = W, as Fig 4's) and the corner's, the corner's texture coordinates running
//! backwards, so each fragment reads what it reads in the full format. A block column never
//! straddles the fold, so the blocks a diagonal-factor or panel fragment reads lie along one
//! direction from one origin: T0 = (origin + .5, ±1) for those kernels, and T0.z = ±1 walks
//! the panel in the trailing update.

use crate::layout::blocked::{BlockLayout, PACKED_ROW_OFFSET};
use crate::draw::{Vertex, rectangle};

/// Texture coordinates as functions of the position, for the vertices of one triangle.
fn with(positions: [[f32; 2]; 3], attrs: impl Fn(f32, f32) -> ([f32; 3], [f32; 2])) -> [Vertex; 3] {
    positions.map(|[x, y]| {
        let (t0, t1) = attrs(x, y);
        Vertex::new([x, y], t0, t1)
    })
}

/// The trapezoid's texels f ≤ x, x + S ≤ y < T + S (blocks (I, J), J ≥ f, S rows down, S =
/// [`PACKED_ROW_OFFSET`]): the full format's [`lower_blocks`](super::lower_blocks) triangle S
/// rows down, its right part clipped by the viewport at x = W.
fn trapezoid(f: usize, t: usize) -> [[f32; 2]; 3] {
    let s = PACKED_ROW_OFFSET as f32;
    let (f, h) = (f as f32, t as f32 + s);
    [[f, f + s - 0.5], [f, h], [h - s + 0.5, h]]
}

/// The corner's texels lo ≤ y ≤ x < hi: the 180° rotation of a lower triangle of blocks.
fn corner(lo: usize, hi: usize) -> [[f32; 2]; 3] {
    let (lo, hi) = (lo as f32, hi as f32);
    [[hi, hi + 0.5], [hi, lo], [lo - 0.5, lo]]
}

/// Fig 4 by blocks: rank-K addition at texel column k of A and B over the whole packed
/// triangle. T0.y and T1.x interpolate to the block row I and the block column J of each
/// fragment (A and B are not packed): I = y - S, J = x in the trapezoid; I = T-1-y,
/// J = T-1-x in the corner.
pub fn addition(layout: BlockLayout, k: usize) -> Vec<Vertex> {
    let (t, w) = (layout.texels(), layout.fold());
    let (tf, kc) = (t as f32, k as f32 + 0.5);
    let s = PACKED_ROW_OFFSET as f32;
    let mut v = with(trapezoid(0, t), |x, y| ([kc, y - s, 1.0], [x, kc])).to_vec();
    if t > w {
        v.extend(with(corner(0, t - w), |x, y| {
            ([kc, tf - y, 1.0], [tf - x, kc])
        }));
    }
    v
}

/// Where the diagonal block of texel column k starts and which way it runs: (origin, ±1).
fn origin(layout: BlockLayout, k: usize) -> ([f32; 2], f32) {
    let (x, y) = layout.texel_of_block(k, k);
    let sign = if k < layout.fold() { 1.0 } else { -1.0 };
    ([x as f32 + 0.5, y as f32 + 0.5], sign)
}

/// The diagonal block of texel columns k..k+kb (blocks k ≤ J ≤ I < k+kb), every vertex
/// carrying T0 = (origin of block (k, k), ±1): in the trapezoid the texels k ≤ x < k+kb,
/// x < y ≤ k+kb; in the corner T-k-kb ≤ y ≤ x < T-k.
pub fn diagonal_block(layout: BlockLayout, k: usize) -> [Vertex; 3] {
    let (t, kb) = (layout.texels(), layout.block_column_texels());
    let ([ox, oy], sign) = origin(layout, k);
    let region = if k < layout.fold() {
        trapezoid(k, k + kb)
    } else {
        corner(t - k - kb, t - k)
    };
    with(region, |_, _| ([ox, oy, sign], [0.0; 2]))
}

/// The panel below the diagonal block of texel columns k..k+kb (blocks I ≥ k+kb,
/// k ≤ J < k+kb), T0 as in [`diagonal_block`]: in the trapezoid k ≤ x < k+kb,
/// k+kb+1 ≤ y ≤ T; in the corner T-k-kb ≤ x < T-k, y < T-k-kb.
pub fn panel(layout: BlockLayout, k: usize) -> [Vertex; 6] {
    let (t, kb) = (layout.texels(), layout.block_column_texels());
    let ([ox, oy], sign) = origin(layout, k);
    let (x0, y0, x1, y1) = if k < layout.fold() {
        (k, k + kb + PACKED_ROW_OFFSET, k + kb, t + PACKED_ROW_OFFSET)
    } else {
        (t - k - kb, 0, t - k, t - k - kb)
    };
    rectangle(x0 as f32, y0 as f32, x1 as f32, y1 as f32, |_, _| {
        ([ox, oy, sign], [0.0; 2])
    })
}

/// Figs 6 and 7 by blocks: the trailing rank-K subtraction after the panel of texel columns
/// k..k+kb, over the blocks I ≥ J ≥ k+kb. T0.xy names the texel of block (I, k) and T1.yx
/// that of block (J, k), T0.z = +1 or -1 the direction of block (I, k+1) from (I, k).
/// Panel in the trapezoid (Fig 6(a)): the trailing trapezoid (when k+kb < W) and the whole
/// corner. Panel in the corner (Fig 6(b)): the corner's part left of the panel.
pub fn subtraction(layout: BlockLayout, k: usize) -> Vec<Vertex> {
    let (t, w, kb) = (layout.texels(), layout.fold(), layout.block_column_texels());
    let (tf, kc) = (t as f32, k as f32 + 0.5);
    let f = k + kb;
    let s = PACKED_ROW_OFFSET as f32;
    let mut v = Vec::new();
    if k < w {
        if f < w {
            v.extend(with(trapezoid(f, t), |x, y| ([kc, y, 1.0], [x + s, kc])));
        }
        if t > w {
            v.extend(with(corner(0, t - w), |x, y| {
                ([kc, tf + s - y, 1.0], [tf + s - x, kc])
            }));
        }
    } else if f < t {
        let c = (t - 1 - k) as f32 + 0.5;
        v.extend(with(corner(0, t - f), |x, y| ([c, y, -1.0], [x, c])));
    }
    v
}
