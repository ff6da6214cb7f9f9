//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod batched;
pub mod blocked;
pub mod chain;
pub mod soft_exec;
pub mod soft_raster;

use std::collections::BTreeSet;
use symraster::draw::execution::Execution;
use symraster::draw::{Kernel, Pass};
use symraster::{Format, Gpu, Layout, Method, Options};

/// Options that run the paper's own passes in `format` (the library's default is
/// `Method::Auto`, which picks the fastest method the device has).
pub fn faithful(format: Format) -> Options {
    Options::new(format).method(Method::Faithful)
}

/// Unit roundoff of f32.
pub const U32: f64 = 5.960_464_477_539_063e-8; // 2^-24

/// The bound on the relative error of C = A·diag(d)·Aᵀ of depth `n` assembled in f32 from A ≥ 0
/// and d > 0, entry by entry and so in the Frobenius norm: (n + 4)·u, γ_{n+4} to first order
/// (a sum of n positive terms: at most n − 1 additions after each term's at most five
/// roundings, √d, A·√d on both sides and their product), whatever the order of the sums and
/// wherever products are fused into them.
pub fn assembly_bound(n: usize) -> f64 {
    (n + 4) as f64 * U32
}

/// The bounds on the factor's backward error ‖L·Lᵀ − C‖_F / ‖C‖_F and the solve's
/// ‖B − C·X‖_F / (‖C‖_F·‖X‖_F + ‖B‖_F) where C (`c`, symmetric, in f64) of depth `n` is
/// assembled in f32 ([`assembly_bound`]), then factored and solved: to first order the
/// Cholesky adds (m + 1)·u·tr(C)/‖C‖_F (|ΔC| ≤ γ_{m+1}·|L|·|Lᵀ|, and
/// ‖|L|·|Lᵀ|‖_F ≤ ‖L‖_F² = tr(C)), and each of the two triangular solves m·u·tr(C)/‖C‖_F
/// more (|ΔL| ≤ γ_m·|L|).
pub fn factor_and_solve_bounds(c: &symraster::Matrix<f64>, n: usize) -> (f64, f64) {
    let m = c.rows();
    let trace: f64 = (0..m).map(|i| c[(i, i)]).sum();
    let per_order = U32 * trace / c.frobenius_norm();
    let factor = assembly_bound(n) + (m + 1) as f64 * per_order;
    (factor, factor + 2.0 * m as f64 * per_order)
}

/// A GL context for this test's thread (one per test: contexts are per thread).
pub fn gpu() -> Gpu {
    match Gpu::new() {
        Ok(g) => g,
        Err(e) => panic!("these tests need an OpenGL device (Mesa's llvmpipe is enough): {e}"),
    }
}

/// The f64 widening of an f32 slice.
pub fn widen(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}

/// Texels a pass must write (full or packed), from Algorithms 3 and 5's index ranges and the layout.
pub fn intended(layout: Layout, pass: &Pass) -> BTreeSet<(usize, usize)> {
    let (m, k) = (layout.order(), pass.step);
    let lower = |from: usize| -> BTreeSet<_> {
        (from..m)
            .flat_map(|i| (from..=i).map(move |j| layout.texel_of(i, j)))
            .collect()
    };
    match pass.kernel {
        Kernel::ColumnScaling => (0..m).map(|x| (x, 0)).collect(),
        Kernel::OuterProductAddition => lower(0),
        Kernel::SquareRoot => [layout.texel_of(k, k)].into(),
        Kernel::Normalization => (k + 1..m).map(|i| layout.texel_of(i, k)).collect(),
        Kernel::OuterProductSubtraction => lower(k + 1),
        Kernel::Copy => unreachable!("copies are checked against the pass they copy"),
        other => unreachable!("{other:?} is a blocked kernel, checked in tests/blocked.rs"),
    }
}

