//! [`InverseFactor`]'s solves, C⁻¹·V = 2^e·Zᵀ·(Z·V), against C on the host, around the
//! chained launches' tile of 32 and for several right sides at once; and where its chains
//! gave up, the same bit for bit.

use super::chain_tests::diagonally_dominant;
use super::cholesky::upload_scaled;
use super::solve::{InverseFactor, SIDES};
use crate::Gpu;
use crate::symmetric::SymmetricView;

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
        let f = InverseFactor::queue(&kernels, square, n, 2, [false; 2]).unwrap();
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

/// Chains given up before they start (the factor's, Z's, or both) are launched again, Z formed
/// anew after a factor that was, and `settle` says so: the solves queued behind them are
/// queued again and come out bit for bit as where the chains ran through.
#[test]
fn chains_that_gave_up_are_finished_and_say_so() {
    let gpu = Gpu::new().unwrap();
    let Ok(kernels) = gpu.double_kernels("the test") else {
        eprintln!("skipped: no compute shaders");
        return;
    };
    for n in [33, 130] {
        let c = diagonally_dominant(n);
        let view = SymmetricView::lower(&c);
        let v: Vec<f64> = (0..n).map(|i| (i % 5) as f64 - 2.0).collect();
        let solve = |given_up: [bool; 2]| {
            let square = upload_scaled(&kernels, &view, &vec![0; n], false).unwrap();
            let f = InverseFactor::queue(&kernels, square, n, 0, given_up).unwrap();
            let again = f.settle().unwrap();
            assert!(!f.settle().unwrap(), "settled once");
            (again, f.solve_each(&[&v]).unwrap().remove(0))
        };
        // (A software renderer may give up here too: that is the path under test.)
        let (_, through) = solve([false; 2]);
        for given_up in [[true, false], [false, true], [true, true]] {
            let (again, x) = solve(given_up);
            assert!(again, "n {n} {given_up:?}");
            assert_eq!(x, through, "n {n} {given_up:?}");
        }
    }
}
