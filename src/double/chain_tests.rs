//! The chained f64 launches (`chain.rs`) against launches that ran through: given up before
//! they start, or with work groups giving up after one poll, they finish the same, bit for bit.

use super::chain::{factor, inverse, spin_limit};
use super::kernels::CHAIN_TILE;
use crate::Gpu;
use crate::double::cholesky::{exponents_of, upload_scaled};
use crate::gl::{Buffer, BufferTarget, BufferUsage};
use crate::matrix::Matrix;
use crate::symmetric::SymmetricView;

/// An SPD matrix of order n: n on the diagonal, entries in [−0.5, 0.5) off it.
pub(super) fn diagonally_dominant(n: usize) -> Matrix<f64> {
    Matrix::from_fn(n, n, |i, j| {
        if i == j {
            n as f64
        } else {
            ((i.max(j) * 7 + i.min(j) * 3) % 11) as f64 / 11.0 - 0.5
        }
    })
}

/// The chain given up before it starts, or whose groups give up after one poll, is
/// launched again from the tiles already published until every tile is: the same factor
/// and kept inverses, bit for bit, as one launch that ran through, and that factor is
/// C's (L·Lᵀ against C).
#[test]
fn a_chain_that_gave_up_is_finished_by_further_launches() {
    let gpu = Gpu::new().unwrap();
    let Ok(kernels) = gpu.double_kernels("the test") else {
        eprintln!("skipped: no compute shaders");
        return;
    };
    for n in [33, 130] {
        let c = diagonally_dominant(n);
        let view = SymmetricView::lower(&c);
        let k = exponents_of(&view);
        let spins = spin_limit(&kernels, n).unwrap();
        let run = |spins: usize, given_up: bool| {
            let w = upload_scaled(&kernels, &view, &k, false).unwrap();
            let (inv, failed) = factor(&kernels, &w, n, spins, given_up, &|| {}).unwrap();
            assert_eq!(failed, None, "n {n}");
            let w = w.download().unwrap();
            let lower: Vec<u64> = (0..n * n)
                .filter(|e| e % n <= e / n)
                .map(|e| w[e].to_bits())
                .collect();
            let inv: Vec<u64> = inv
                .download()
                .unwrap()
                .iter()
                .map(|v| v.to_bits())
                .collect();
            (lower, inv)
        };
        let once = run(spins, false);
        assert_eq!(run(spins, true), once, "n {n}: given up at the start");
        assert_eq!(run(1, false), once, "n {n}: groups giving up after a poll");
        // L̃·L̃ᵀ = S·C·S (the unit diagonal's scaling): every entry within rounding.
        let l = |i: usize, j: usize| f64::from_bits(once.0[i * (i + 1) / 2 + j]);
        for i in 0..n {
            for j in 0..=i {
                let sum: f64 = (0..=j).map(|p| l(i, p) * l(j, p)).sum();
                let scaled = crate::scaling::times_power_of_two(c[(i, j)], k[i] + k[j]);
                assert!(
                    (sum - scaled).abs() < 1e-14,
                    "n {n}: (L·Lᵀ)({i}, {j}) = {sum} against {scaled}"
                );
            }
        }
    }
}

/// L⁻¹ by the chained triangular inverse, given up before it starts or with groups giving
/// up after one poll, is the same bit for bit as one launch that ran through, and
/// L·Z = I to rounding; above the diagonal tiles Z keeps what it held.
#[test]
fn the_chained_triangular_inverse_finishes_after_giving_up() {
    let gpu = Gpu::new().unwrap();
    let Ok(kernels) = gpu.double_kernels("the test") else {
        eprintln!("skipped: no compute shaders");
        return;
    };
    for n in [1, 32, 33, 130] {
        let c = diagonally_dominant(n);
        let view = SymmetricView::lower(&c);
        let k = exponents_of(&view);
        let spins = spin_limit(&kernels, n).unwrap();
        let w = upload_scaled(&kernels, &view, &k, false).unwrap();
        let (inv, failed) = factor(&kernels, &w, n, spins, false, &|| {}).unwrap();
        assert_eq!(failed, None, "n {n}");
        let run = |spins: usize, given_up: bool| {
            let z = Buffer::new(
                kernels.context(),
                BufferTarget::Storage,
                BufferUsage::Static,
                &vec![7.0f64; n * n],
            )
            .unwrap();
            inverse(&kernels, (&w, &inv, &z), n, spins, given_up).unwrap();
            z.download().unwrap()
        };
        let once = run(spins, false);
        let bits = |z: &[f64]| z.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&run(spins, true)), bits(&once), "n {n}: given up");
        assert_eq!(bits(&run(1, false)), bits(&once), "n {n}: one poll");
        let l = w.download().unwrap();
        for i in 0..n {
            for j in 0..n {
                if j > i {
                    // Zeros above the diagonal in the diagonal tiles, else untouched.
                    let kept = if i / CHAIN_TILE == j / CHAIN_TILE {
                        0.0
                    } else {
                        7.0
                    };
                    assert_eq!(once[i * n + j], kept, "n {n}: Z({i}, {j})");
                    continue;
                }
                let lz: f64 = (j..=i).map(|p| l[i * n + p] * once[p * n + j]).sum();
                let want = f64::from(u8::from(i == j));
                assert!((lz - want).abs() < 1e-13, "n {n}: (L·Z)({i}, {j}) = {lz}");
            }
        }
    }
}