/// Runs every pass with its target poisoned with NaN first: the texels that come out not NaN
/// must be exactly the intended ones. The texels the pass left alone are then restored, so the
/// run stays valid and its result can be checked at the end.
pub fn run_with_poisoned_targets(run: &mut Execution<'_>) {
    let layout = run.layout();
    let mut last_drawn: Option<Pass> = None;
    while let Some(pass) = run.next_pass().cloned() {
        let target = run.target_of(&pass).unwrap();
        let w = target.width();
        let before = target.download().unwrap();
        target.fill(f32::NAN).unwrap();
        run.step().unwrap();
        let target = if pass.swap_after {
            run.pair().source().texture()
        } else {
            run.target_of(&pass).unwrap()
        };
        let after = target.download().unwrap();
        let written: BTreeSet<(usize, usize)> = (0..after.len())
            .filter(|&p| !after[p].is_nan())
            .map(|p| (p % w, p / w))
            .collect();
        let drawn = if pass.kernel == Kernel::Copy {
            last_drawn.as_ref().expect("a copy follows a pass")
        } else {
            &pass
        };
        assert_eq!(
            written,
            intended(layout, drawn),
            "m={}: {} pass at step {} wrote the wrong texels",
            layout.order(),
            pass.kernel.name(),
            pass.step
        );
        let merged: Vec<f32> = after
            .iter()
            .zip(&before)
            .map(|(&a, &b)| if a.is_nan() { b } else { a })
            .collect();
        target.upload(&merged).unwrap();
        if pass.kernel != Kernel::Copy {
            last_drawn = Some(pass);
        }
    }
}

/// LAPACK's pivots of the unblocked LU with partial pivoting in f64 (largest magnitude,
/// smallest row on ties).
pub fn cpu_pivots(a: &symraster::Matrix<f64>) -> Vec<u32> {
    let n = a.rows();
    let mut m = a.clone();
    let mut piv = Vec::with_capacity(n);
    for p in 0..n {
        let r = (p..n).fold(p, |best, i| {
            if m[(i, p)].abs() > m[(best, p)].abs() {
                i
            } else {
                best
            }
        });
        piv.push(r as u32);
        for j in 0..n {
            let t = m[(p, j)];
            m[(p, j)] = m[(r, j)];
            m[(r, j)] = t;
        }
        for i in p + 1..n {
            let l = m[(i, p)] / m[(p, p)];
            m[(i, p)] = l;
            for j in p + 1..n {
                m[(i, j)] -= l * m[(p, j)];
            }
        }
    }
    piv
}

/// max |x − reference| / max |reference| (per problem of the batched tests).
pub fn max_relative_error(x: &[f64], reference: &[f64]) -> f64 {
    let diff = x
        .iter()
        .zip(reference)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    diff / reference
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()))
        .max(f64::MIN_POSITIVE)
}

/// Every workspace of a general inverse's pivoting poisoned: NaN values, candidate rows all
/// naming row 0, so a read of anything the sweep did not write shows in the inverse.
pub fn poison_pivot_work(w: &mut symraster::inverse::kernels::panel::PivotWork) {
    for buffer in [
        &mut w.row_block,
        &mut w.block_row,
        &mut w.spread,
        &mut w.square,
        &mut w.moved,
        &mut w.lu11,
        &mut w.unit_l,
        &mut w.stash,
    ] {
        let len = buffer.len();
        buffer.upload(&vec![f32::NAN; len]).unwrap();
    }
    for r in &mut w.rounds {
        let len = r.len();
        r.upload(&vec![0u32; len]).unwrap();
    }
}

/// ‖A·X − I‖_F / (‖A‖_F·‖X‖_F) in f64 (A as the GPU saw it, rounded to f32): the general
/// inverses' residual.
pub fn inverse_residual(a: &symraster::Matrix<f64>, x: &symraster::Matrix<f32>) -> f64 {
    use faer::Mat;
    let n = a.rows();
    let a32 = a.to_f32().to_f64();
    let x = x.to_f64();
    let am = Mat::from_fn(n, n, |i, j| a32[(i, j)]);
    let xm = Mat::from_fn(n, n, |i, j| x[(i, j)]);
    let r = &am * &xm - Mat::<f64>::identity(n, n);
    r.norm_l2() / (a32.frobenius_norm() * x.frobenius_norm())
}

/// [`inverse_residual`]'s bound at order n: a few n·u₃₂, at least 1e-6.
pub fn inverse_residual_bound(n: usize) -> f64 {
    (4.0 * n as f64 * U32).max(1e-6)
}

/// X's forward error against faer's f64 inverse of A, within 50·κ·u₃₂.
pub fn check_inverse_forward(a: &symraster::Matrix<f64>, x: &symraster::Matrix<f32>, what: &str) {
    use faer::Mat;
    use faer::linalg::solvers::DenseSolveCore;
    let m = Mat::from_fn(a.rows(), a.cols(), |i, j| a[(i, j)]);
    let w = m.partial_piv_lu().inverse();
    let want = symraster::Matrix::from_fn(a.rows(), a.cols(), |i, j| w[(i, j)]);
    let kappa = a.frobenius_norm() * want.frobenius_norm();
    let e = symraster::relative_error(&x.to_f64(), &want);
    let bound = (50.0 * kappa * U32).max(1e-5);
    assert!(e < bound, "{what}: error {e}, bound {bound}");
}

