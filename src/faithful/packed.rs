//! Geometry of the rectangular packed format (section 3.3): assembly (Fig 4) and Cholesky
//! (Figs 6 and 7) on a w x h texture, w = ceil(m/2), h = m + mod(m+1, 2).
//!
//! Columns j < w of the lower triangle (a trapezoid) stay in place, one row down when m is even;
//! the triangle of columns j ≥ w is rotated by 180° into the free upper corner (see
//! [`Layout::texel_of`]). A pass over the whole lower triangle draws two triangles: one over the
//! trapezoid with the full format's texture coordinates, one over the corner whose texture
//! coordinates run backwards, so every fragment fetches what it would in the full format.
//! The tables are in `docs/geometry.md` (with the Fig 4(b) erratum applied).

use super::assembly::column_scaling;
use crate::draw::{Kernel, Plan, Vertex, rectangle, texel_quad};
use crate::layout::Layout;

/// Texture (width, height) of the packed m x m lower triangle.
pub fn packed_size(m: usize) -> (usize, usize) {
    Layout::packed(m).texture_size()
}

/// Fig 4: outer-product addition at step k over the whole packed triangle (viewport w x h).
/// Vertices 1-3 cover the trapezoid, 4-6 the rotated corner; T0 = (k+.5, row of A), T1 =
/// (column of b, .5). Vertex 4's T1 is (w, .5), not the scan's (m, .5) (the erratum).
pub fn outer_product_addition(m: usize, k: usize) -> [Vertex; 6] {
    let (w, h) = packed_size(m);
    let (mf, wf, hf, kc) = (m as f32, w as f32, h as f32, k as f32 + 0.5);
    let t0 = |y: f32| [kc, y, 0.0];
    if m.is_multiple_of(2) {
        [
            Vertex::new([0.0, 0.5], t0(-0.5), [0.0, 0.5]),
            Vertex::new([0.0, hf], t0(mf), [0.0, 0.5]),
            Vertex::new([mf + 0.5, hf], t0(mf), [mf + 0.5, 0.5]),
            Vertex::new([wf, wf + 0.5], t0(wf - 0.5), [wf, 0.5]),
            Vertex::new([wf, 0.0], t0(mf), [wf, 0.5]),
            Vertex::new([-0.5, 0.0], t0(mf), [mf + 0.5, 0.5]),
        ]
    } else {
        [
            Vertex::new([0.0, -0.5], t0(-0.5), [0.0, 0.5]),
            Vertex::new([0.0, mf], t0(mf), [0.0, 0.5]),
            Vertex::new([mf + 0.5, mf], t0(mf), [mf + 0.5, 0.5]),
            Vertex::new([wf, wf - 0.5], t0(wf - 0.5), [wf, 0.5]),
            Vertex::new([wf, 0.0], t0(mf), [wf, 0.5]),
            Vertex::new([0.5, 0.0], t0(mf), [mf + 0.5, 0.5]),
        ]
    }
}

/// Algorithm 3 in packed format: Fig 2(a)'s column scaling (unchanged, viewport m x 1), then
/// Fig 4's two triangles (viewport w x h), then a swap; the sum ends in the source.
pub fn assembly_plan(m: usize, n: usize) -> Plan {
    let viewport = packed_size(m);
    let mut plan = Plan::default();
    for k in 0..n {
        plan.push(Kernel::ColumnScaling, k, (m, 1), &column_scaling(m, k));
        plan.push(
            Kernel::OuterProductAddition,
            k,
            viewport,
            &outer_product_addition(m, k),
        );
        plan.swap_after_last();
    }
    plan
}

/// The square-root pass of step k: the one pixel of the pivot, at its packed texel.
pub fn square_root(m: usize, k: usize) -> [Vertex; 6] {
    let (x, y) = Layout::packed(m).texel_of(k, k);
    texel_quad(x, y)
}

/// The normalization pass of step k < m-1: the texels of column k below the diagonal, which
/// are contiguous in one texel column (below the pivot in the trapezoid, above it in the
/// corner); every vertex carries T0 = the pivot's texel centre for Kernel 4.
pub fn normalization(m: usize, k: usize) -> [Vertex; 6] {
    debug_assert!(
        k + 1 < m,
        "column {k} of {m} has nothing below its diagonal"
    );
    let layout = Layout::packed(m);
    let (px, py) = layout.texel_of(k, k);
    let (_, first) = layout.texel_of(k + 1, k);
    let (_, last) = layout.texel_of(m - 1, k);
    let (y0, y1) = (first.min(last), first.max(last) + 1);
    let pivot = [px as f32 + 0.5, py as f32 + 0.5, 0.0];
    let x = px as f32;
    rectangle(x, y0 as f32, x + 1.0, y1 as f32, |_, _| (pivot, [0.0; 2]))
}

