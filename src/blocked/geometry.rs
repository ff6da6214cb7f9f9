//! Geometry of the blocked method: the paper's triangles at block granularity. Coordinates
//! are in texels of the RGBA32F textures ([`BlockLayout`]), each texel (of one texture, or of
//! four drawn at once) a 2 x 2 or 4 x 4 block, so texel (x, y) is block row y, block column x.
//! Both blockings draw the same triangles over their own texel grids. As in Figs 2(b) and 5, one triangle covers exactly
//! the lower triangle of blocks of a region, and the texture coordinates on its vertices,
//! interpolated by the rasterizer, name the blocks each fragment reads. The packed format's
//! triangles (Figs 4, 6, 7 by blocks) are in [`packed`]; the plans serve both formats.

pub mod packed;

use crate::layout::blocked::{ASSEMBLY_RANK, BlockColumn, BlockLayout, Blocking};
use crate::draw::{Kernel, Plan, Target, Vertex, rectangle};
use crate::layout::Format;

/// The kernels of a blocking, by role.
struct Roles {
    scaling: Kernel,
    addition: Kernel,
    factor: Kernel,
    inverse: Kernel,
    panel: Kernel,
    subtraction: Kernel,
}

/// The kernels of a layout's blocking and block column.
fn roles(layout: BlockLayout) -> Roles {
    use BlockColumn::{Sixteen, ThirtyTwo};
    let (scaling, addition) = match layout.blocking() {
        Blocking::Two => (Kernel::BlockScaling, Kernel::RankKAddition),
        Blocking::Four => (Kernel::BlockScaling4, Kernel::RankKAddition4),
    };
    let [factor, inverse, panel, subtraction] = match (layout.blocking(), layout.column()) {
        (Blocking::Two, Sixteen) => [
            Kernel::BlockFactor,
            Kernel::BlockInverse,
            Kernel::BlockPanel,
            Kernel::RankKSubtraction,
        ],
        (Blocking::Four, Sixteen) => [
            Kernel::BlockFactor4,
            Kernel::BlockInverse4,
            Kernel::BlockPanel4,
            Kernel::RankKSubtraction4,
        ],
        (Blocking::Two, ThirtyTwo) => [
            Kernel::BlockFactor32,
            Kernel::BlockInverse32,
            Kernel::BlockPanel32,
            Kernel::RankKSubtraction32,
        ],
        (Blocking::Four, ThirtyTwo) => [
            Kernel::BlockFactor4x32,
            Kernel::BlockInverse4x32,
            Kernel::BlockPanel4x32,
            Kernel::RankKSubtraction4x32,
        ],
    };
    Roles {
        scaling,
        addition,
        factor,
        inverse,
        panel,
        subtraction,
    }
}

/// Fig 2(a) by blocks: a rectangle over the whole of B (`width` x `height` texels, B and A
/// stored with texel (x, y) = rows 2x.., columns 2y.. (2 x 2) or rows 4x.., column y
/// (4 x 4)), every vertex carrying T0 = (x, y, .5): A's texel at T0.xy, d's at T0.yz.
pub fn block_scaling(width: usize, height: usize) -> [Vertex; 6] {
    rectangle(0.0, 0.0, width as f32, height as f32, |x, y| {
        ([x, y, 0.5], [0.0; 2])
    })
}

/// The oversized triangle of Figs 2(b) and 5 over the texels `from ≤ x ≤ y < to` (the lower
/// triangle of blocks of the square from `from` to `to`), with T0 = (k+.5, y) naming block row
/// y of texel column k and T1 = (x, k+.5), read .yx, block row x of column k; T0.z = 1, the
/// step from block column k to k+1. Every edge lies .5 away from the pixel centres or on
/// texel borders, as in the paper.
pub fn lower_blocks(from: usize, to: usize, k: usize) -> [Vertex; 3] {
    let (f, t, kc) = (from as f32, to as f32, k as f32 + 0.5);
    [
        Vertex::new([f, f - 0.5], [kc, f - 0.5, 1.0], [f, kc]),
        Vertex::new([f, t], [kc, t, 1.0], [f, kc]),
        Vertex::new([t + 0.5, t], [kc, t, 1.0], [t + 0.5, kc]),
    ]
}

