//! Batches lent as `BatchRef`s: strided and transposed stacks read in place (gathered on the
//! GPU for f32, on the host for f64), f32 inputs divided by their powers of two on the GPU
//! bit for bit as the host's rounding of the same values, outputs NaN-poisoned before the
//! launches.

use crate::common;

use symraster::batched::device::{Inputs, Poison, Prepare, run};
use symraster::batched::plan::{Job, Plan};
use symraster::batched::{self, BatchOptions};
use symraster::{Batch, BatchRef, BatchSolution};

/// Values uniform in [−1, 1), exactly representable in f32.
fn signed(seed: u64, len: usize) -> Vec<f32> {
    let mut rng = symraster::problems::rng(seed);
    symraster::problems::uniform_vector(&mut rng, len)
        .iter()
        .map(|&v| 2.0 * v - 1.0)
        .collect()
}

/// Bitwise equal solutions (NaN where either is NaN), INFO equal.
fn assert_same(got: &BatchSolution, want: &BatchSolution, what: &str) {
    assert_eq!(got.info, want.info, "{what}");
    for (p, (x, y)) in got.x.as_slice().iter().zip(want.x.as_slice()).enumerate() {
        assert!(
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
            "{what}: entry {p}: {x:e} against {y:e}"
        );
    }
}

/// SPD problems of order n, problem p scaled by 2^scales[p], with NaN above the diagonal and
/// subnormal entries below it in some problems (the division must round them as the host does).
fn spd_problems(n: usize, scales: &[i32]) -> (Vec<f32>, Vec<f32>) {
    let count = scales.len();
    let r = signed(11, count * n * n);
    let mut c = vec![0.0f32; count * n * n];
    for (p, &s) in scales.iter().enumerate() {
        let f = 2f32.powi(s / 2) * 2f32.powi(s - s / 2);
        for i in 0..n {
            for j in 0..n {
                let v = if j > i {
                    f32::NAN
                } else if i == j {
                    (n as f32 + r[p * n * n + i * n + j].abs()) * f
                } else if p % 3 == 2 {
                    // Subnormal in the input, or after the division.
                    f32::from_bits(0x0000_1235 + (i * n + j) as u32 * 0x0101)
                } else if p % 3 == 1 {
                    r[p * n * n + i * n + j] * f * 2f32.powi(-100)
                } else {
                    r[p * n * n + i * n + j] * f
                };
                c[p * n * n + i * n + j] = v;
            }
        }
    }
    let b: Vec<f32> = signed(12, count * n)
        .iter()
        .enumerate()
        .map(|(i, &v)| v * 2f32.powi(scales[(i / n + 3) % count].clamp(-120, 120)))
        .collect();
    (c, b)
}

#[test]
fn f32_inputs_divided_on_the_gpu_match_the_hosts_rounding_bit_for_bit() {
    let gpu = common::gpu();
    let kernels = common::batched::kernels(&gpu);
    let options = BatchOptions::default();
    let n = 5;
    let scales = [0, 60, -60, 100, -100, 3, -3, 120, -120, 1];
    let (c, b) = spd_problems(n, &scales);
    let count = scales.len();
    let c32 = Batch::new(count, n, n, c.clone()).unwrap();
    let b32 = Batch::vectors(count, n, b.clone()).unwrap();
    let widen = |v: &[f32]| v.iter().map(|&x| f64::from(x)).collect::<Vec<f64>>();
    let c64 = Batch::new(count, n, n, widen(&c)).unwrap();
    let b64 = Batch::vectors(count, n, widen(&b)).unwrap();
    let gpu_side = batched::spd_solve(&kernels, &c32, &b32, &options, Poison::Nan).unwrap();
    let host_side = batched::spd_solve(&kernels, &c64, &b64, &options, Poison::Nan).unwrap();
    assert_same(&gpu_side, &host_side, "SPD solve");
    assert!(gpu_side.info.iter().filter(|&&i| i == 0).count() >= count - 1);
    // Each solution against the problem's own scale: C·x = b within f32's accuracy.
    for p in 0..count {
        if gpu_side.info[p] != 0 {
            continue;
        }
        let x = gpu_side.x.problem(p);
        let cp = c64.problem(p);
        let bp = b64.problem(p);
        let norm = bp.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for i in 0..n {
            let row: f64 = (0..n)
                .map(|j| if j <= i { cp[i * n + j] } else { cp[j * n + i] } * x[j])
                .sum();
            assert!(
                (row - bp[i]).abs() <= 1e-4 * norm.max(f64::MIN_POSITIVE),
                "p {p} row {i}"
            );
        }
    }
}

