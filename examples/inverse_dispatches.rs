//! Compute dispatches (GL launches) of each inversion method at the orders given (default
//! 1024), counted with `symraster::gl::dispatches` around one inversion: the number the
//! column-at-a-time panels made large. `cargo run --release --example inverse_dispatches -- 4096`.

use symraster::Gpu;
use symraster::inverse::{InverseMethod as Method, Inverter, Kind, bench};

fn main() -> anyhow::Result<()> {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let sizes = if sizes.is_empty() { vec![1024] } else { sizes };
    let gpu = Gpu::builder().vars(std::env::vars())?.build()?;
    let inv = Inverter::new(&gpu)?;
    println!("# {}", gpu.info().renderer);
    println!("kind,method,s,block,dispatches");
    for &s in &sizes {
        for (kind, method) in [
            (Kind::General, Method::Gje),
            (Kind::General, Method::Lu),
            (Kind::Spd, Method::Gje),
            (Kind::Spd, Method::Cholesky),
        ] {
            let a = bench::test_matrix(kind, s);
            let before = symraster::gl::dispatches();
            symraster::inverse::invert(&inv, &a, kind, method)?;
            let count = symraster::gl::dispatches() - before;
            println!(
                "{},{},{s},{},{count}",
                kind.name(),
                method.name(),
                inv.block()
            );
        }
    }
    Ok(())
}
