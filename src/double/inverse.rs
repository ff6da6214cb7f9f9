//! C⁻¹ of a symmetric positive definite C in f64 on the GPU (LAPACK's dpotri after dpotrf):
//! L̃⁻¹ from the diagonal blocks' inverses the factor left (after a chained factor of a small
//! order by one chained launch, glsl/double/trtri_chain.comp, else by halves), then
//! C̃⁻¹ = L̃⁻ᵀ·L̃⁻¹ by halves and its residual ‖I − C̃·C̃⁻¹‖_F (probed) as f64 products, C̃ = S·C·S scaled to a
//! unit diagonal (C⁻¹ = S·C̃⁻¹·S, exact).

use super::cholesky::{
    DeviceFactor, DoubleCholeskyOptions, SharedRows, exponents_of, factor, op, two_sided,
    upload_scaled, view,
};
use super::kernels::DoubleKernels;
use crate::error::{NumericalError, Result};
use crate::gl::{Buffer, BufferTarget, BufferUsage};
use crate::inverse::kernels::double::DoubleProduct;
use crate::matrix::Matrix;
use crate::phases::Phases;
use crate::symmetric::SymmetricView;

/// C⁻¹ and ‖I − C̃·C̃⁻¹‖_F of the equilibrated C̃ (the residual the callers judge).
pub(crate) fn spd_inverse(
    kernels: &DoubleKernels,
    c: &SymmetricView<'_>,
    options: DoubleCholeskyOptions,
) -> Result<(Matrix<f64>, f64)> {
    use rayon::prelude::*;
    let n = c.order();
    let ctx = kernels.context();
    let storage = |len: usize| {
        Buffer::<f64>::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Static, len.max(1))
    };
    let mut phases = Phases::named("SPD inverse in f64", std::time::Instant::now());
    let k = exponents_of(c);
    // C̃ up (its stored triangle's rows read where they lie) and made whole on the GPU for
    // the residual's product; the factor works on a copy.
    let scaled = upload_scaled(kernels, c, &k, true)?;
    let w = storage(n * n)?;
    w.copy_from(&scaled)?;
    let f = factor(kernels, w, n, k, options, &|| {})?;
    phases.mark_finished(ctx, "C̃ up, factored");
    let whole = view(0, n, n, n);
    // Z = L̃⁻¹ (zero above its diagonal, so that the products may read whole squares).
    let z = storage(n * n)?;
    kernels.copy(op(&z, whole), None)?;
    match f.chained.filter(|_| n <= TRIANGULAR_CHAIN_UP_TO) {
        Some(spins) => super::chain::inverse(kernels, (&f.w, &f.inv, &z), n, spins, false)?,
        None => {
            let t = storage(n * n.div_ceil(2))?;
            triangular_inverse(kernels, &f, &z, &t, n, 0, n)?;
        }
    }
    phases.mark_finished(ctx, "L̃⁻¹");
    // X̃ = Zᵀ·Z over L̃'s storage (L̃ is read no more), then its residual.
    lower_product(kernels, &z, &f.w, n, PRODUCT_LEAF.max(f.nb), 0, n)?;
    let residual = probed_residual(kernels, &scaled, &f.w, n)?;
    phases.mark_finished(ctx, "L̃⁻ᵀ·L̃⁻¹, residual");
    // C⁻¹ = S·X̃·S as it comes back (X̃ is whole on the GPU), and the first entry out of
    // range, searched for only where one was seen.
    let (x, finite) = whole_scaled(&f.w, n, &f.k)?;
    let bad = match finite {
        true => None,
        false => x
            .par_chunks(n.max(1))
            .enumerate()
            .find_map_first(|(i, row)| {
                row.iter()
                    .position(|v| !v.is_finite())
                    .map(|j| (i, j, row[j]))
            }),
    };
    if let Some((row, col, value)) = bad {
        return Err(NumericalError::ResultOutOfRange {
            what: "A⁻¹",
            row,
            col,
            value,
        }
        .into());
    }
    phases.mark_finished(ctx, "read back, unscaled");
    Ok((Matrix::from_row_major(n, n, x)?, residual))
}

/// The largest order whose L̃⁻¹ after a chained factor is one chained launch: quicker than
/// the halves below it, as quick at it, slower past it, where the halves' products are large
/// (`figures/h200/experiments/frontdoor/double_inverse_chain_ab.csv`).
pub(super) const TRIANGULAR_CHAIN_UP_TO: usize = 4096;

/// The largest diagonal block of Zᵀ·Z formed as one product of whole squares (the zeros
/// above Z's diagonal included): the halves' launches, not the products' work, bound it at
/// these orders.
const PRODUCT_LEAF: usize = 256;

