//! [`InverseFactor`]'s solves, C⁻¹·V = 2^e·Zᵀ·(Z·V), against the host's f64 Cholesky, around
//! the chained launches' tile of 32 and for several right sides at once.

use super::cholesky::upload_scaled;
use super::solve::{InverseFactor, SIDES};
use crate::Gpu;
use crate::matrix::Matrix;
use crate::symmetric::SymmetricView;

/// An SPD matrix of order n: n on the diagonal, entries in [−0.5, 0.5) off it.
fn diagonally_dominant(n: usize) -> Matrix<f64> {
    Matrix::from_fn(n, n, |i, j| {
        if i == j {
            n as f64
        } else {
            ((i.max(j) * 7 + i.min(j) * 3) % 11) as f64 / 11.0 - 0.5
        }
    })
}

#[test]
fn the_solves_through_l_inverse_are_c_inverse_times_v() {
    let gpu = Gpu::new().unwrap();
    let Ok(kernels) = gpu.double_kernels("the test") else {
        eprintln!("skipped: no compute shaders");
        return;
    };
    for n in [1, 2, 31, 32, 33, 100] {
        let c = diagonally_dominant(n);
        let view = SymmetricView::lower(&c);
        // C' = 4·C (k = 1 on both sides), so C⁻¹·v = 4·C'⁻¹·v.
        let square = upload_scaled(&kernels, &view, &vec![1; n], false).unwrap();
        assert!(InverseFactor::runs(&kernels, n, 2));
        let f = InverseFactor::new(&kernels, square, n, 2).unwrap();
        let sides: Vec<Vec<f64>> = (0..SIDES + 1)
            .map(|s| (0..n).map(|i| ((i * 5 + s * 3) % 7) as f64 - 3.0).collect())
            .collect();
        let refs: Vec<&[f64]> = sides.iter().map(Vec::as_slice).collect();
        let solved = f.solve_each(&refs).unwrap();
        assert_eq!(solved.len(), sides.len());
        for (s, (v, x)) in sides.iter().zip(&solved).enumerate() {
            // C·x against v.
            let cx = c.mul_vec(x).unwrap();
            let r = cx
                .iter()
                .zip(v)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            let scale = v.iter().fold(0.0f64, |m, b| m.max(b.abs())).max(1.0);
            assert!(
                r <= 1e-13 * scale * n as f64,
                "n {n} side {s}: residual {r:e}"
            );
        }
    }
}
