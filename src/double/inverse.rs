//! C⁻¹ of a symmetric positive definite C in f64 on the GPU (LAPACK's dpotri after dpotrf):
//! L̃⁻¹ by block rows from the diagonal blocks' inverses the factor left, then
//! C̃⁻¹ = L̃⁻ᵀ·L̃⁻¹ and its residual ‖I − C̃·C̃⁻¹‖_F as f64 products, C̃ = S·C·S scaled to a
//! unit diagonal (C⁻¹ = S·C̃⁻¹·S, exact).

use super::cholesky::{DoubleCholeskyOptions, exponents_of, factor, op, upload_scaled, view};
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
    let k = exponents_of(c);
    let scaled = upload_scaled(kernels, c, &k, true)?;
    let w = storage(n * n)?;
    w.copy_from(&scaled)?;
    let f = factor(kernels, w, n, k, options)?;
    let (nb, whole) = (f.nb, view(0, n, n, n));
    // Z = L̃⁻¹ by block rows b: Z_bb = L̃_bb⁻¹, Z_b,<b = −L̃_bb⁻¹·(L̃_b,<b·Z_<b,<b), with Z
    // zero above its diagonal so that the products may read whole squares.
    let z = storage(n * n)?;
    kernels.copy(op(&z, whole), None)?;
    let t = storage(nb * n)?;
    for r0 in (0..n).step_by(nb) {
        let kb = nb.min(n - r0);
        // L̃_bb⁻¹ is the transpose of what the factor kept.
        let inv_bb = crate::tiled::View {
            offset: r0 * nb,
            rs: 1,
            cs: nb,
            rows: kb,
            cols: kb,
        };
        kernels.copy(
            op(&z, view(r0 * (n + 1), n, kb, kb)),
            Some(op(&f.inv, inv_bb)),
        )?;
        if r0 == 0 {
            continue;
        }
        let tv = view(0, r0, kb, r0);
        kernels.dgemm(DoubleProduct::new(
            op(&t, tv),
            op(&f.w, view(r0 * n, n, kb, r0)),
            op(&z, view(0, n, r0, r0)),
        ))?;
        kernels.dgemm(
            DoubleProduct::new(
                op(&z, view(r0 * n, n, kb, r0)),
                op(&f.inv, inv_bb),
                op(&t, tv),
            )
            .alpha(-1.0),
        )?;
    }
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
    let mut x = f.w.download()?;
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
    Ok((Matrix::from_row_major(n, n, x)?, r2.max(0.0).sqrt()))
}