/// S·X̃·S, S = diag(2^k), of X̃ held whole in `square` (order n, both triangles), read back in
/// pieces straight into the result (scaled on the way, no host copy of the whole); with
/// whether every entry is finite.
fn whole_scaled(square: &Buffer<f64>, n: usize, k: &[i32]) -> Result<(Vec<f64>, bool)> {
    use std::sync::atomic::{AtomicBool, Ordering};
    let mut x = crate::memory::with_capacity::<f64>(n * n, || {
        format!("the inverse of order {n} in float64")
    })?;
    let out = SharedRows::new(x.spare_capacity_mut());
    let scale = two_sided(k);
    let finite = AtomicBool::new(true);
    square.read_pieces(&|first, values| {
        let mut ok = true;
        // The piece row by row: entries e.. lie in row e / n from column e % n.
        let (mut e, mut rest) = (first, values);
        while !rest.is_empty() {
            let (i, j0) = (e / n, e % n);
            let (run, tail) = rest.split_at((n - j0).min(rest.len()));
            for (j, &v) in (j0..).zip(run) {
                let v = scale(v, i, j);
                ok &= v.is_finite();
                // SAFETY: entry i·n + j comes once (or again with the same value), within the
                // n·n values `x` has room for, which outlive the read.
                unsafe { (*out.at(i * n + j)).write(v) };
            }
            e += run.len();
            rest = tail;
        }
        if !ok {
            finite.store(false, Ordering::Relaxed);
        }
    })?;
    // SAFETY: read_pieces returned Ok, so every entry of the square came: all n·n values.
    unsafe { x.set_len(n * n) };
    Ok((x, finite.into_inner()))
}

/// The number of random ±1 columns V the residual is probed with.
const PROBES: usize = 4;

/// ‖I − C̃·X̃‖_F estimated as ‖(I − C̃·X̃)·V‖_F/√[`PROBES`] for V of random signs
/// (E‖R·v‖² = ‖R‖_F² for a column v of independent ±1): two thin products, where the whole
/// residual would cost as much as X̃ itself.
fn probed_residual(
    kernels: &DoubleKernels,
    c: &Buffer<f64>,
    x: &Buffer<f64>,
    n: usize,
) -> Result<f64> {
    let ctx = kernels.context();
    // Signs from a multiplicative hash of the entry's index (fixed, so results repeat).
    let signs: Vec<f64> = (0..n * PROBES)
        .map(|e| {
            let h = (e as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            if h >> 63 == 0 { 1.0 } else { -1.0 }
        })
        .collect();
    let v = Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Static, &signs)?;
    let thin = || {
        Buffer::<f64>::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Static, n * PROBES)
    };
    let (y, r) = (thin()?, thin()?);
    let (whole, probes) = (view(0, n, n, n), view(0, PROBES, n, PROBES));
    kernels.dgemm(DoubleProduct::new(
        op(&y, probes),
        op(x, whole),
        op(&v, probes),
    ))?;
    let sum = kernels.dgemm_sums(
        DoubleProduct::new(op(&r, probes), op(c, whole), op(&y, probes))
            .alpha(-1.0)
            .plus(1.0, op(&v, probes)),
    )?;
    Ok((sum.max(0.0) / PROBES as f64).sqrt())
}

/// W's order-size square at (r0, r0) ← Zᵀ·Z of Z's (lower triangular) square there, by halves
/// (LAPACK's dlauum): [[Z11ᵀZ11 + Z21ᵀZ21, Z21ᵀZ22], [Z22ᵀZ21, Z22ᵀZ22]], the block below the
/// diagonal formed and mirrored above it, so that no product is formed from the zeros of
/// both operands' triangles at every level; a square of order `leaf` or less is one product.
fn lower_product(
    kernels: &DoubleKernels,
    z: &Buffer<f64>,
    w: &Buffer<f64>,
    n: usize,
    leaf: usize,
    r0: usize,
    size: usize,
) -> Result<()> {
    let diagonal = view(r0 * (n + 1), n, size, size);
    if size <= leaf {
        return kernels.dgemm(DoubleProduct::new(
            op(w, diagonal),
            op(z, diagonal.t()),
            op(z, diagonal),
        ));
    }
    let (h, rest) = halves(size, leaf);
    lower_product(kernels, z, w, n, leaf, r0, h)?;
    let (w11, z21) = (
        view(r0 * (n + 1), n, h, h),
        view((r0 + h) * n + r0, n, rest, h),
    );
    kernels
        .dgemm(DoubleProduct::new(op(w, w11), op(z, z21.t()), op(z, z21)).plus(1.0, op(w, w11)))?;
    let z22 = view((r0 + h) * (n + 1), n, rest, rest);
    kernels.dgemm(DoubleProduct::new(op(w, z21), op(z, z22.t()), op(z, z21)))?;
    kernels.copy(
        op(w, view(r0 * n + r0 + h, n, h, rest)),
        Some(op(w, z21.t())),
    )?;
    lower_product(kernels, z, w, n, leaf, r0 + h, rest)
}