/// X (B, k, n) in a buffer with gaps between problems, read as A = Xᵀ (B, n, k) in place.
struct Stacked {
    count: usize,
    n: usize,
    k: usize,
    x: Vec<f32>,
    d: Vec<f32>,
    b: Vec<f32>,
}

impl Stacked {
    const GAP: usize = 7;

    fn new(count: usize, n: usize, k: usize) -> Self {
        let mut x = signed(21, count * (k * n + Self::GAP));
        // Problem 1 on another scale, problem 2 far below float32's normal range.
        for (p, s) in [(1, 2f32.powi(90)), (2, 2f32.powi(-110))] {
            let start = p * (k * n + Self::GAP);
            x[start..start + k * n].iter_mut().for_each(|v| *v *= s);
        }
        let d = signed(22, count * (k + 3))
            .iter()
            .map(|v| v.abs() + 0.5)
            .collect();
        let b = signed(23, count * (k + 3));
        Self {
            count,
            n,
            k,
            x,
            d,
            b,
        }
    }

    fn views(&self) -> (BatchRef<'_>, BatchRef<'_>, BatchRef<'_>) {
        let (n, k) = (self.n, self.k);
        let x =
            BatchRef::from_strides(self.count, k, n, [k * n + Self::GAP, n, 1], &self.x).unwrap();
        let d = BatchRef::from_strides(self.count, k, 1, [k + 3, 1, 1], &self.d).unwrap();
        let b = BatchRef::from_strides(self.count, k, 1, [k + 3, 1, 1], &self.b).unwrap();
        (x.transpose(), d, b)
    }
}

#[test]
fn least_squares_reads_a_transposed_stack_with_gaps_in_place() {
    let gpu = common::gpu();
    let kernels = common::batched::kernels(&gpu);
    let options = BatchOptions::default();
    let stacked = Stacked::new(6, 4, 9);
    let (a, d, b) = stacked.views();
    assert_eq!(a.shape(), (6, 4, 9));
    assert!(!a.is_compact() && !d.is_compact());
    let lent = batched::least_squares(&kernels, &a, &d, &b, &options, Poison::Nan).unwrap();
    let (ac, dc, bc) = (
        a.to_batch().unwrap(),
        d.to_batch().unwrap(),
        b.to_batch().unwrap(),
    );
    assert!(ac.view().is_compact());
    let copied = batched::least_squares(&kernels, &ac, &dc, &bc, &options, Poison::Nan).unwrap();
    assert_same(&lent, &copied, "f32 lent against copied");
    assert_eq!(lent.info, vec![0; 6]);
    // f64: gathered and rounded on the host, the same kernels' inputs.
    let widen = |v: &[f32]| v.iter().map(|&x| f64::from(x)).collect::<Vec<f64>>();
    let (x64, d64, b64) = (widen(&stacked.x), widen(&stacked.d), widen(&stacked.b));
    let (n, k, count) = (stacked.n, stacked.k, stacked.count);
    let a64 = BatchRef::from_strides(count, k, n, [k * n + Stacked::GAP, n, 1], &x64)
        .unwrap()
        .transpose();
    let d64 = BatchRef::from_strides(count, k, 1, [k + 3, 1, 1], &d64).unwrap();
    let b64 = BatchRef::from_strides(count, k, 1, [k + 3, 1, 1], &b64).unwrap();
    let wide = batched::least_squares(&kernels, &a64, &d64, &b64, &options, Poison::Nan).unwrap();
    assert_same(&wide, &lent, "f64 lent against f32 lent");
}