/// A general inverse X of A checked whole: every entry finite, [`inverse_residual`] within
/// [`inverse_residual_bound`] and [`check_inverse_forward`]'s forward error.
pub fn check_inverse(a: &symraster::Matrix<f64>, x: &symraster::Matrix<f32>, what: &str) {
    assert!(
        x.as_slice().iter().all(|v| v.is_finite()),
        "{what}: not finite"
    );
    let r = inverse_residual(a, x);
    let bound = inverse_residual_bound(a.rows());
    assert!(r < bound, "{what}: residual {r}, bound {bound}");
    check_inverse_forward(a, x, what);
}

/// ‖P·A − L·U‖ / ‖P·A‖ for the factors `f` (unit-lower L below the diagonal, U on and above)
/// of A with the row swaps `piv` (row p swapped with piv\[p\] at step p).
pub fn lu_error(a: &symraster::Matrix<f64>, f: &symraster::Matrix<f64>, piv: &[u32]) -> f64 {
    let n = a.rows();
    let mut pa = a.clone();
    for (p, &r) in piv.iter().enumerate() {
        for j in 0..n {
            let t = pa[(p, j)];
            pa[(p, j)] = pa[(r as usize, j)];
            pa[(r as usize, j)] = t;
        }
    }
    let lu = symraster::Matrix::from_fn(n, n, |i, j| {
        (0..=i.min(j))
            .map(|k| {
                let l = if k == i { 1.0 } else { f[(i, k)] };
                l * f[(k, j)]
            })
            .sum::<f64>()
    });
    symraster::relative_error(&lu, &pa)
}

/// A square matrix of entries in [−1/2, 1/2) from an xorshift stream seeded by `seed`.
pub fn random_square(n: usize, seed: u64) -> symraster::Matrix<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    symraster::Matrix::from_fn(n, n, |_, _| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    })
}

/// [`random_square`] with a small diagonal and a shifted superdiagonal: every elimination
/// step of a general inverse pivots.
pub fn pivoting_general(n: usize, seed: u64) -> symraster::Matrix<f64> {
    let mut a = random_square(n, seed);
    for i in 0..n {
        a[(i, i)] *= 1e-3;
        a[(i, (i + 1) % n)] += 2.0;
    }
    a
}

/// Both general inverses (Gauss-Jordan and LU) of `a` through the public entry: residual
/// within [`inverse_residual_bound`] and forward error within [`check_inverse_forward`]'s.
pub fn check_general_inverses(
    inv: &symraster::inverse::Inverter,
    a: &symraster::Matrix<f64>,
    what: &str,
) {
    use symraster::inverse::{self, InverseMethod, Kind};
    for method in [InverseMethod::Gje, InverseMethod::Lu] {
        let x = inverse::invert(inv, &a.to_f32(), Kind::General, method).unwrap();
        let r = inverse_residual(a, &x);
        let bound = inverse_residual_bound(a.rows());
        assert!(r < bound, "{what} {method:?}: residual {r}, bound {bound}");
        check_inverse_forward(a, &x, &format!("{what} {method:?}"));
    }
}

/// The Gauss-Jordan inverse of `a` in place with blocks of `block` and every pivoting
/// workspace poisoned first ([`poison_pivot_work`]), its columns put back.
pub fn gje_with_poisoned_work(
    inv: &symraster::inverse::Inverter,
    a: &symraster::Matrix<f64>,
    block: usize,
) -> symraster::Matrix<f32> {
    gje_with_poisoned_work_and_pivots(inv, a, block).0
}

/// [`gje_with_poisoned_work`] and the sweep's pivots (LAPACK's, 0-based).
pub fn gje_with_poisoned_work_and_pivots(
    inv: &symraster::inverse::Inverter,
    a: &symraster::Matrix<f64>,
    block: usize,
) -> (symraster::Matrix<f32>, Vec<u32>) {
    use symraster::inverse::kernels::panel::PivotWork;
    use symraster::inverse::{self, DeviceSquare, gje};
    let n = a.rows();
    let d = DeviceSquare::upload(inv, &a.to_f32()).unwrap();
    let mut w = PivotWork::new(inv, n, block).unwrap();
    poison_pivot_work(&mut w);
    let tol = inverse::pivot_tolerance(&a.to_f32());
    inv.reset_status().unwrap();
    gje::invert_in_place(inv, &d, &w, tol).unwrap();
    inv.check_status(tol).unwrap();
    let mut x = d.download().unwrap();
    let piv = w.piv.download_range(0, n).unwrap();
    gje::unscramble_columns(&mut x, &piv);
    (x, piv)
}

