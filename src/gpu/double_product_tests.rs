//! C' = 2^(2a + f)·A·D²·Aᵀ assembled in f64 on the GPU from the residuals' copies of A and d
//! (`DeviceResidual::double_product_into`) and its f64 column sums: against C assembled on the
//! host in f64, around the tile widths, with zero weights, negative entries, odd exponents and
//! NaN in the triangle the product leaves.

use crate::Gpu;
use crate::gl::{Buffer, BufferTarget, BufferUsage};
use crate::matrix::Matrix;
use crate::scaling::times_power_of_two;

#[test]
fn c_in_f64_and_its_column_sums_match_the_host() {
    let gpu = Gpu::new().unwrap();
    let ctx = gpu.context();
    let kernels = gpu.double_kernels("the test").unwrap();
    let sums_kernel = gpu.least_squares_kernels().unwrap();
    for (m, n, (a_exp, d_exp)) in [
        (1, 3, (0, 0)),
        (2, 2, (-3, 1)),
        (31, 40, (5, -7)),
        (32, 64, (0, 1)),
        (33, 70, (-40, 3)),
        (130, 300, (2, -1)),
    ] {
        let a = Matrix::from_fn(m, n, |i, k| {
            (((i * 13 + k * 7) % 17) as f64 - 8.0) / 8.3 + if i == k { 8.0 } else { 0.0 }
        });
        let d: Vec<f64> = (0..n)
            .map(|k| match k % 5 {
                4 if k >= m => 0.0,
                r => 0.5 + r as f64 / 3.0,
            })
            .collect();
        let b = vec![1.0; n];
        let device = gpu.device_residual(&a, &d, &b).unwrap();
        let square = Buffer::new(
            ctx,
            BufferTarget::Storage,
            BufferUsage::Static,
            &vec![f64::NAN; m * m],
        )
        .unwrap();
        device
            .double_product_into(&kernels, &square, (a_exp, d_exp))
            .unwrap();
        let sums = Buffer::<f64>::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Stream, m)
            .unwrap();
        sums_kernel.column_sums(&square, m, m, (&sums, 0)).unwrap();
        let got = square.download().unwrap();
        let sums = sums.download().unwrap();
        let exponent = 2 * a_exp + d_exp;
        // C(i, j) and Σ_k |a_ik·d_k·a_jk| (by which the GPU's and the host's sums in any order
        // of n terms differ by at most 2·n·u each).
        let c = |i: usize, j: usize| {
            let terms = (0..n).map(|k| a[(i, k)] * d[k] * a[(j, k)]);
            let (v, size) = terms.fold((0.0, 0.0), |(v, s), t: f64| (v + t, s + t.abs()));
            (
                times_power_of_two(v, exponent),
                times_power_of_two(size, exponent),
            )
        };
        let bound = 4.0 * n as f64 * f64::EPSILON / 2.0;
        for j in 0..m {
            let (mut sum, mut slack) = (0.0, 0.0);
            for i in 0..m {
                let (want, size) = c(i, j);
                sum += want.abs();
                slack += bound * size;
                if i >= j {
                    assert!(
                        (got[i * m + j] - want).abs() <= bound * size,
                        "m {m} n {n} ({i}, {j}): {} against {want}",
                        got[i * m + j]
                    );
                }
            }
            let e = (sums[j] - sum).abs();
            assert!(
                e <= slack + 2.0 * m as f64 * f64::EPSILON * sum,
                "m {m} column {j}: {} against {sum}",
                sums[j]
            );
        }
    }
}
