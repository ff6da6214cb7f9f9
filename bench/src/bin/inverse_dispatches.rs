//! Compute dispatches (GL launches) of each inversion method at the orders given (default
//! 1024), counted with `symraster::gl::dispatches` around one inversion: the number the
//! column-at-a-time panels made large. `cargo run --release --example inverse_dispatches -- 4096`;
//! the panel flags of bench/src/panel_flags.rs (`--pivoting partial,tournament --chunk
//! 128,256 --block 64,128`) count the general inverses per combination (column `panel`).

use symraster::Gpu;
use symraster::inverse::{InverseMethod as Method, Inverter, Kind, bench};

use symraster_bench::panel_flags;

fn main() -> anyhow::Result<()> {
    let (sizes, panels) = panel_flags::parse(std::env::args().skip(1))?;
    let sizes = if sizes.is_empty() { vec![1024] } else { sizes };
    let gpu = Gpu::builder().vars(std::env::vars())?.build()?;
    let inverters = panels
        .iter()
        .map(|p| Ok((Inverter::new(&gpu)?.with_panel(*p), panel_flags::label(p))))
        .collect::<anyhow::Result<Vec<_>>>()?;
    println!("# {}", gpu.info().renderer);
    println!("kind,method,s,block,dispatches,panel");
    for &s in &sizes {
        let general = inverters.iter().flat_map(|(inv, label)| {
            [Method::Gje, Method::Lu].map(|m| (inv, label.as_str(), Kind::General, m))
        });
        let (inv0, _) = &inverters[0];
        let spd = [Method::Gje, Method::Cholesky].map(|m| (inv0, "-", Kind::Spd, m));
        for (inv, label, kind, method) in general.chain(spd) {
            let a = bench::test_matrix(kind, s);
            let before = symraster::gl::dispatches();
            symraster::inverse::invert(inv, &a, kind, method)?;
            let count = symraster::gl::dispatches() - before;
            println!(
                "{},{},{s},{},{count},{label}",
                kind.name(),
                method.name(),
                inv.block()
            );
        }
    }
    Ok(())
}
