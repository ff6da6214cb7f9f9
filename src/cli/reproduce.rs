//! `symraster reproduce`: the paper's Figs 8-9 and Tables 1-2 regenerated into a folder.

use anyhow::{Context as _, Result};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use symraster::Gpu;
use symraster::reproduce::{self, Config, Part, Sizes};

/// Arguments of `reproduce`.
#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// Sizes: `quick` (about 5 minutes on 2 cores with llvmpipe), `paper` (assembly to
    /// m = 2048, Cholesky to 4096, tables 512..2048) or a comma-separated list of m.
    #[arg(long, default_value = "quick", value_parser = parse_sizes)]
    sizes: Sizes,
    /// Run only one part.
    #[arg(long, value_enum)]
    only: Option<PartArg>,
    /// Output folder.
    #[arg(long, default_value = "figures")]
    out: PathBuf,
    /// Timed repetitions per point after a warm-up (the median is reported).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..))]
    repetitions: u64,
    /// CPU threads for the faer baseline (0: all).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum PartArg {
    Fig8,
    Fig9,
    Tables,
}

fn parse_sizes(text: &str) -> Result<Sizes, String> {
    Sizes::parse(text)
}

/// Runs the reproduction and lists the files written.
pub fn reproduce(args: ReproduceArgs) -> Result<()> {
    let gpu = Gpu::new()?;
    eprintln!(
        "reproducing on {} ({}); writing into {}",
        gpu.info().renderer,
        gpu.info().version,
        args.out.display()
    );
    let config = Config {
        sizes: args.sizes,
        only: args.only.map(|p| match p {
            PartArg::Fig8 => Part::Fig8,
            PartArg::Fig9 => Part::Fig9,
            PartArg::Tables => Part::Tables,
        }),
        out: args.out,
        repetitions: args.repetitions as usize,
        threads: args.threads,
        progress: !args.quiet,
    };
    let report = reproduce::run(&gpu, &config).context("reproducing the paper's results")?;
    for f in report.files {
        println!("wrote {}", f.display());
    }
    Ok(())
}
