//! GPU-resident objects stay tied to their own context: factors and matrices kept on the GPU by
//! one `Gpu` give the right answer after a second `Gpu` was created on the same thread, when the
//! two are used in turn, and after their own `Gpu` is dropped (the context lives as long as the
//! objects made from it).

use symraster::gl::{Buffer, BufferTarget, BufferUsage};
use symraster::internal::GpuInternals;
use symraster::problems::{rng, well_conditioned_spd};
use symraster::{Format, Gpu, Matrix};

/// ‖C·x − b‖∞ / (‖C‖∞‖x‖∞ + ‖b‖∞) in f64.
fn backward_error(c: &Matrix<f32>, x: &[f32], b: &[f32]) -> f64 {
    let m = c.rows();
    let (mut r, mut cn, mut xn, mut bn) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for i in 0..m {
        let mut s = -(b[i] as f64);
        let mut row = 0.0;
        for j in 0..m {
            s += c[(i, j)] as f64 * x[j] as f64;
            row += (c[(i, j)] as f64).abs();
        }
        r = r.max(s.abs());
        cn = cn.max(row);
        xn = xn.max((x[i] as f64).abs());
        bn = bn.max((b[i] as f64).abs());
    }
    r / (cn * xn + bn)
}

fn problem(seed: u64, m: usize) -> (Matrix<f32>, Vec<f32>) {
    let mut g = rng(seed);
    let c = well_conditioned_spd(&mut g, m);
    let b = (0..m).map(|i| 1.0 + (i % 7) as f32).collect();
    (c, b)
}

#[test]
fn factors_kept_on_the_gpu_answer_right_beside_another_gpu_and_after_theirs_is_gone() {
    let first = Gpu::new().unwrap();
    if !first.info().has_compute() {
        return;
    }
    let (c1, b1) = problem(1, 70);
    let (c2, b2) = problem(2, 45);
    for format in [Format::Full, Format::Packed] {
        let first = Gpu::new().unwrap();
        let f1 = first
            .cholesky(
                &c1,
                symraster::Options::new(format).method(symraster::Method::Tiled),
            )
            .unwrap();
        // A second context on this thread, with objects of its own in the same GL names.
        let second = Gpu::new().unwrap();
        let f2 = second
            .cholesky(
                &c2,
                symraster::Options::new(format).method(symraster::Method::Tiled),
            )
            .unwrap();
        for _ in 0..2 {
            let x1 = f1.solve(&b1).unwrap();
            assert!(
                backward_error(&c1, &x1, &b1) < 1e-6,
                "{format:?}: first factor"
            );
            let x2 = f2.solve(&b2).unwrap();
            assert!(
                backward_error(&c2, &x2, &b2) < 1e-6,
                "{format:?}: second factor"
            );
        }
        // The first Gpu gone, its factor still solves on its own context.
        drop(first);
        let x1 = f1.solve(&b1).unwrap();
        assert!(
            backward_error(&c1, &x1, &b1) < 1e-6,
            "{format:?}: after drop"
        );
        let l1 = symraster::Cholesky::from_l(f1.l().unwrap()).unwrap();
        let x1 = l1.solve(&b1).unwrap();
        assert!(
            backward_error(&c1, &x1, &b1) < 1e-6,
            "{format:?}: downloaded"
        );
        // And the second still works after the first's objects are dropped.
        drop(f1);
        let x2 = f2.solve(&b2).unwrap();
        assert!(
            backward_error(&c2, &x2, &b2) < 1e-6,
            "{format:?}: second after drop"
        );
    }
}

#[test]
fn buffers_of_two_contexts_keep_their_own_contents() {
    let a = Gpu::new().unwrap();
    let ba = Buffer::new(
        a.context(),
        BufferTarget::Storage,
        BufferUsage::Static,
        &[1.0f32; 8],
    )
    .unwrap();
    let b = Gpu::new().unwrap();
    let bb = Buffer::new(
        b.context(),
        BufferTarget::Storage,
        BufferUsage::Static,
        &[2.0f32; 8],
    )
    .unwrap();
    assert!(!a.context().same_as(b.context()));
    assert_eq!(ba.download().unwrap(), vec![1.0f32; 8]);
    assert_eq!(bb.download().unwrap(), vec![2.0f32; 8]);
    drop(a);
    assert_eq!(ba.download().unwrap(), vec![1.0f32; 8]);
    drop(bb);
    assert_eq!(ba.download().unwrap(), vec![1.0f32; 8]);
}