/// Figs 6(a) and 7(a): outer-product subtraction at step k < w (pivot column in the
/// trapezoid), two triangles: the trailing trapezoid (empty when k = w-1) and the whole
/// rotated corner. T0 fetches the neighbour L(i, k), T1.yx the pivot L(j, k).
pub fn subtraction_first_half(m: usize, k: usize) -> [Vertex; 6] {
    let (w, h) = packed_size(m);
    let (mf, wf, hf) = (m as f32, w as f32, h as f32);
    let (kf, kc) = (k as f32, k as f32 + 0.5);
    let t0 = |y: f32| [kc, y, 0.0];
    let t1 = |x: f32| [x, kc];
    if m.is_multiple_of(2) {
        [
            Vertex::new([kf + 1.0, kf + 1.5], t0(kf + 1.5), t1(kf + 2.0)),
            Vertex::new([kf + 1.0, hf], t0(hf), t1(kf + 2.0)),
            Vertex::new([mf + 0.5, hf], t0(hf), t1(mf + 1.5)),
            Vertex::new([wf, wf + 0.5], t0(wf + 0.5), t1(wf + 1.0)),
            Vertex::new([wf, 0.0], t0(hf), t1(wf + 1.0)),
            Vertex::new([-0.5, 0.0], t0(hf), t1(mf + 1.5)),
        ]
    } else {
        [
            Vertex::new([kf + 1.0, kc], t0(kc), t1(kf + 1.0)),
            Vertex::new([kf + 1.0, mf], t0(mf), t1(kf + 1.0)),
            Vertex::new([mf + 0.5, mf], t0(mf), t1(mf + 0.5)),
            Vertex::new([wf, wf - 0.5], t0(wf - 0.5), t1(wf)),
            Vertex::new([wf, 0.0], t0(mf), t1(wf)),
            Vertex::new([0.5, 0.0], t0(mf), t1(mf + 0.5)),
        ]
    }
}

/// The texel column of pivot column `step` ≥ w, which lies in the rotated corner: m-1-step
/// (m even, Fig 6(b)) or m-step (m odd, Fig 7(b)).
pub fn corner_column(m: usize, step: usize) -> usize {
    Layout::packed(m).texel_of(step, step).0
}

/// Figs 6(b) and 7(b): outer-product subtraction at step `step` in w..m-1 (the pivot column in
/// the corner at texel column k = [`corner_column`]), one triangle over the corner's texels left
/// of column k. T0 = (k+.5, y) fetches the neighbour, T1.yx the pivot in the same texel column.
pub fn subtraction_second_half(m: usize, step: usize) -> [Vertex; 3] {
    let k = corner_column(m, step);
    let (kf, kc) = (k as f32, k as f32 + 0.5);
    if m.is_multiple_of(2) {
        [
            Vertex::new([kf, kc], [kc, kc, 0.0], [kf, kc]),
            Vertex::new([kf, 0.0], [kc, 0.0, 0.0], [kf, kc]),
            Vertex::new([-0.5, 0.0], [kc, 0.0, 0.0], [-0.5, kc]),
        ]
    } else {
        [
            Vertex::new([kf, kf - 0.5], [kc, kf - 0.5, 0.0], [kf - 1.0, kc]),
            Vertex::new([kf, 0.0], [kc, 0.0, 0.0], [kf - 1.0, kc]),
            Vertex::new([0.5, 0.0], [kc, 0.0, 0.0], [-0.5, kc]),
        ]
    }
}

/// Algorithm 5 in packed format (section 4.3). The loop over the pivot column `step` = 0..m-2
/// splits in two: steps below w draw Figs 6(a)/7(a), the rest Figs 6(b)/7(b) with the texel
/// column running from w-1 down to 1 (m even) or 2 (m odd). Each step: square root and copy
/// back, normalization and copy back, subtraction, swap; then the last square root and a swap,
/// so the factor ends in the source, as in the full plan.
pub fn cholesky_plan(m: usize) -> Plan {
    let (w, _) = packed_size(m);
    let viewport = packed_size(m);
    let mut plan = Plan::default();
    for step in 0..m.saturating_sub(1) {
        plan.push(Kernel::SquareRoot, step, viewport, &square_root(m, step));
        plan.push_copy_of_last();
        plan.push(
            Kernel::Normalization,
            step,
            viewport,
            &normalization(m, step),
        );
        plan.push_copy_of_last();
        if step < w {
            plan.push(
                Kernel::OuterProductSubtraction,
                step,
                viewport,
                &subtraction_first_half(m, step),
            );
        } else {
            plan.push(
                Kernel::OuterProductSubtraction,
                step,
                viewport,
                &subtraction_second_half(m, step),
            );
        }
        plan.swap_after_last();
    }
    if m > 0 {
        plan.push(Kernel::SquareRoot, m - 1, viewport, &square_root(m, m - 1));
        plan.swap_after_last();
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_half_texel_columns_run_down_to_one_or_two() {
        for m in 2..=20usize {
            let w = m.div_ceil(2);
            let cols: Vec<_> = (w..m - 1).map(|s| corner_column(m, s)).collect();
            if cols.is_empty() {
                continue;
            }
            assert_eq!(cols[0], w - 1, "m = {m}");
            assert_eq!(
                *cols.last().unwrap(),
                if m.is_multiple_of(2) { 1 } else { 2 }
            );
            assert!(cols.windows(2).all(|p| p[1] + 1 == p[0]));
        }
    }

    #[test]
    fn plans_have_the_expected_pass_counts() {
        for m in 1..=9 {
            assert_eq!(assembly_plan(m, 3).passes.len(), 6);
            assert_eq!(cholesky_plan(m).passes.len(), 5 * (m - 1) + 1);
            assert!(
                cholesky_plan(m)
                    .passes
                    .iter()
                    .all(|p| p.viewport == packed_size(m))
            );
        }
    }
}