#[test]
fn a_gathered_input_split_over_chunks_and_launches_gives_the_same_results() {
    let gpu = common::gpu();
    let kernels = common::batched::kernels(&gpu);
    let stacked = Stacked::new(7, 3, 6);
    let (a, d, b) = stacked.views();
    let (ac, dc, bc) = (
        a.to_batch().unwrap(),
        d.to_batch().unwrap(),
        b.to_batch().unwrap(),
    );
    let (n, k) = (stacked.n, stacked.k);
    let plan = Plan::new(Job::LeastSquares, n, k, 1, kernels.limits()).unwrap();
    let compact = Inputs {
        a: Some(ac.as_slice()),
        d: Some(dc.as_slice()),
        b: Some(bc.as_slice()),
        ..Inputs::default()
    };
    let whole = run(&kernels, &plan, &compact, stacked.count, Poison::Nan).unwrap();
    let exponents = vec![0i32; stacked.count];
    let gathered = Inputs {
        a: Some(a.as_slice()),
        d: Some(d.as_slice()),
        b: Some(b.as_slice()),
        prepare: [
            Some(Prepare {
                strides: a.strides(),
                exponents: Some(&exponents),
                scan: None,
            }),
            Some(Prepare {
                strides: d.strides(),
                exponents: None,
                scan: None,
            }),
            Some(Prepare {
                strides: b.strides(),
                exponents: None,
                scan: None,
            }),
            None,
        ],
        ..Inputs::default()
    };
    let mut split = plan;
    (split.chunk, split.launch) = (3, 1);
    let parts = run(&kernels, &split, &gathered, stacked.count, Poison::Nan).unwrap();
    assert_eq!(parts.info, whole.info);
    for (x, y) in parts.x.iter().zip(&whole.x) {
        assert!(x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()));
    }
}

#[test]
fn cholesky_of_a_transposed_view_reads_each_upper_triangle() {
    let gpu = common::gpu();
    let kernels = common::batched::kernels(&gpu);
    let n = 6;
    let (c, _) = spd_problems(n, &[0, 40, -40, 2, 5]);
    let count = 5;
    let lower = Batch::new(count, n, n, c.clone()).unwrap();
    // Each problem stored transposed: its upper triangle holds C, NaN below.
    let mut upper = vec![0.0f32; c.len()];
    for p in 0..count {
        for i in 0..n {
            for j in 0..n {
                upper[p * n * n + j * n + i] = c[p * n * n + i * n + j];
            }
        }
    }
    let view = BatchRef::new(count, n, n, &upper).unwrap().transpose();
    let want = batched::cholesky(&kernels, &lower, &BatchOptions::default(), Poison::Nan).unwrap();
    let got = batched::cholesky(&kernels, &view, &BatchOptions::default(), Poison::Nan).unwrap();
    assert_eq!(got.info, want.info);
    for (x, y) in got.l.as_slice().iter().zip(want.l.as_slice()) {
        assert!(x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()));
    }
    assert!(want.l.as_slice().iter().all(|v| v.is_finite()));
}

#[test]
fn cholesky_into_the_callers_room_writes_every_value_as_cholesky_returns_them() {
    let gpu = common::gpu();
    let kernels = common::batched::kernels(&gpu);
    let n = 7;
    let (mut c, _) = spd_problems(n, &[0, 40, -40, 2, 5]);
    let count = 5;
    // Problem 3 not positive definite at column 2 (its lower triangle's (2, 2) made negative).
    c[3 * n * n + 2 * n + 2] = -1.0;
    let stack = Batch::new(count, n, n, c).unwrap();
    let options = BatchOptions::default();
    let want = batched::cholesky(&kernels, &stack, &options, Poison::Nan).unwrap();
    assert_eq!(want.info[3], 3);
    // Room holding garbage: every value must be replaced.
    let mut room = vec![std::mem::MaybeUninit::new(7.5f32); count * n * n];
    let info = batched::cholesky_into(&kernels, &stack, &mut room, &options, Poison::Nan).unwrap();
    assert_eq!(info, want.info);
    for (x, y) in room.iter().zip(want.l.as_slice()) {
        // SAFETY: initialized above, overwritten by the call.
        let x = unsafe { x.assume_init() };
        assert!(x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()));
    }
    // Room of the wrong length: a shape error naming both, and no value left that looks like
    // a result.
    let mut short = vec![std::mem::MaybeUninit::new(7.5f32); count * n * n - 1];
    let e = batched::cholesky_into(&kernels, &stack, &mut short, &options, Poison::Nan)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("must hold 245 values") && e.contains("holds 244"),
        "{e}"
    );
    assert!(short.iter().all(|v| unsafe { v.assume_init() }.is_nan()));
    // A bad value in C: its error, and the room NaN.
    let mut bad = stack.as_slice().to_vec();
    bad[n * n + n] = f32::INFINITY;
    let bad = Batch::new(count, n, n, bad).unwrap();
    let e = batched::cholesky_into(&kernels, &bad, &mut room, &options, Poison::Nan).unwrap_err();
    assert!(e.to_string().contains("problem 1"), "{e}");
    assert!(room.iter().all(|v| unsafe { v.assume_init() }.is_nan()));
}