/// The diagonal block of texel columns `k .. k+width` ([`lower_blocks`]' triangle), every
/// vertex carrying T0 = (k+.5, k+.5, 1): block (k+i, k+j) is texel (k, k) + (j, i).
pub fn diagonal_block(k: usize, width: usize) -> [Vertex; 3] {
    let kc = k as f32 + 0.5;
    lower_blocks(k, k + width, k).map(|v| Vertex::new(v.position, [kc, kc, 1.0], [0.0; 2]))
}

/// The panel below the diagonal block of texel columns `k .. k+width`: the rectangle of texels
/// k ≤ x < k+width, k+width ≤ y < `to`, T0 = (k+.5, k+.5, 1) as in [`diagonal_block`].
pub fn panel(k: usize, width: usize, to: usize) -> [Vertex; 6] {
    let kc = k as f32 + 0.5;
    let (x0, x1) = (k as f32, (k + width) as f32);
    rectangle(x0, x1, x1, to as f32, |_, _| ([kc, kc, 1.0], [0.0; 2]))
}

/// Assembly by blocks: one scaling pass B = A·diag(d), then a rank-[`ASSEMBLY_RANK`] update of
/// the lower triangle of blocks per pass over A's columns, ping-pong with a swap after each.
/// `n` is A's column count; the sum ends in the source. Packed: each update draws Fig 4's two
/// triangles ([`packed::addition`]) over the W x (T+1) texture. A pass's step is its first
/// column of A; T0 and T1 name A's and B's texel row k holding it.
pub fn assembly_plan(layout: BlockLayout, n: usize) -> Plan {
    let t = layout.texels();
    let viewport = layout.texture_size();
    let kernels = roles(layout);
    let per_texel = layout.blocking().a_columns_per_texel();
    let height = layout.a_height(n);
    let mut plan = Plan::default();
    plan.push(kernels.scaling, 0, (t, height), &block_scaling(t, height));
    for k in (0..height).step_by(ASSEMBLY_RANK / per_texel) {
        let triangles = match layout.format() {
            Format::Full => lower_blocks(0, t, k).to_vec(),
            Format::Packed => packed::addition(layout, k),
        };
        plan.push(kernels.addition, per_texel * k, viewport, &triangles);
        plan.swap_after_last();
    }
    plan
}