/// The LU factorization of `a` in place with blocks of `block` (every pivoting workspace
/// poisoned first where `poison`, [`poison_pivot_work`]): its pivots (LAPACK's, 0-based) and
/// the packed factors.
pub fn lu_factor(
    inv: &symraster::inverse::Inverter,
    a: &symraster::Matrix<f64>,
    block: usize,
    poison: bool,
) -> (Vec<u32>, symraster::Matrix<f32>) {
    use symraster::inverse::kernels::panel::PivotWork;
    use symraster::inverse::{DeviceSquare, lu};
    let n = a.rows();
    let d = DeviceSquare::upload(inv, &a.to_f32()).unwrap();
    let mut w = PivotWork::new(inv, n, block).unwrap();
    if poison {
        poison_pivot_work(&mut w);
    }
    inv.reset_status().unwrap();
    lu::factor_in_place(inv, &d, &w, 0.0).unwrap();
    inv.check_status(0.0).unwrap();
    (w.piv.download_range(0, n).unwrap(), d.download().unwrap())
}

/// `got` (pivots, packed LU factors of `a`) chooses `want`'s pivots, its factors agree to
/// rounding (10⁻⁴ of the largest entry) and ‖P·A − L·U‖ is within f32's.
pub fn assert_same_lu(
    a: &symraster::Matrix<f64>,
    want: &(Vec<u32>, symraster::Matrix<f32>),
    got: &(Vec<u32>, symraster::Matrix<f32>),
    what: &str,
) {
    let ((piv, f), (got_piv, got)) = (want, got);
    assert_eq!(got_piv, piv, "{what}");
    let scale = f.as_slice().iter().fold(1.0f32, |m, v| m.max(v.abs()));
    let diff = got
        .as_slice()
        .iter()
        .zip(f.as_slice())
        .fold(0.0f32, |m, (x, y)| m.max((x - y).abs()));
    assert!(diff <= 1e-4 * scale, "{what}: factors differ by {diff}");
    let e = lu_error(a, &got.to_f64(), got_piv);
    assert!(e < 1e-5, "{what}: ‖PA − LU‖ {e}");
}

/// Q·diag(eigenvalues)·Qᵀ with Q orthogonal (modified Gram-Schmidt of a random matrix).
pub fn spd_with_eigenvalues(eigenvalues: &[f64], seed: u64) -> symraster::Matrix<f64> {
    use rand::Rng;
    let m = eigenvalues.len();
    let mut r = symraster::problems::rng(seed);
    let mut q: Vec<Vec<f64>> = (0..m)
        .map(|_| (0..m).map(|_| r.random::<f64>() - 0.5).collect())
        .collect();
    for j in 0..m {
        for k in 0..j {
            let (done, rest) = q.split_at_mut(j);
            let (qk, qj) = (&done[k], &mut rest[0]);
            let dot: f64 = qj.iter().zip(qk).map(|(a, b)| a * b).sum();
            for (a, b) in qj.iter_mut().zip(qk) {
                *a -= dot * b;
            }
        }
        let norm = q[j].iter().map(|v| v * v).sum::<f64>().sqrt();
        q[j].iter_mut().for_each(|v| *v /= norm);
    }
    let c = symraster::Matrix::from_fn(m, m, |i, j| {
        (0..m).map(|k| q[k][i] * eigenvalues[k] * q[k][j]).sum()
    });
    // Exactly symmetric.
    symraster::Matrix::from_fn(m, m, |i, j| if i >= j { c[(i, j)] } else { c[(j, i)] })
}

/// `c`'s `triangle` in row-major storage of stride m + 3, NaN everywhere else (what a
/// `SymmetricView` must read without touching the rest).
pub fn stored<T: Copy + symraster::Element>(
    c: &symraster::Matrix<T>,
    triangle: symraster::Triangle,
    nan: T,
) -> (Vec<T>, usize) {
    let (m, stride) = (c.rows(), c.rows() + 3);
    let mut data = vec![nan; m * stride];
    for i in 0..m {
        for j in 0..m {
            let kept = match triangle {
                symraster::Triangle::Lower => j <= i,
                symraster::Triangle::Upper => j >= i,
            };
            if kept {
                data[i * stride + j] = c[(i, j)];
            }
        }
    }
    (data, stride)
}