/// Z's rows and columns r0..r0 + size ← their block of L̃⁻¹, by halves at a multiple of the
/// factor's blocks: [[X11, 0], [X21, X22]] with X21 = −X22·(L̃21·X11), so that the products
/// are as large as the halves; a single block is the inverse the factor kept.
fn triangular_inverse(
    kernels: &DoubleKernels,
    f: &DeviceFactor,
    z: &Buffer<f64>,
    t: &Buffer<f64>,
    n: usize,
    r0: usize,
    size: usize,
) -> Result<()> {
    let nb = f.nb;
    if size <= nb {
        // L̃_bb⁻¹ is the transpose of what the factor kept.
        let kept = crate::tiled::View {
            offset: r0 * nb,
            rs: 1,
            cs: nb,
            rows: size,
            cols: size,
        };
        return kernels.copy(
            op(z, view(r0 * (n + 1), n, size, size)),
            Some(op(&f.inv, kept)),
        );
    }
    let (h, rest) = halves(size, nb);
    triangular_inverse(kernels, f, z, t, n, r0, h)?;
    triangular_inverse(kernels, f, z, t, n, r0 + h, rest)?;
    let tv = view(0, h, rest, h);
    kernels.dgemm(DoubleProduct::new(
        op(t, tv),
        op(&f.w, view((r0 + h) * n + r0, n, rest, h)),
        op(z, view(r0 * (n + 1), n, h, h)),
    ))?;
    kernels.dgemm(
        DoubleProduct::new(
            op(z, view((r0 + h) * n + r0, n, rest, h)),
            op(z, view((r0 + h) * (n + 1), n, rest, rest)),
            op(t, tv),
        )
        .alpha(-1.0),
    )
}

/// `size` cut in two at a multiple of the factor's block `nb` (about half of it), so that
/// every diagonal block of the factor lies whole in one half.
fn halves(size: usize, nb: usize) -> (usize, usize) {
    let h = (size / nb / 2).max(1) * nb;
    (h, size - h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Gpu;
    use crate::symmetric::Triangle;

    /// The inverse read back whole, in pieces that cut rows, is symmetric bit for bit and
    /// C's: ‖I − C·X‖ to rounding against C's condition (graded, so that the scaling's
    /// exponents differ; NaN in the triangle not stored).
    #[test]
    fn the_inverse_read_back_whole_is_symmetric_and_cs() {
        let gpu = Gpu::new().unwrap();
        let Ok(kernels) = gpu.double_kernels("the test") else {
            eprintln!("skipped: no compute shaders");
            return;
        };
        for n in [1, 2, 17, 100, 300] {
            let value = |i: usize, j: usize| {
                let (i, j) = (i.max(j), i.min(j));
                let g = (1.0 + (i % 5) as f64) * (1.0 + (j % 5) as f64);
                if i == j {
                    4.0 * n as f64 * g
                } else {
                    ((i * 7 + j * 3) % 11) as f64 / 11.0 * g.sqrt()
                }
            };
            let data: Vec<f64> = (0..n * n)
                .map(|e| {
                    let (i, j) = (e / n, e % n);
                    if j <= i { value(i, j) } else { f64::NAN }
                })
                .collect();
            let c = SymmetricView::new(&data, n, n, Triangle::Lower).unwrap();
            let (x, residual) =
                spd_inverse(&kernels, &c, DoubleCholeskyOptions::default()).unwrap();
            assert!(residual < 1e-12, "n {n}: residual {residual:e}");
            for i in 0..n {
                for j in 0..i {
                    assert_eq!(
                        x[(i, j)].to_bits(),
                        x[(j, i)].to_bits(),
                        "n {n}: ({i}, {j})"
                    );
                }
                for j in 0..n {
                    let cx: f64 = (0..n).map(|k| value(i, k) * x[(k, j)]).sum();
                    let want = f64::from(u8::from(i == j));
                    assert!((cx - want).abs() < 1e-12, "n {n}: (C·X)({i}, {j}) = {cx}");
                }
            }
        }
    }
}
