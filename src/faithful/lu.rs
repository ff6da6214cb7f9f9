//! Geometry of LU without pivoting in the same framework, the comparison of Fig 9 (Galoppo et
//! al.'s LU-GPU): per step the column below the pivot is normalized (Kernel 4), then the
//! outer product is subtracted over the whole trailing square (Kernel 5, drawn as a quad):
//! about twice the fragments of Cholesky's triangle.

use super::cholesky::normalization_full;
use crate::draw::{Kernel, Plan, Target, Vertex, rectangle};

/// The trailing square i, j ≥ k+1 (texels x, y ≥ k+1). Fragment (j, i) gets T0 = (k+.5, i),
/// the multiplier L(i, k) at texel (k, i), and T1 = (k+.5, j), whose swizzle T1.yx = (j, k)
/// is U(k, j): Kernel 5 unchanged.
pub fn outer_product_square(m: usize, k: usize) -> [Vertex; 6] {
    let (lo, hi, kc) = ((k + 1) as f32, m as f32, k as f32 + 0.5);
    rectangle(lo, lo, hi, hi, |x, y| ([kc, y, 0.0], [kc, x]))
}

/// Row k from the pivot rightwards, texels (k..m, k): copied from the source into the target so
/// that the target holds the whole matrix after the step (the subtraction skips row k).
pub fn pivot_row(m: usize, k: usize) -> [Vertex; 6] {
    let kf = k as f32;
    rectangle(kf, kf, m as f32, kf + 1.0, |_, _| ([0.0; 3], [0.0; 2]))
}

/// LU without pivoting in full format: per step k < m−1, normalization and its copy back,
/// the subtraction over the trailing square, the copy of row k into the target, swap. The
/// result (unit-lower L below the diagonal, U on and above it) ends in the source.
pub fn full_plan(m: usize) -> Plan {
    let mut plan = Plan::default();
    let viewport = (m, m);
    for k in 0..m.saturating_sub(1) {
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
            &outer_product_square(m, k),
        );
        plan.push_into(
            Kernel::Copy,
            Target::PairTarget,
            k,
            viewport,
            &pivot_row(m, k),
        );
        plan.swap_after_last();
    }
    plan
}
