//! `symraster reproduce`: the paper's Figs 8-9 and Tables 1-2 regenerated into a folder;
//! `symraster tables` is `reproduce --only tables`.

use crate::reproduce::{self, Config, Part, Sizes};
use anyhow::{Context as _, Result, bail};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use symraster::internal::GpuInternals;
use symraster::{Error, Format, Gpu, InputError, Method, Options};

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
    /// Output folder (git-ignored by default, so a run leaves the committed figures alone).
    #[arg(long, default_value = "results")]
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
    /// For `scripts/bench stability`: the throughput part also times the tiled solves (1 and
    /// 16 right-hand sides, full storage) after each size's Cholesky, and writes each tiled
    /// timing of that part into this CSV (op,m,format,ms), so the kernels are timed in the
    /// process state a reproduction leaves.
    #[arg(long, hide = true)]
    stability: Option<PathBuf>,
}

/// Arguments of `tables`: `reproduce --only tables` with its sizes and folder.
#[derive(Args, Debug)]
pub struct TablesArgs {
    /// `quick`, `paper` (512, 1024, 1536, 2048) or a comma-separated list of m, as for
    /// `reproduce` (the tables' sizes of each).
    #[arg(long, default_value = "quick", value_parser = parse_sizes)]
    sizes: Sizes,
    /// Folder for table1.{md,csv} and table2.{md,csv}.
    #[arg(long, default_value = "results")]
    out: PathBuf,
}

impl From<TablesArgs> for ReproduceArgs {
    fn from(t: TablesArgs) -> Self {
        ReproduceArgs {
            sizes: t.sizes,
            only: Some(PartArg::Tables),
            out: t.out,
            repetitions: 1,
            threads: 0,
            quiet: true,
            stability: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum PartArg {
    Fig8,
    Fig9,
    Tables,
    Throughput,
    Inversion,
}

fn parse_sizes(text: &str) -> Result<Sizes, String> {
    Sizes::parse(text)
}

/// Runs the reproduction and lists the files written (and, for the tables alone, prints
/// them). Every size is checked against the device's limits before anything is allocated.
pub fn reproduce(args: ReproduceArgs) -> Result<()> {
    // A bad --out fails with one line before the device is opened; the folder is made only
    // once the sizes are known to fit, and before any progress line.
    let name = symraster::io::display_path(&args.out);
    if args.out.exists() && !args.out.is_dir() {
        bail!("cannot write into {name}: it is not a folder (--out names the output folder)");
    }
    let gpu = super::open_gpu()?;
    let only = args.only;
    check_sizes(&gpu, &args.sizes, only)?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| anyhow::anyhow!("cannot create the output folder {name}: {e}"))?;
    crate::cli::print::stderr_line(format_args!(
        "reproducing on {} ({}); writing into {}",
        gpu.info().renderer,
        gpu.info().version,
        args.out.display()
    ));
    let config = Config {
        sizes: args.sizes,
        only: args.only.map(|p| match p {
            PartArg::Fig8 => Part::Fig8,
            PartArg::Fig9 => Part::Fig9,
            PartArg::Tables => Part::Tables,
            PartArg::Throughput => Part::Throughput,
            PartArg::Inversion => Part::Inversion,
        }),
        out: args.out,
        repetitions: args.repetitions as usize,
        threads: args.threads,
        progress: !args.quiet,
        stability: args.stability,
    };
    let report = reproduce::run(&gpu, &config).context("reproducing the paper's results")?;
    for f in &report.files {
        say!("wrote {}", f.display());
    }
    if only == Some(PartArg::Tables) {
        for f in report
            .files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "md"))
        {
            say!("\n{}", std::fs::read_to_string(f)?);
        }
    }
    Ok(())
}

/// Refuses a size the device cannot hold: the order in either format (Figs 8-9 run both), and
/// A's n = 2m columns where a rasterizing method uploads A as a texture (Fig 8, which is
/// faithful, and the tables when their method rasterizes).
fn check_sizes(gpu: &Gpu, sizes: &Sizes, only: Option<PartArg>) -> Result<(), Error> {
    let wants = |p: PartArg| only.is_none_or(|o| o == p);
    let limit = gpu.info().max_texture_size;
    // The tables always include the faithful method's rows.
    let parts = [
        (PartArg::Fig8, &sizes.fig8, true),
        (PartArg::Fig9, &sizes.fig9, false),
        (PartArg::Tables, &sizes.tables, true),
    ];
    for (_, list, uploads_a) in parts.into_iter().filter(|(p, ..)| wants(*p)) {
        for &m in list {
            gpu.check_order(m, Format::Full)?;
            gpu.check_order(m, Format::Packed)?;
            if uploads_a && 2 * m > limit {
                return Err(InputError::TooWide { n: 2 * m, m, limit }.into());
            }
        }
    }
    // The figures past the paper: each size must fit at least the fastest method that can
    // hold it (the slow methods are timed only up to their caps).
    if wants(PartArg::Throughput) {
        for &m in &sizes.throughput {
            gpu.check_problem_size(m, 0, Format::Full.into())?;
        }
    }
    if wants(PartArg::Inversion) {
        for &s in &sizes.inversion {
            gpu.check_problem_size(s, 0, Options::new(Format::Full).method(Method::Tiled))?;
        }
    }
    Ok(())
}
