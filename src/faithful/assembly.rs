//! Geometry of assembly, Algorithm 3: column scaling (Fig 2(a)) and outer-product addition
//! (Fig 2(b), full format).

use crate::draw::{Kernel, Plan, Vertex, rectangle};

/// Fig 2(a): a rectangle over b (viewport m x 1); every vertex carries T0 = (x, k+.5, .5), so
/// Kernel 1 fetches A at T0.yx = (k+.5, i+.5) and d at T0.yz = (k+.5, .5).
pub fn column_scaling(m: usize, k: usize) -> [Vertex; 6] {
    let kc = k as f32 + 0.5;
    rectangle(0.0, 0.0, m as f32, 1.0, |x, _| ([x, kc, 0.5], [0.0; 2]))
}

/// Fig 2(b): one triangle over the lower triangle of C_T with its diagonal (viewport m x m);
/// T0 = (k+.5, y) indexes A, T1 = (x, .5) indexes b.
pub fn outer_product_full(m: usize, k: usize) -> [Vertex; 3] {
    let (mf, kc) = (m as f32, k as f32 + 0.5);
    [
        Vertex::new([0.0, -0.5], [kc, -0.5, 0.0], [0.0, 0.5]),
        Vertex::new([0.0, mf], [kc, mf, 0.0], [0.0, 0.5]),
        Vertex::new([mf + 0.5, mf], [kc, mf, 0.0], [mf + 0.5, 0.5]),
    ]
}

/// Algorithm 3 in full format: for each of the n columns of A, scale it into b, add the outer
/// product to the lower triangle of C_T reading C_S, swap. The sum ends in the source.
pub fn full_plan(m: usize, n: usize) -> Plan {
    let mut plan = Plan::default();
    for k in 0..n {
        plan.push(Kernel::ColumnScaling, k, (m, 1), &column_scaling(m, k));
        plan.push(
            Kernel::OuterProductAddition,
            k,
            (m, m),
            &outer_product_full(m, k),
        );
        plan.swap_after_last();
    }
    plan
}
