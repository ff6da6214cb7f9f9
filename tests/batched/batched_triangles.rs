//! Only triangles cross the bus: the batched Cholesky sends each C's lower triangle packed by
//! rows and gets L's back packed, unpacked into full storage on the host. The factor must not
//! depend on how C is given (f32 lent in place or transposed, f64, chunks, staged transfers cut
//! anywhere): the same bits, zeros (+0) above the diagonal, a failed problem all NaN with its
//! INFO, garbage (NaN) above C's diagonal never read.

use crate::common;

use symraster::batched::device::{Inputs, Poison, run};
use symraster::batched::plan::{Job, Plan};
use symraster::batched::{self, BatchOptions, BatchRef, MAX_ORDER};
use symraster::problems::{rng, well_conditioned_spd};
use symraster::{Batch, Gpu, Tuning, reference};

/// Orders around the kernels' group widths and pair splits, past shared memory (129) and the
/// largest the plan takes.
const ORDERS: [usize; 15] = [
    1, 2, 7, 8, 9, 16, 17, 31, 32, 33, 64, 65, 128, 129, MAX_ORDER,
];

/// Problem `FAILS` has C(n−1, n−1) = −1: INFO n.
const FAILS: usize = 2;

/// `count` SPD problems of order n in f64 (problem [`FAILS`] not positive definite) with NaN
/// and 1e30 above each diagonal, and the same problems stored transposed (the triangle above).
fn batch(seed: u64, count: usize, n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut lower = Vec::with_capacity(count * n * n);
    let mut upper = vec![0.0; count * n * n];
    for p in 0..count {
        let mut c = well_conditioned_spd(&mut rng(seed + p as u64), n).to_f64();
        if p == FAILS {
            c[(n - 1, n - 1)] = -1.0;
        }
        for i in 0..n {
            for j in i + 1..n {
                c[(i, j)] = if (i + j) % 2 == 0 { f64::NAN } else { 1e30 };
            }
        }
        for i in 0..n {
            for j in 0..n {
                upper[p * n * n + j * n + i] = c[(i, j)];
            }
        }
        lower.extend_from_slice(c.as_slice());
    }
    (lower, upper)
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Every transfer staged, in chunks of 256 KiB (pieces and chunks cut rows anywhere).
fn staged_gpu() -> Gpu {
    Gpu::builder()
        .tuning(Tuning {
            staged_from_bytes: Some(1024),
            staging_chunk_bytes: Some(256 << 10),
            ..Tuning::default()
        })
        .build()
        .unwrap()
}

/// L's structure and accuracy: INFO, zeros (+0) above the diagonal, a failed problem's n² NaN
/// (0x7FC00000, as the kernel writes them), the others near the f64 factor of the f32 C.
fn check_factor(l: &[f32], info: &[i32], c: &[f64], n: usize, fails: impl Fn(usize) -> bool) {
    for (p, (l, &status)) in l.chunks(n * n).zip(info).enumerate() {
        if fails(p) {
            assert_eq!(status, n as i32, "n {n} p {p}");
            assert!(l.iter().all(|v| v.to_bits() == 0x7FC0_0000), "n {n} p {p}");
            continue;
        }
        assert_eq!(status, 0, "n {n} p {p}");
        let c32 = symraster::Matrix::from_fn(n, n, |i, j| {
            f64::from(c[p * n * n + i.max(j) * n + i.min(j)] as f32)
        });
        let l_ref = reference::cholesky(&c32).unwrap();
        let got = symraster::Matrix::from_fn(n, n, |i, j| f64::from(l[i * n + j]));
        let e = symraster::relative_error(&got, &l_ref);
        assert!(e < 1e-6 * (n as f64).max(4.0), "n {n} p {p}: {e:.2e}");
        for i in 0..n {
            for j in i + 1..n {
                assert_eq!(l[i * n + j].to_bits(), 0, "n {n} p {p} ({i}, {j})");
            }
        }
    }
}

#[test]
fn the_packed_factor_is_the_same_whatever_way_c_comes() {
    let gpu = common::gpu();
    let kernels = gpu
        .batched()
        .internal_kernels(&BatchOptions::default())
        .unwrap();
    let staged = staged_gpu();
    let staged = staged.batched();
    for n in ORDERS {
        // A last group short of its problems at the small orders.
        let count = if n <= 33 { 7 } else { 3 };
        let (lower, upper) = batch(100 + n as u64, count, n);
        let c32: Vec<f32> = lower.iter().map(|&v| v as f32).collect();
        let t32: Vec<f32> = upper.iter().map(|&v| v as f32).collect();
        let c = Batch::new(count, n, n, c32.clone()).unwrap();
        let f = batched::cholesky(&kernels, &c, &BatchOptions::default(), Poison::Nan).unwrap();
        assert_eq!(f.l.shape(), (count, n, n));
        check_factor(f.l.as_slice(), &f.info, &lower, n, |p| p == FAILS);
        let want = bits(f.l.as_slice());
        // Transposed storage (each upper triangle read, gathered on the host), f64, staged.
        let transposed = BatchRef::from_strides(count, n, n, [n * n, 1, n], &t32).unwrap();
        let g = batched::cholesky(&kernels, &transposed, &BatchOptions::default(), Poison::Nan)
            .unwrap();
        assert_eq!(bits(g.l.as_slice()), want, "transposed, n {n}");
        let wide = Batch::new(count, n, n, lower.clone()).unwrap();
        let g = gpu
            .batched()
            .cholesky(&wide, BatchOptions::default())
            .unwrap();
        assert_eq!(bits(g.l.as_slice()), want, "f64, n {n}");
        assert_eq!(g.info, f.info);
        let g = staged.cholesky(&c, BatchOptions::default()).unwrap();
        assert_eq!(bits(g.l.as_slice()), want, "staged, n {n}");
        // Chunks of two problems.
        let mut plan = Plan::new(Job::Cholesky, n, 0, 0, kernels.limits()).unwrap();
        plan.chunk = 2;
        let inputs = Inputs {
            c: Some(&c32),
            ..Inputs::default()
        };
        let out = run(&kernels, &plan, &inputs, count, Poison::Nan).unwrap();
        assert_eq!(bits(&out.matrix), want, "chunks, n {n}");
        assert_eq!(out.info, f.info);
    }
}

#[test]
fn the_packed_assembly_has_zeros_above_the_diagonal() {
    let gpu = common::gpu();
    let kernels = gpu
        .batched()
        .internal_kernels(&BatchOptions::default())
        .unwrap();
    for n in [1, 7, 8, 9, 33] {
        let (count, k) = (5, n + 3);
        let values = symraster::problems::uniform_vector(&mut rng(n as u64), count * (n * k + k));
        let (a, d) = values.split_at(count * n * k);
        let a = Batch::new(count, n, k, a.to_vec()).unwrap();
        let d: Vec<f32> = d.iter().map(|&v| v + 0.5).collect();
        let d = Batch::vectors(count, k, d).unwrap();
        let c = batched::assemble(&kernels, &a, &d, Poison::Nan).unwrap();
        let staged = staged_gpu()
            .batched()
            .assemble(&a, &d, BatchOptions::default())
            .unwrap();
        assert_eq!(bits(staged.as_slice()), bits(c.as_slice()), "n {n}");
        for p in 0..count {
            let m = c.matrix(p);
            for i in 0..n {
                for j in 0..n {
                    assert!(j <= i || m[(i, j)].to_bits() == 0, "n {n} p {p} ({i}, {j})");
                    assert!(j > i || m[(i, j)].is_finite(), "n {n} p {p} ({i}, {j})");
                }
            }
        }
    }
}

/// A batch whose triangles pass one 32 MiB staging chunk each way (n = 8: 144 bytes a
/// problem), in one buffer and in uneven chunks of problems: the same bits, every failed
/// problem (every 7919th) reported.
#[test]
fn a_batch_past_one_staging_chunk_comes_back_whole() {
    let gpu = common::gpu();
    let kernels = gpu
        .batched()
        .internal_kernels(&BatchOptions::default())
        .unwrap();
    let (n, count) = (8, 240_000);
    assert!(count * n * (n + 1) / 2 * 4 > 32 << 20);
    let fails = |p: usize| p % 7919 == 5;
    // Diagonally dominant C, entries from a cheap generator; NaN above the diagonal.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f64 / (1u64 << 24) as f64 - 0.5
    };
    let mut c = vec![f64::NAN; count * n * n];
    for p in 0..count {
        for i in 0..n {
            for j in 0..i {
                c[p * n * n + i * n + j] = next();
            }
            c[p * n * n + i * n + i] = if fails(p) && i == n - 1 {
                -1.0
            } else {
                n as f64
            };
        }
    }
    let c32: Vec<f32> = c.iter().map(|&v| v as f32).collect();
    let batch = Batch::new(count, n, n, c32.clone()).unwrap();
    let f = gpu
        .batched()
        .cholesky(&batch, BatchOptions::default())
        .unwrap();
    // The reference for a sample, the structure everywhere.
    let sample: Vec<usize> = (0..count).step_by(997).chain([5, count - 1]).collect();
    let mut l = Vec::new();
    let (mut info, mut picked) = (Vec::new(), Vec::new());
    for &p in &sample {
        l.extend_from_slice(f.l.problem(p));
        info.push(f.info[p]);
        picked.extend_from_slice(&c[p * n * n..(p + 1) * n * n]);
    }
    check_factor(&l, &info, &picked, n, |q| fails(sample[q]));
    for p in 0..count {
        assert_eq!(f.info[p] != 0, fails(p), "p {p}");
        let l = f.l.problem(p);
        for i in 0..n {
            for j in i + 1..n {
                let bits = l[i * n + j].to_bits();
                assert_eq!(
                    bits,
                    if fails(p) { 0x7FC0_0000 } else { 0 },
                    "p {p} ({i}, {j})"
                );
            }
        }
    }
    let mut plan = Plan::new(Job::Cholesky, n, 0, 0, kernels.limits()).unwrap();
    plan.chunk = 70_001;
    let inputs = Inputs {
        c: Some(&c32),
        ..Inputs::default()
    };
    let out = run(&kernels, &plan, &inputs, count, Poison::No).unwrap();
    assert!(out.matrix == f.l.as_slice() || bits(&out.matrix) == bits(f.l.as_slice()));
    assert_eq!(out.info, f.info);
}
