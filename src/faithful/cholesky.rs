//! Geometry of Cholesky, Algorithm 5, full format: square root on the pivot, normalization of
//! the column below it, outer-product subtraction over the trailing triangle (Fig 5).

use crate::draw::{Kernel, Plan, Vertex, rectangle, texel_quad};

/// The square-root pass: the one pixel of the pivot (k, k), texel (k, k).
pub fn square_root_full(k: usize) -> [Vertex; 6] {
    texel_quad(k, k)
}

/// The normalization pass: the rectangle over column k below the diagonal, texels (k, k+1..m),
/// every vertex carrying T0 = the pivot's texel centre (k+.5, k+.5) for Kernel 4.
pub fn normalization_full(m: usize, k: usize) -> [Vertex; 6] {
    let (x, kc) = (k as f32, k as f32 + 0.5);
    rectangle(x, x + 1.0, x + 1.0, m as f32, |_, _| {
        ([kc, kc, 0.0], [0.0; 2])
    })
}

/// Fig 5: the oversized triangle over the trailing lower triangle (i ≥ j ≥ k+1); T0 = (k+.5, y)
/// fetches the neighbour L(i, k), T1 = (x, k+.5), used as T1.yx, the pivot L(j, k).
pub fn outer_product_full(m: usize, k: usize) -> [Vertex; 3] {
    let (mf, kf, kc) = (m as f32, k as f32, k as f32 + 0.5);
    [
        Vertex::new([kf + 1.0, kc], [kc, kc, 0.0], [kf + 1.0, kc]),
        Vertex::new([kf + 1.0, mf], [kc, mf, 0.0], [kf + 1.0, kc]),
        Vertex::new([mf + 0.5, mf], [kc, mf, 0.0], [mf + 0.5, kc]),
    ]
}

/// Algorithm 5 in full format. Each step: square root and copy back, normalization and copy
/// back, outer-product subtraction, swap; then the last square root (followed by a swap, so the
/// factor always ends in the source).
pub fn full_plan(m: usize) -> Plan {
    let mut plan = Plan::default();
    let viewport = (m, m);
    for k in 0..m.saturating_sub(1) {
        plan.push(Kernel::SquareRoot, k, viewport, &square_root_full(k));
        plan.push_copy_of_last();
        plan.push(
            Kernel::Normalization,
            k,
            viewport,
            &normalization_full(m, k),
        );
        plan.push_copy_of_last();
        plan.push(
            Kernel::OuterProductSubtraction,
            k,
            viewport,
            &outer_product_full(m, k),
        );
        plan.swap_after_last();
    }
    if m > 0 {
        plan.push(
            Kernel::SquareRoot,
            m - 1,
            viewport,
            &square_root_full(m - 1),
        );
        plan.swap_after_last();
    }
    plan
}