/// Cholesky by block columns (the Brook+ sample's three steps): factor the diagonal block
/// into the target; draw its inverse over the diagonal block of the source; solve the panel
/// below it as a product with that inverse into the target; copy the block column (factor and
/// panel) back; subtract the panel's rank-K product from the trailing triangle and swap. The
/// last block column is factored and copied back only, so the factor ends in the source.
/// Packed: the same passes over Figs 6 and 7's regions by blocks ([`packed`]), the pivot block
/// column in the trapezoid for k < W and in the rotated corner after. A pass's step is the
/// block column's first matrix column.
pub fn cholesky_plan(layout: BlockLayout) -> Plan {
    let (t, kb) = (layout.texels(), layout.block_column_texels());
    let viewport = layout.texture_size();
    let full = layout.format() == Format::Full;
    let kernels = roles(layout);
    let mut plan = Plan::default();
    for k in (0..t).step_by(kb) {
        let step = layout.blocking().side() * k;
        let factor = if full {
            diagonal_block(k, kb)
        } else {
            packed::diagonal_block(layout, k)
        };
        plan.push(kernels.factor, step, viewport, &factor);
        if k + kb < t {
            plan.push(kernels.inverse, step, viewport, &factor);
            let solve = if full {
                panel(k, kb, t)
            } else {
                packed::panel(layout, k)
            };
            plan.push(kernels.panel, step, viewport, &solve);
            let column: Vec<Vertex> = factor.iter().chain(&solve).copied().collect();
            plan.push_into(
                kernels.factor.copy(),
                Target::PairSource,
                step,
                viewport,
                &column,
            );
            let update = if full {
                lower_blocks(k + kb, t, k).to_vec()
            } else {
                packed::subtraction(layout, k)
            };
            plan.push(kernels.subtraction, step, viewport, &update);
            plan.swap_after_last();
        } else {
            plan.push_copy_of_last();
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::blocked::BLOCK_COLUMN;

    #[test]
    fn plans_have_the_expected_passes() {
        let layout = BlockLayout::new(2 * BLOCK_COLUMN + 1);
        let plan = cholesky_plan(layout);
        let kernels: Vec<_> = plan.passes.iter().map(|p| p.kernel).collect();
        use Kernel::*;
        let step = [
            BlockFactor,
            BlockInverse,
            BlockPanel,
            BlockCopy,
            RankKSubtraction,
        ];
        let mut want = [step, step].concat();
        want.extend([BlockFactor, BlockCopy]);
        assert_eq!(kernels, want);
        assert_eq!(plan.passes.iter().filter(|p| p.swap_after).count(), 2);
        let plan = assembly_plan(layout, ASSEMBLY_RANK + 1);
        assert_eq!(plan.passes.len(), 3);
        assert_eq!(plan.passes[2].step, ASSEMBLY_RANK);
        assert!(plan.passes[1..].iter().all(|p| p.swap_after));
        // 4 x 4: the same passes with the 4 x 4 kernels and steps in matrix columns.
        let four = BlockLayout::with(2 * BLOCK_COLUMN + 1, Format::Full, Blocking::Four);
        let plan4 = cholesky_plan(four);
        assert_eq!(plan4.passes.len(), want.len());
        assert_eq!(plan4.passes[5].kernel, BlockFactor4);
        assert_eq!(plan4.passes[5].step, BLOCK_COLUMN);
        let plan = assembly_plan(four, ASSEMBLY_RANK + 1);
        assert_eq!(plan.passes.len(), 3);
        assert_eq!(plan.passes[2].step, ASSEMBLY_RANK);
        assert_eq!(plan.passes[2].kernel, RankKAddition4);
        assert_eq!(plan.passes[0].viewport, (four.texels(), 2 * ASSEMBLY_RANK));
        // Block columns of 32: m = 33 pads to 64, two block columns, the 32 kernels.
        let wide = four.with_column(BlockColumn::ThirtyTwo);
        let plan32 = cholesky_plan(wide);
        assert_eq!(plan32.passes.len(), 7);
        assert_eq!(plan32.passes[0].kernel, BlockFactor4x32);
        assert_eq!(plan32.passes[1].kernel, BlockInverse4x32);
        assert_eq!(plan32.passes[2].kernel, BlockPanel4x32);
        assert_eq!(plan32.passes[4].kernel, RankKSubtraction4x32);
        assert_eq!(plan32.passes[5].step, 32);
    }

    #[test]
    fn triangles_interpolate_to_their_vertices_coordinates() {
        // T0.y follows y and T1.x follows x, exactly, at every vertex.
        for v in lower_blocks(3, 11, 2) {
            assert_eq!(v.t0[1], v.position[1]);
            assert_eq!(v.t1[0], v.position[0]);
            assert_eq!((v.t0[0], v.t0[2], v.t1[1]), (2.5, 1.0, 2.5));
        }
        // The factor and the panel read from the diagonal block's origin, forwards.
        for v in diagonal_block(2, 4).iter().chain(&panel(2, 4, 9)) {
            assert_eq!(v.t0, [2.5, 2.5, 1.0]);
        }
    }

    #[test]
    fn packed_plans_draw_on_the_packed_texture() {
        for m in [1, 16, 17, 33, 64] {
            let layout = BlockLayout::packed(m);
            let full = cholesky_plan(BlockLayout::new(m));
            let plan = cholesky_plan(layout);
            let kernels = |p: &Plan| p.passes.iter().map(|p| p.kernel).collect::<Vec<_>>();
            assert_eq!(kernels(&plan), kernels(&full), "m={m}: the same passes");
            assert!(
                plan.passes
                    .iter()
                    .all(|p| p.viewport == layout.texture_size())
            );
            let plan = assembly_plan(layout, 40);
            assert_eq!(
                plan.passes.len(),
                assembly_plan(BlockLayout::new(m), 40).passes.len()
            );
        }
    }
}
