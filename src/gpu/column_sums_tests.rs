//! The factor of A·D²·Aᵀ's column sums of |C| (`Gpu::factor_product_tiled`, read with the
//! factor's status): against C assembled on the host, around the tile widths, with zero
//! weights and negative entries.

use crate::Gpu;
use crate::layout::Format;
use crate::matrix::Matrix;

#[test]
fn the_column_sums_of_c_come_back_with_its_factor() {
    let gpu = Gpu::new().unwrap();
    for (m, n) in [(1, 3), (2, 2), (31, 40), (32, 64), (33, 70), (130, 200)] {
        let a = Matrix::from_fn(m, n, |i, k| {
            (((i * 13 + k * 7) % 17) as f32 - 8.0) / 8.0 + if i == k { 8.0 } else { 0.0 }
        });
        // Some weights zero: their columns of A add nothing.
        let d: Vec<f32> = (0..n)
            .map(|k| {
                if k % 5 == 4 && k >= m {
                    0.0
                } else {
                    0.5 + (k % 3) as f32
                }
            })
            .collect();
        let c = Matrix::from_fn(m, m, |i, j| {
            (0..n)
                .map(|k| f64::from(a[(i, k)]) * f64::from(d[k]) * f64::from(a[(j, k)]))
                .sum::<f64>()
        });
        let (_, _, sums) = gpu.factor_product_tiled(&a, &d, Format::Full).unwrap();
        let sums = sums.expect("full storage in one buffer");
        assert_eq!(sums.len(), m);
        for (j, &s) in sums.iter().enumerate() {
            let want: f64 = (0..m).map(|i| c[(i, j)].abs()).sum();
            let e = (f64::from(s) - want).abs() / want;
            assert!(e < 1e-5, "m {m} column {j}: {s} against {want} ({e:.1e})");
        }
        // RFP keeps the estimate: no sums.
        let (_, _, packed) = gpu.factor_product_tiled(&a, &d, Format::Packed).unwrap();
        assert!(packed.is_none(), "m {m}");
    }
}
