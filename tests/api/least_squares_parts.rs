//! Weighted least squares through the tiled method with C and L split over several storage
//! buffers (the per-buffer limit lowered through the tuning): the pivot check gathers L's diagonal from every buffer, and the
//! solution is the one-buffer solve's.

use symraster::least_squares::{SolveOptions, relative_error_vec, solve_normal_equations_faer};
use symraster::problems::random_least_squares;
use symraster::{Format, Gpu, Method, Tuning};

#[test]
fn split_storage_solves_as_one_buffer_does() {
    let tuning = Tuning {
        max_buffer_bytes: Some(120 * 1024),
        ..Tuning::default()
    };
    let gpu = Gpu::builder().tuning(tuning).build().unwrap();
    if !gpu.info().has_compute() {
        eprintln!("skipped: no compute shaders on {}", gpu.info().renderer);
        return;
    }
    let m = 301;
    let p = random_least_squares(7, m);
    let x_cpu = solve_normal_equations_faer(&p.a, &p.d, &p.b).unwrap();
    for format in [Format::Full, Format::Packed] {
        let mut options = SolveOptions::new().format(format);
        options.gpu = options.gpu.method(Method::Tiled);
        let s = gpu.least_squares(&p.a, &p.d, &p.b, options).unwrap();
        assert!(s.converged && s.fallback.is_none(), "{format}: {s:?}");
        let e = relative_error_vec(&s.x, &x_cpu);
        assert!(e < 1e-10, "{format}: error {e:.2e} against the f64 solve");
    }
    // The split is real: C of order 301 in f32 needs 3 or more 120 KiB buffers.
    let a32 = p.a.map(|v| v as f32);
    let d32: Vec<f32> = p.d.iter().map(|&v| v as f32).collect();
    let f = gpu
        .factor_product(
            &a32,
            &d32,
            symraster::Options::new(Format::Full).method(symraster::Method::Tiled),
        )
        .unwrap();
    assert!(
        f.gpu_parts().unwrap() >= 3,
        "{} parts",
        f.gpu_parts().unwrap()
    );
}
