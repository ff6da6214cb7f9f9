mod common;
use common::widen;
use symraster::{Format, Method, Options, problems, reference, relative_error, Matrix};

fn product(m: usize, n: usize, seed: u64) -> (Matrix<f32>, Vec<f32>) {
    let mut rng = problems::rng(seed);
    let a = problems::uniform_matrix(&mut rng, m, n);
    let d: Vec<f32> = (0..n).map(|j| 0.5 + (j % 3) as f32).collect();
    (a, d)
}

#[test]
fn repro() {
    let gpu = common::gpu();
    let k = gpu.tiled_kernels().unwrap();
    eprintln!("{:?} max tex {} texbuf {}", k.limits(), gpu.info().max_texture_size, symraster::gl::BufferTexture::max_texels(gpu.context()));
    for (m, n) in [(1, 70_001), (5, 300_000), (17, 262_147)] {
        let (a, d) = product(m, n, 1);
        let c_ref = reference::assemble(&a.to_f64(), &widen(&d));
        for method in [Method::Tiled] {
            for f in [Format::Full, Format::Packed] {
                let t = std::time::Instant::now();
                let c = gpu.assemble(&a, &d, Options::new(f).method(method));
                match c {
                    Ok(c) => eprintln!("{m} {n} {method} {f:?} err {:e} {:?}", relative_error(&c.lower_triangle().to_f64(), &c_ref.lower_triangle()), t.elapsed()),
                    Err(e) => eprintln!("{m} {n} {method} {f:?} error {e}"),
                }
            }
        }
    }
}