#[test]
fn views_check_their_extent_and_name_bad_values_where_the_problem_has_them() {
    let data = [1.0f32; 10];
    let e = BatchRef::from_strides(2, 2, 2, [5, 2, 1], &data[..8]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "shape mismatch: a batch of 2 matrices of 2x2 at strides [5, 2, 1] reaches 9 values, \
         but 8 were given"
    );
    let v = BatchRef::from_strides(2, 2, 2, [5, 2, 1], &data).unwrap();
    assert!(!v.is_compact() && BatchRef::new(2, 2, 2, &data[..8]).unwrap().is_compact());
    assert_eq!(v.transpose().strides(), [5, 1, 2]);
    assert_eq!(v.to_batch().unwrap().as_slice().len(), 8);
    // X (B, k, n) with a NaN at problem 1, observation 2, unknown 0: A's row 0, column 2.
    let gpu = common::gpu();
    let (count, k, n) = (2, 3, 2);
    let mut x = signed(5, count * k * n);
    x[k * n + 2 * n] = f32::NAN;
    let a = BatchRef::new(count, k, n, &x).unwrap().transpose();
    let w = vec![1.0f32; count * k];
    let wv = BatchRef::vectors(count, k, &w).unwrap();
    let e = gpu
        .batched()
        .least_squares(&a, &wv, &wv, BatchOptions::default())
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "input A holds a non-finite value (NaN) at problem 1, row 0, column 2 (0-based)"
    );
}

/// The GPU's division of f32 values by powers of two (`glsl/batched/prepare.comp`) gives the
/// host's f64 product rounded once to f32, bit for bit: normal and subnormal inputs and
/// results, ties to even, signed zeros, gathered from a transposed layout.
#[test]
fn the_gpu_division_rounds_as_the_host_does() {
    use symraster::batched::prepare::prepared;
    let gpu = common::gpu();
    let kernels = common::batched::kernels(&gpu);
    let (count, rows, cols) = (64, 8, 8);
    let mut rng = symraster::problems::rng(31);
    let bits = symraster::problems::uniform_vector(&mut rng, count * rows * cols);
    let values: Vec<f32> = bits
        .iter()
        .enumerate()
        .map(|(i, &u)| {
            let raw = (u * 4294967296.0) as u32;
            match i % 4 {
                // Subnormal inputs.
                0 => f32::from_bits(raw & 0x807f_ffff),
                // Ties when shifted: a few low bits exactly half.
                1 => f32::from_bits(
                    (raw & 0x8000_0000) | 0x0000_0180 | (raw & 0x7f80_0000 & 0x0f80_0000),
                ),
                2 if raw.is_multiple_of(7) => -0.0,
                _ => {
                    let v = f32::from_bits(raw);
                    if v.is_finite() { v } else { 1.5 }
                }
            }
        })
        .collect();
    let exponents: Vec<i32> = (0..count as i32).map(|p| (p * 37) % 301 - 150).collect();
    // Stored transposed: problem p's (i, j) at p·64 + j·8 + i.
    let prepare = Prepare {
        strides: [rows * cols, 1, rows],
        exponents: Some(&exponents),
        scan: None,
    };
    let plan = Plan::new(Job::Cholesky, rows, 0, 0, kernels.limits()).unwrap();
    let buffer = prepared(
        &kernels,
        &prepare,
        &values,
        &(0..count),
        (rows, cols),
        plan.launch,
    )
    .unwrap();
    let got = buffer.download().unwrap();
    for p in 0..count {
        for i in 0..rows {
            for j in 0..cols {
                let v = values[p * rows * cols + j * rows + i];
                let e = exponents[p];
                let want = (f64::from(v) * 2f64.powi(-e)) as f32;
                let have = got[p * rows * cols + i * cols + j];
                assert_eq!(
                    have.to_bits(),
                    want.to_bits(),
                    "p {p} ({i}, {j}): {v:e} / 2^{e}: {have:e} against {want:e}"
                );
            }
        }
    }
}
