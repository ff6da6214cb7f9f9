//! LU without pivoting on the GPU (Fig 9's comparison) against the CPU reference.

use crate::common::soft_raster::{rasterize, texel};
use crate::common::{U32, gpu};
use std::collections::BTreeSet;
use symraster::draw::Kernel;
use symraster::faithful::lu;
use symraster::{Error, InputError, Matrix, NumericalError, problems, reference, relative_error};

#[test]
fn lu_matches_reference_on_diagonally_dominant_matrices() {
    let gpu = gpu();
    for m in [1, 2, 3, 4, 7, 16, 33, 64, 100] {
        let a = problems::diagonally_dominant(&mut problems::rng(m as u64), m);
        let f = gpu.lu(&a).unwrap();
        let lu_ref = reference::lu_no_pivoting(&a.to_f64()).unwrap();
        let forward = relative_error(&f.lu, &lu_ref);
        let backward = relative_error(&reference::multiply_lu(&f.lu.to_f64()), &a.to_f64());
        let tol = 8.0 * (m as f64 + 2.0) * U32;
        assert!(
            forward <= tol && backward <= tol,
            "m={m}: forward {forward:.2e} backward {backward:.2e} tol {tol:.2e}"
        );
        // The split into L and U multiplies back to A.
        let (l, u) = (f.l().to_f64(), f.u().to_f64());
        let prod = Matrix::from_fn(m, m, |i, j| {
            (0..m).map(|k| l[(i, k)] * u[(k, j)]).sum::<f64>()
        });
        assert!(relative_error(&prod, &a.to_f64()) <= tol);
    }
}

#[test]
fn lu_zero_pivot_is_an_error() {
    let gpu = gpu();
    let a = Matrix::from_row_major(2, 2, vec![0.0f32, 1.0, 1.0, 0.0]).unwrap();
    assert!(matches!(
        gpu.lu(&a),
        Err(Error::Numerical(NumericalError::ZeroPivot {
            column: 0,
            ..
        }))
    ));
    assert!(matches!(
        gpu.lu(&Matrix::<f32>::zeros(2, 3)),
        Err(Error::Input(InputError::Shape(_)))
    ));
}

#[test]
fn lu_trailing_square_has_twice_the_fragments_of_the_cholesky_triangle() {
    for m in [8usize, 31] {
        let plan = lu::full_plan(m);
        let chol = symraster::faithful::cholesky::full_plan(m);
        let frags = |p: &symraster::draw::Plan, k: Kernel| -> usize {
            p.passes
                .iter()
                .filter(|x| x.kernel == k)
                .map(|x| rasterize(p.vertices_of(x), m, m).len())
                .sum()
        };
        let (lu_n, ch_n) = (
            frags(&plan, Kernel::OuterProductSubtraction),
            frags(&chol, Kernel::OuterProductSubtraction),
        );
        // Σ s² against Σ s(s+1)/2 for s = 1..m-1.
        assert_eq!(lu_n, (1..m).map(|s| s * s).sum::<usize>());
        assert_eq!(ch_n, (1..m).map(|s| s * (s + 1) / 2).sum::<usize>());
        // Each fragment (j, i) reads L(i, k) at (k, i) and U(k, j) at T1.yx = (j, k).
        for pass in plan
            .passes
            .iter()
            .filter(|p| p.kernel == Kernel::OuterProductSubtraction)
        {
            let k = pass.step as i64;
            let got: BTreeSet<_> = rasterize(plan.vertices_of(pass), m, m)
                .into_iter()
                .inspect(|f| {
                    assert_eq!((texel(f.t0[0]), texel(f.t0[1])), (k, f.y as i64));
                    assert_eq!((texel(f.t1[1]), texel(f.t1[0])), (f.x as i64, k));
                })
                .map(|f| (f.x, f.y))
                .collect();
            assert_eq!(got.len(), (m - 1 - pass.step).pow(2));
        }
    }
}
