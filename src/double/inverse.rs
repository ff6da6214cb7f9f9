//! C⁻¹ of a symmetric positive definite C in f64 on the GPU (LAPACK's dpotri after dpotrf):
//! L̃⁻¹ by halves from the diagonal blocks' inverses the factor left, then
//! C̃⁻¹ = L̃⁻ᵀ·L̃⁻¹ and its residual ‖I − C̃·C̃⁻¹‖_F as f64 products, C̃ = S·C·S scaled to a
//! unit diagonal (C⁻¹ = S·C̃⁻¹·S, exact).

use super::cholesky::{
    DeviceFactor, DoubleCholeskyOptions, Phases, exponents_of, factor, op, upload_scaled, view,
};
use super::kernels::DoubleKernels;
use crate::error::{NumericalError, Result};
use crate::gl::{Buffer, BufferTarget, BufferUsage};
use crate::inverse::kernels::double::DoubleProduct;
use crate::matrix::Matrix;
use crate::scaling::times_power_of_two;
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
    let mut phases = Phases::new(kernels, "SPD inverse in f64");
    let k = exponents_of(c);
    let scaled = upload_scaled(kernels, c, &k, true)?;
    let w = storage(n * n)?;
    w.copy_from(&scaled)?;
    let f = factor(kernels, w, n, k, options)?;
    phases.mark("C̃ up, factored");
    let whole = view(0, n, n, n);
    // Z = L̃⁻¹ (zero above its diagonal, so that the products may read whole squares).
    let z = storage(n * n)?;
    kernels.copy(op(&z, whole), None)?;
    let t = storage(n * n.div_ceil(2))?;
    triangular_inverse(kernels, &f, &z, &t, n, 0, n)?;
    phases.mark("L̃⁻¹");
    // X̃ = Zᵀ·Z over L̃'s storage, then R = I − C̃·X̃ over Z's.
    kernels.dgemm(DoubleProduct::new(
        op(&f.w, whole),
        op(&z, whole.t()),
        op(&z, whole),
    ))?;
    let r2 = kernels.dgemm_sums(
        DoubleProduct::new(op(&z, whole), op(&scaled, whole), op(&f.w, whole))
            .alpha(-1.0)
            .plus_identity(1.0),
    )?;
    phases.mark("L̃⁻ᵀ·L̃⁻¹, residual");
    let mut x = f.w.download()?;
    phases.mark("read back");
    let k = &f.k;
    x.par_chunks_mut(n.max(1)).enumerate().for_each(|(i, row)| {
        for (j, v) in row.iter_mut().enumerate() {
            *v = times_power_of_two(*v, k[i] + k[j]);
        }
    });
    if let Some(e) = x.iter().position(|v| !v.is_finite()) {
        return Err(NumericalError::ResultOutOfRange {
            what: "A⁻¹",
            row: e / n,
            col: e % n,
            value: x[e],
        }
        .into());
    }
    phases.mark("unscaled");
    Ok((Matrix::from_row_major(n, n, x)?, r2.max(0.0).sqrt()))
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
    let h = (size / nb / 2).max(1) * nb;
    let rest = size - h;
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
