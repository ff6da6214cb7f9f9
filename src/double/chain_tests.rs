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

/// The chain's fold, look-ahead and polls change no bit: every shape gives the plain chain's
/// factor and kept inverses (orders around the tile of 32; A's upper triangle NaN, unread),
/// given up first or not, and the same failed pivot where C is not positive definite.
#[test]
fn the_chains_shapes_give_the_same_bits() {
    use super::kernels::{ChainShape, DoubleKernels};
    use crate::tiled::ChainPoll;
    let gpu = Gpu::new().unwrap();
    if !gpu.info().has_compute() {
        eprintln!("skipped: no compute shaders");
        return;
    }
    let shape = |fold, ahead, poll| ChainShape { fold, ahead, poll };
    // The first is the plain chain, the reference.
    let shapes = [
        shape(false, 0, ChainPoll::Atomic),
        shape(true, 0, ChainPoll::Atomic),
        shape(false, 32, ChainPoll::Load),
        shape(true, 1, ChainPoll::Load),
        shape(true, 5, ChainPoll::Atomic),
        ChainShape::of(&crate::Tuning::default()),
    ];
    let kernels: Vec<DoubleKernels> = shapes
        .iter()
        .map(|&s| DoubleKernels::new(gpu.context(), s).unwrap())
        .collect();
    for (n, broken) in [1, 2, 3, 31, 32, 33, 64, 65, 97, 130, 257]
        .into_iter()
        .map(|n| (n, None))
        .chain([(130, Some(70)), (97, Some(33)), (64, Some(0))])
    {
        let mut c = diagonally_dominant(n);
        if let Some(col) = broken {
            // A pivot that is not positive at column `col`.
            c[(col, col)] = -1.0;
        }
        let view = SymmetricView::lower(&c);
        let k = exponents_of(&view);
        let run = |kernels: &DoubleKernels, given_up: bool| {
            let spins = spin_limit(kernels, n).unwrap();
            let w = upload_scaled(kernels, &view, &k, false).unwrap();
            let (inv, failed) = factor(kernels, &w, n, spins, given_up, &|| {}).unwrap();
            let w = w.download().unwrap();
            let lower: Vec<u64> = (0..n * n)
                .filter(|e| e % n <= e / n)
                .map(|e| w[e].to_bits())
                .collect();
            // The kept inverses where the chain writes them: a diagonal tile's ni x ni.
            let tile = |e: usize| (n - e / CHAIN_TILE / CHAIN_TILE * CHAIN_TILE).min(CHAIN_TILE);
            let inv = inv.download().unwrap();
            let written: Vec<u64> = (0..n * CHAIN_TILE)
                .filter(|&e| e % CHAIN_TILE < tile(e))
                .map(|e| inv[e].to_bits())
                .collect();
            (lower, written, failed)
        };
        let plain = run(&kernels[0], false);
        assert_eq!(
            plain.2.map(|f| f.column),
            broken,
            "n {n}: the failed column"
        );
        for (shape, kernels) in shapes.iter().zip(&kernels).skip(1) {
            assert_eq!(run(kernels, false), plain, "n {n}, {shape:?}");
            assert_eq!(
                run(kernels, true),
                plain,
                "n {n}, {shape:?}: given up first"
            );
        }
    }
}
