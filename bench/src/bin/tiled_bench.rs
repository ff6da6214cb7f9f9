//! Benchmark of the tiled compute path: GPU time (GL_TIME_ELAPSED around the kernels, after a
//! warm-up, median of the runs) and useful GFLOP/s of assembly (lower triangle of A·diag(d)·Aᵀ),
//! Cholesky and the two triangular solves, in full and RFP storage; optionally the faithful
//! path beside it. CSV on stdout: method,op,format,m,n,ms,gflops.
//!
//! `cargo run --release --example tiled_bench -- [--runs R] [--faithful] [--ops a,c,s,n,p]
//!  [--formats full,rfp] [--rhs 1,16] [--diag 32,64] [--outer 256,512] [--fused 0,1]
//!  [--factor columns,panels,lanes,pairs,quads] [--schedule blocked,chain,panels,auto,split]
//!  [--fold 0,1] [--early 0,1] [--lean 0,1] [--poll atomic,sparse,load] [--ahead 0,32]
//!  [--chain-tile 32,64] [--split-chain 2048,4096]
//!  [--split-solve tiles,l1024,r512] SIZE...`
//! where SIZE is `m` (n = 2m) or `mxn`; default 1024. Solves are timed for each count of
//! right-hand sides in `--rhs` (default 16; the n column holds it). `--diag`, `--outer` (or
//! `--nb`), `--fused` and `--factor` sweep the Cholesky's tuning (diagonal-block order, outer
//! block width, whether inner updates factor the next diagonal block, how the diagonal blocks
//! are factored: `columns` one barrier per column, `panels` in panels of 16 by one subgroup,
//! `lanes` blocks of 32 by the lanes of one subgroup, no barrier per column, `pairs` two columns
//! per barrier, `quads` four):
//! every combination gets its own kernels and rows whose method is
//! `tiled-d<diag>-o<outer>-f<0|1>` (with `-<factor>` after it where `--factor` is given); without them the rows are
//! the device's defaults (method `tiled`). Op `n` counts the launches of one factorization per
//! kind (a dry run, nothing computed) on stderr, the matrix cut into buffers as on a device
//! whose GL_MAX_SHADER_STORAGE_BLOCK_SIZE is `--block-bytes` (default: this device's; the H200's
//! is 2147483647); `p` profiles the dispatches. `--tiles "16,16,8,8,16,1,32;16,16,8,16,16,1,32"`
//! (SYMRASTER_TILED_CONFIG's form, ';' between them) and `--panel "4,1,0,0;8,8,1,1,1"` (the
//! packed-panel product's slice,group,pad,regbuf[,unroll[,root_d[,cut[,pairs]]]]: `PanelVariant::parse`)
//! sweep the product kernel: every combination with the others gets its own kernels, methods
//! `tiled[-d..-o..-f..][-t<wg_x>x<wg_y>x<tm>x<tn>][-s<slice>g<group>p<pad>r<regbuf>[u1][q1][c<cut>][w1]]`.
//! `--schedule` sweeps how the Cholesky of full storage runs (`CholeskySchedule`: the blocked
//! launches, one chained launch, chained panels with trailing products, or the chain up to its
//! order), method suffix `-<schedule>`. `--fold` sweeps `Tuning::chain_fold` (the chained
//! Cholesky's sub-diagonal tile folded into the next diagonal tile's group), suffix `-fold<0|1>`;
//! `--early` sweeps `Tuning::chain_fold_early` (the folded tile published before the diagonal
//! group's update from it), suffix `-early<0|1>`; `--lean` sweeps `Tuning::chain_lean` (the
//! barriers the next wait makes redundant dropped), suffix `-lean<0|1>`; `--poll` sweeps `Tuning::chain_poll` (how
//! the chain polls its ready flags), suffix `-poll<name>`; `--ahead` sweeps
//! `Tuning::chain_ahead` (later terms checked at once after each wait), suffix `-ahead<n>`;
//! `--chain-tile` sweeps `Tuning::chain_tile` (the chain's tile order apart from the blocked
//! factor's `--diag`), suffix `-ct<order>`;
//! `split` halves the matrix recursively down to halves of
//! at most each `--split-chain` order (`Tuning::split_chain_order`; method suffix `-c<order>`
//! where the flag is given), each half chained; `--split-solve` sweeps how it solves L21 below
//! a chained half (`Tuning::split_solve`: `tiles` the chain's inverted tiles, `l<W>`/`r<W>`
//! blocks of 128 inverted in one launch and outer blocks of W left/right-looking), suffix
//! `-solve<name>`. `--column-chains` sweeps `Tuning::column_chains_order` (the largest order
//! whose several-column right sides are solved a chain per column), suffix `-cc<order>`.
//! Op `x` times the pieces of the split's first
//! split (full storage): ops `split-l11`, `split-l21` (the solve), `split-syrk`, `split-l22`.
//! Op `k` checks the solves of each `--rhs` count against the blocked solve (on stderr).
//! `--compile-first` compiles every program the kernels compile on first use before any op
//! (`TiledKernels::compile_all`), so that none is still compiling in the driver's threads
//! while an op is timed.
//! `--sleep MS` sleeps that long before the first op (after `--compile-first`'s compiles).
//! `--trace` writes every timed run of each row on stderr, with the seconds since the process
//! started and the CPU time each of the process's threads has used.
//! `--first-call` times only the first call of this fresh process (wall time: the GL context
//! and kernels, then the first op's first run with its uploads), rows of method `first-call`.
//! `--dump DIR` writes there, once every op ran, the driver's binary of each kernel set's
//! packed-panel product and chained Cholesky (`<method>.<kernel>.bin`, compiled if they were
//! not) and, under `DIR/programs/`, of every program it compiled (`<method>.<program>.bin`, the
//! program's name with its variant); NVIDIA's holds its assembly as text.

use anyhow::{Context, bail};
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::time::Instant;
use symraster::internal::GpuInternals;
use symraster::tiled::assembly::{DeviceProduct, assemble};
use symraster::tiled::cholesky::factor;
use symraster::tiled::schedule::{ChainPoll, CholeskySchedule, SplitSolve};
use symraster::tiled::storage::{max_buffer_bytes, part_bytes};
use symraster::tiled::{
    DiagonalFactor, KernelConfig, PanelVariant, Storage, TiledKernels, TiledMatrix, bench,
};
use symraster::timing::{Timing, time_finish};
use symraster::tuning::Tuning;
use symraster::{Format, Gpu, Method, Options, problems};

struct Args {
    runs: usize,
    faithful: bool,
    ops: Vec<String>,
    formats: Vec<Storage>,
    rhs: Vec<usize>,
    diag: Vec<usize>,
    outer: Vec<usize>,
    fused: Vec<bool>,
    factor: Vec<DiagonalFactor>,
    schedule: Vec<CholeskySchedule>,
    fold: Vec<bool>,
    poll: Vec<ChainPoll>,
    early: Vec<bool>,
    lean: Vec<bool>,
    ahead: Vec<usize>,
    chain_tile: Vec<usize>,
    split_chain: Vec<usize>,
    column_chains: Vec<usize>,
    split_solve: Vec<SplitSolve>,
    tiles: Vec<KernelConfig>,
    panel: Vec<PanelVariant>,
    block_bytes: Option<u64>,
    dump: Option<std::path::PathBuf>,
    first_call: bool,
    compile_first: bool,
    sleep_ms: u64,
    trace: bool,
    started: Instant,
    sizes: Vec<(usize, usize)>,
}

fn list(it: &mut impl Iterator<Item = String>, flag: &str) -> anyhow::Result<Vec<usize>> {
    Ok(it
        .next()
        .with_context(|| format!("{flag} needs a list"))?
        .split(',')
        .map(|s| s.trim().parse())
        .collect::<Result<_, _>>()?)
}

fn parse() -> anyhow::Result<Args> {
    let mut args = Args {
        runs: 5,
        faithful: false,
        ops: vec!["assembly".into(), "cholesky".into(), "solve".into()],
        formats: vec![Storage::Full, Storage::Rfp],
        rhs: vec![16],
        diag: Vec::new(),
        outer: Vec::new(),
        fused: Vec::new(),
        factor: Vec::new(),
        schedule: Vec::new(),
        fold: Vec::new(),
        poll: Vec::new(),
        early: Vec::new(),
        lean: Vec::new(),
        ahead: Vec::new(),
        chain_tile: Vec::new(),
        split_chain: Vec::new(),
        column_chains: Vec::new(),
        split_solve: Vec::new(),
        tiles: Vec::new(),
        panel: Vec::new(),
        block_bytes: None,
        dump: None,
        first_call: false,
        compile_first: false,
        sleep_ms: 0,
        trace: false,
        started: Instant::now(),
        sizes: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => args.runs = it.next().context("--runs needs a value")?.parse()?,
            "--faithful" => args.faithful = true,
            "--first-call" => args.first_call = true,
            "--compile-first" => args.compile_first = true,
            "--sleep" => {
                args.sleep_ms = it.next().context("--sleep needs milliseconds")?.parse()?
            }
            "--trace" => args.trace = true,
            "--rhs" => args.rhs = list(&mut it, "--rhs")?,
            "--diag" => args.diag = list(&mut it, "--diag")?,
            "--outer" | "--nb" => args.outer = list(&mut it, "--outer")?,
            "--split-chain" => args.split_chain = list(&mut it, "--split-chain")?,
            "--column-chains" => args.column_chains = list(&mut it, "--column-chains")?,
            "--tiles" => {
                args.tiles = it
                    .next()
                    .context("--tiles needs a list")?
                    .split(';')
                    .map(|t| KernelConfig::parse(t).with_context(|| format!("bad tiles {t}")))
                    .collect::<anyhow::Result<_>>()?
            }
            "--panel" => {
                args.panel = it
                    .next()
                    .context("--panel needs a list")?
                    .split(';')
                    .map(|t| PanelVariant::parse(t).with_context(|| format!("bad variant {t}")))
                    .collect::<anyhow::Result<_>>()?
            }
            "--dump" => args.dump = Some(it.next().context("--dump needs a folder")?.into()),
            "--block-bytes" => {
                args.block_bytes = Some(it.next().context("--block-bytes needs a value")?.parse()?)
            }
            "--fused" => {
                args.fused = list(&mut it, "--fused")?
                    .into_iter()
                    .map(|f| f != 0)
                    .collect()
            }
            "--split-solve" => {
                args.split_solve = it
                    .next()
                    .context("--split-solve needs a list")?
                    .split(',')
                    .map(|s| {
                        SplitSolve::parse(s).with_context(|| {
                            format!("--split-solve: no solve {s:?} (tiles, l<width>, r<width>)")
                        })
                    })
                    .collect::<anyhow::Result<_>>()?
            }
            "--fold" => {
                args.fold = list(&mut it, "--fold")?
                    .into_iter()
                    .map(|f| f != 0)
                    .collect()
            }
            "--factor" => {
                args.factor = it
                    .next()
                    .context("--factor needs a list")?
                    .split(',')
                    .map(|s| {
                        DiagonalFactor::ALL
                            .into_iter()
                            .find(|f| f.name() == s.trim())
                            .with_context(|| {
                                format!(
                                    "unknown factor {s} (columns, panels, lanes, pairs or quads)"
                                )
                            })
                    })
                    .collect::<anyhow::Result<_>>()?
            }
            "--ahead" => args.ahead = list(&mut it, "--ahead")?,
            "--chain-tile" => args.chain_tile = list(&mut it, "--chain-tile")?,
            "--lean" => {
                args.lean = list(&mut it, "--lean")?
                    .into_iter()
                    .map(|f| f != 0)
                    .collect()
            }
            "--early" => {
                args.early = list(&mut it, "--early")?
                    .into_iter()
                    .map(|f| f != 0)
                    .collect()
            }
            "--poll" => {
                args.poll = it
                    .next()
                    .context("--poll needs a list")?
                    .split(',')
                    .map(|s| {
                        ChainPoll::parse(s).with_context(|| {
                            format!("--poll: no way {s:?} (atomic, sparse or load)")
                        })
                    })
                    .collect::<anyhow::Result<_>>()?;
            }
            "--schedule" => {
                args.schedule = it
                    .next()
                    .context("--schedule needs a list")?
                    .split(',')
                    .map(|s| {
                        CholeskySchedule::parse(s)
                            .with_context(|| format!("--schedule: no schedule {s:?}"))
                    })
                    .collect::<anyhow::Result<_>>()?;
            }
            "--ops" => {
                args.ops = it
                    .next()
                    .context("--ops needs a list")?
                    .split(',')
                    .map(|s| match s {
                        "a" | "assembly" => Ok("assembly".to_string()),
                        "c" | "cholesky" => Ok("cholesky".to_string()),
                        "s" | "solve" => Ok("solve".to_string()),
                        "p" | "profile" => Ok("profile".to_string()),
                        "n" | "count" => Ok("count".to_string()),
                        "v" | "verify" => Ok("verify".to_string()),
                        "x" | "pieces" => Ok("pieces".to_string()),
                        "k" | "solve-check" => Ok("solve-check".to_string()),
                        other => bail!("unknown op {other}"),
                    })
                    .collect::<anyhow::Result<_>>()?
            }
            "--formats" => {
                args.formats = it
                    .next()
                    .context("--formats needs a list")?
                    .split(',')
                    .map(|s| match s {
                        "full" => Ok(Storage::Full),
                        "rfp" | "packed" => Ok(Storage::Rfp),
                        other => bail!("unknown format {other}"),
                    })
                    .collect::<anyhow::Result<_>>()?
            }
            size => {
                let (m, n) = match size.split_once('x') {
                    Some((m, n)) => (m.parse()?, n.parse()?),
                    None => {
                        let m: usize = size.parse()?;
                        (m, 2 * m)
                    }
                };
                args.sizes.push((m, n));
            }
        }
    }
    if args.sizes.is_empty() {
        args.sizes.push((1024, 2048));
    }
    Ok(args)
}

fn main() -> anyhow::Result<()> {
    let args = parse()?;
    let opened = Instant::now();
    let gpu = Gpu::builder().vars(std::env::vars())?.build()?;
    let k = gpu.tiled_kernels()?;
    let open_ms = opened.elapsed().as_secs_f64() * 1e3;
    eprintln!(
        "# {} | {} | kernels {:?} | max storage block {} bytes",
        gpu.info().renderer,
        gpu.info().version,
        k.config(),
        k.limits().max_storage_block_bytes
    );
    println!("method,op,format,m,n,ms,gflops");
    if args.first_call {
        return first_call(&k, &args, open_ms);
    }
    let sweeps = sweep(&gpu, &args)?;
    if args.compile_first {
        let started = Instant::now();
        let mut compiled = k.compile_all()?;
        for (_, kernels) in &sweeps {
            compiled += kernels.compile_all()?;
        }
        eprintln!(
            "# compiled {compiled} programs first in {:.0} ms",
            started.elapsed().as_secs_f64() * 1e3
        );
    }
    if args.trace {
        eprintln!(
            "# trace at {:.3} s: threads {}",
            args.started.elapsed().as_secs_f64(),
            threads()
        );
    }
    if args.sleep_ms > 0 {
        std::thread::sleep(std::time::Duration::from_millis(args.sleep_ms));
    }
    for &(m, n) in &args.sizes {
        // The SPD matrices factored, made once per size for all the kernels timed on them.
        let mut spd = HashMap::new();
        if sweeps.is_empty() {
            run_size(&k, "tiled", &args, (m, n), &mut spd)?;
        }
        for (label, kernels) in &sweeps {
            run_size(kernels, label, &args, (m, n), &mut spd)?;
        }
        if args.faithful {
            faithful(&gpu, m, n, &args.ops)?;
        }
    }
    if let Some(dir) = &args.dump {
        std::fs::create_dir_all(dir)?;
        let sets: Vec<(&str, &TiledKernels)> = if sweeps.is_empty() {
            vec![("tiled", &*k)]
        } else {
            sweeps.iter().map(|(l, k)| (l.as_str(), k)).collect()
        };
        std::fs::create_dir_all(dir.join("programs"))?;
        for (label, kernels) in sets {
            for (name, bytes) in kernels.panel_binaries() {
                std::fs::write(dir.join(format!("{label}.{name}.bin")), bytes)?;
            }
            if let Some(bytes) = kernels.chain_binary() {
                std::fs::write(dir.join(format!("{label}.potrf_chain.bin")), bytes)?;
            }
            for (name, bytes) in kernels.program_binaries() {
                let name: String = name
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                    .collect();
                std::fs::write(
                    dir.join("programs").join(format!("{label}.{name}.bin")),
                    bytes,
                )?;
            }
        }
    }
    Ok(())
}

/// The kernels of every combination of `--diag`, `--outer`, `--fused`, `--factor`, `--tiles`
/// and `--panel` (the device's value where a list is empty), with their method labels; none
/// without those flags.
fn sweep(gpu: &Gpu, args: &Args) -> anyhow::Result<Vec<(String, TiledKernels)>> {
    let blocks = !(args.diag.is_empty()
        && args.outer.is_empty()
        && args.fused.is_empty()
        && args.factor.is_empty());
    if !blocks
        && args.tiles.is_empty()
        && args.panel.is_empty()
        && args.schedule.is_empty()
        && args.fold.is_empty()
        && args.poll.is_empty()
        && args.early.is_empty()
        && args.lean.is_empty()
        && args.ahead.is_empty()
        && args.chain_tile.is_empty()
        && args.split_chain.is_empty()
        && args.split_solve.is_empty()
        && args.column_chains.is_empty()
    {
        return Ok(Vec::new());
    }
    let mut base = Tuning::default();
    for (name, value) in std::env::vars() {
        if name.starts_with("SYMRASTER_") && name != "SYMRASTER_DEVICE" && !value.trim().is_empty()
        {
            base.set(&name, &value)?;
        }
    }
    let or = |v: &[usize], d: Option<usize>| -> Vec<Option<usize>> {
        if v.is_empty() {
            vec![d]
        } else {
            v.iter().map(|&x| Some(x)).collect()
        }
    };
    let fused: Vec<Option<bool>> = if args.fused.is_empty() {
        vec![base.fused_diagonal]
    } else {
        args.fused.iter().map(|&f| Some(f)).collect()
    };
    let factors: Vec<Option<DiagonalFactor>> = if args.factor.is_empty() {
        vec![base.diagonal_factor]
    } else {
        args.factor.iter().map(|&f| Some(f)).collect()
    };
    let tiles: Vec<Option<KernelConfig>> = if args.tiles.is_empty() {
        vec![None]
    } else {
        args.tiles.iter().map(|&c| Some(c)).collect()
    };
    let panels: Vec<Option<PanelVariant>> = if args.panel.is_empty() {
        vec![base.panel]
    } else {
        args.panel.iter().map(|&v| Some(v)).collect()
    };
    let schedules: Vec<Option<CholeskySchedule>> = if args.schedule.is_empty() {
        vec![base.cholesky_schedule]
    } else {
        args.schedule.iter().map(|&v| Some(v)).collect()
    };
    let folds: Vec<Option<bool>> = if args.fold.is_empty() {
        vec![base.chain_fold]
    } else {
        args.fold.iter().map(|&f| Some(f)).collect()
    };
    let polls: Vec<Option<ChainPoll>> = if args.poll.is_empty() {
        vec![base.chain_poll]
    } else {
        args.poll.iter().map(|&p| Some(p)).collect()
    };
    let earlies: Vec<Option<bool>> = if args.early.is_empty() {
        vec![base.chain_fold_early]
    } else {
        args.early.iter().map(|&e| Some(e)).collect()
    };
    let leans: Vec<Option<bool>> = if args.lean.is_empty() {
        vec![base.chain_lean]
    } else {
        args.lean.iter().map(|&l| Some(l)).collect()
    };
    let split_chains = or(&args.split_chain, base.split_chain_order);
    let aheads = or(&args.ahead, base.chain_ahead);
    let chain_tiles = or(&args.chain_tile, base.chain_tile);
    let column_chains = or(&args.column_chains, base.column_chains_order);
    let split_solves: Vec<Option<SplitSolve>> = if args.split_solve.is_empty() {
        vec![base.split_solve]
    } else {
        args.split_solve.iter().map(|&v| Some(v)).collect()
    };
    let mut out = Vec::new();
    let mut combinations = Vec::new();
    for &s in &schedules {
        for &f in &folds {
            for &e in &earlies {
                for &p in &polls {
                    for &l in &leans {
                        for &c in &split_chains {
                            for &v in &split_solves {
                                for &a in &aheads {
                                    for &w in &chain_tiles {
                                        for &cc in &column_chains {
                                            combinations.push((
                                                s,
                                                (f, e),
                                                (p, l, a),
                                                (c, v, w, cc),
                                            ));
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    for (
        schedule,
        (chain_fold, chain_fold_early),
        (chain_poll, chain_lean, chain_ahead),
        (split_chain, split_solve, chain_tile, column_chains_order),
    ) in combinations
    {
        for &factor in &factors {
            for diag in or(&args.diag, base.diagonal_block) {
                for outer in or(&args.outer, base.outer_block) {
                    for &f in &fused {
                        for &config in &tiles {
                            for &panel in &panels {
                                let t = Tuning {
                                    diagonal_block: diag,
                                    outer_block: outer,
                                    fused_diagonal: f,
                                    diagonal_factor: factor,
                                    panel,
                                    cholesky_schedule: schedule,
                                    chain_fold,
                                    chain_poll,
                                    chain_fold_early,
                                    chain_lean,
                                    split_chain_order: split_chain,
                                    split_solve,
                                    chain_ahead,
                                    chain_tile,
                                    column_chains_order,
                                    ..base
                                };
                                let config = config.unwrap_or_else(|| t.kernel.config(gpu.info()));
                                match TiledKernels::tuned(gpu.context(), config, &t) {
                                    Ok(k) => {
                                        let mut label = "tiled".to_string();
                                        if blocks {
                                            label += &format!(
                                                "-d{}-o{}-f{}",
                                                k.diag(),
                                                k.outer(),
                                                u8::from(t.fused_diagonal())
                                            );
                                        }
                                        if !args.factor.is_empty() {
                                            label += &format!("-{}", k.diagonal_factor().name());
                                        }
                                        if !args.tiles.is_empty() {
                                            let c = k.config();
                                            label += &format!(
                                                "-t{}x{}x{}x{}",
                                                c.wg_x, c.wg_y, c.tm, c.tn
                                            );
                                        }
                                        if !args.panel.is_empty() {
                                            label +=
                                                &format!("-{}", panel.unwrap_or_default().label());
                                        }
                                        if !args.schedule.is_empty() {
                                            label += &format!("-{}", t.cholesky_schedule().name());
                                        }
                                        if !args.fold.is_empty() {
                                            label += &format!("-fold{}", u8::from(k.chain_fold()));
                                        }
                                        if !args.early.is_empty() {
                                            label += &format!(
                                                "-early{}",
                                                u8::from(k.chain_fold_early())
                                            );
                                        }
                                        if !args.poll.is_empty() {
                                            label += &format!("-poll{}", k.chain_poll().name());
                                        }
                                        if !args.lean.is_empty() {
                                            label += &format!("-lean{}", u8::from(k.chain_lean()));
                                        }
                                        if !args.ahead.is_empty() {
                                            label += &format!("-ahead{}", k.chain_ahead());
                                        }
                                        if !args.chain_tile.is_empty() {
                                            label += &format!("-ct{}", k.chain_tile());
                                        }
                                        if !args.split_chain.is_empty() {
                                            label += &format!("-c{}", k.split_chain_order());
                                        }
                                        if !args.split_solve.is_empty() {
                                            label += &format!("-solve{}", k.split_solve().name());
                                        }
                                        if !args.column_chains.is_empty() {
                                            label += &format!("-cc{}", k.column_chains_order());
                                        }
                                        out.push((label, k))
                                    }
                                    Err(e) => eprintln!(
                                        "# {factor:?} {diag:?} {outer:?} {f:?} {config:?} {panel:?}: {e}"
                                    ),
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The ops of `args` at one size with kernels `k`, rows labelled `label`; the Cholesky's SPD
/// matrices taken from `spd` (made there when missing).
fn run_size(
    k: &TiledKernels,
    label: &str,
    args: &Args,
    (m, n): (usize, usize),
    spd: &mut HashMap<Storage, TiledMatrix>,
) -> anyhow::Result<()> {
    for &storage in &args.formats {
        if args.ops.iter().any(|o| o == "count") {
            match bench::count_cholesky(k, m, storage, args.block_bytes) {
                Ok(c) => eprintln!("# {label} cholesky {} m={m}: {c}", storage.name()),
                Err(e) => eprintln!("# {label} count {} m {m}: {e}", storage.name()),
            }
        }
        if args.ops.iter().any(|o| o == "profile") && storage == Storage::Full {
            for (name, n, gpu, submit) in bench::dispatch_profile(k, m, 256)? {
                eprintln!(
                    "# {label} profile {name}: {n} dispatches, {gpu:.2} us GPU and {submit:.2} us to issue each"
                );
            }
        }
        if args.ops.iter().any(|o| o == "verify")
            && let Err(e) = verify(k, label, m, storage, spd)
        {
            eprintln!("# {label} verify {} m {m}: {e}", storage.name());
        }
        if args.ops.iter().any(|o| o == "solve-check") {
            for &rhs in &args.rhs {
                if let Err(e) = solve_check(k, label, m, rhs, storage) {
                    eprintln!("# {label} solve-check {} m {m}: {e}", storage.name());
                }
            }
        }
        let runs = args
            .ops
            .iter()
            .filter(|o| {
                !["profile", "count", "verify", "pieces", "solve-check"].contains(&o.as_str())
            })
            .flat_map(|op| match op.as_str() {
                "solve" => args.rhs.iter().map(|&r| (op.as_str(), r)).collect(),
                _ => vec![(op.as_str(), 0)],
            });
        if args.ops.iter().any(|o| o == "pieces") && storage == Storage::Full {
            let pieces = match spd.entry(storage) {
                Entry::Occupied(c) => Ok(c.into_mut()),
                Entry::Vacant(e) => bench::spd_matrix(k, m, storage).map(|c| e.insert(c)),
            }
            .and_then(|c| bench::time_split_pieces(k, c, args.runs));
            match pieces {
                Ok(pieces) => {
                    for t in pieces {
                        println!(
                            "{label},{},full,{},{},{:.4},{:.2}",
                            t.op, t.m, t.n, t.ms, t.gflops
                        );
                        trace(args, label, &t);
                    }
                }
                Err(e) => eprintln!("# {label} pieces m {m}: {e}"),
            }
        }
        for (op, rhs) in runs {
            let t = match op {
                "assembly" => bench::time_assembly(k, m, n, storage, args.runs),
                "cholesky" => match spd.entry(storage) {
                    Entry::Occupied(c) => Ok(c.into_mut()),
                    Entry::Vacant(e) => bench::spd_matrix(k, m, storage).map(|c| e.insert(c)),
                }
                .and_then(|c| bench::time_cholesky_of(k, c, args.runs)),
                _ => bench::time_solve(k, m, rhs, storage, args.runs),
            };
            match t {
                Ok(t) => {
                    println!(
                        "{label},{},{},{},{},{:.4},{:.2}",
                        t.op,
                        t.storage.name(),
                        t.m,
                        t.n,
                        t.ms,
                        t.gflops
                    );
                    trace(args, label, &t);
                }
                Err(e) => eprintln!("# {label} {op} {} m {m} n {n}: {e}", storage.name()),
            }
        }
    }
    Ok(())
}

/// `--trace`: every timed run of `t` and its busy work before them on stderr, with the
/// seconds since the process started and the CPU time of each of its threads so far.
fn trace(args: &Args, label: &str, t: &bench::TiledTiming) {
    if !args.trace {
        return;
    }
    let runs: Vec<String> = t.runs.iter().map(|ms| format!("{ms:.3}")).collect();
    eprintln!(
        "# trace at {:.3} s: {label} {} {} m {} n {}: preheat {:.0} ms, runs {} | threads {}",
        args.started.elapsed().as_secs_f64(),
        t.op,
        t.storage.name(),
        t.m,
        t.n,
        t.preheat_ms,
        runs.join(" "),
        threads()
    );
}

/// This process's threads with the CPU time each has used (user and system, in clock ticks),
/// from /proc/self/task; empty where that cannot be read.
fn threads() -> String {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return String::new();
    };
    let mut out = Vec::new();
    for task in tasks.flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        // "pid (comm) state ppid ...": utime and stime are the 14th and 15th fields.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        let ticks = |i: usize| {
            fields
                .get(i)
                .and_then(|f| f.parse::<u64>().ok())
                .unwrap_or(0)
        };
        // After the comm, field 3 (state) is index 0, so utime (14) is index 11.
        out.push(format!(
            "{}:{}",
            &stat[open + 1..close],
            ticks(11) + ticks(12)
        ));
    }
    out.join(" ")
}

/// `--first-call`: the first call of a fresh process, wall milliseconds, in rows of method
/// `first-call` (gflops empty): op `open` (the GL context and the tiled kernels, as
/// `Gpu::new` and the first tiled call make them), then the first op of `--ops` (assembly or
/// Cholesky) in the first format at the first size, once: its buffers allocated and uploaded,
/// its kernels compiled where the driver defers that, the run and glFinish (the problem's
/// host data and, for the Cholesky, the SPD matrix made on the GPU before it, untimed).
/// Nothing else runs: the process times its first call only.
fn first_call(k: &TiledKernels, args: &Args, open_ms: f64) -> anyhow::Result<()> {
    let (&(m, n), &storage) = (
        args.sizes.first().context("no size")?,
        args.formats.first().context("no format")?,
    );
    let row = |op: &str, n: usize, ms: f64| {
        println!("first-call,{op},{},{m},{n},{ms:.4},", storage.name())
    };
    row("open", 0, open_ms);
    let part = part_bytes(k.limits().max_storage_block_bytes, None);
    match args.ops.first().map(String::as_str) {
        Some("assembly") => {
            let mut rng = problems::rng(1);
            let a = problems::uniform_matrix(&mut rng, m, n);
            let d: Vec<f32> = (0..n).map(|j| 0.5 + (j % 4) as f32 * 0.25).collect();
            let start = Instant::now();
            let max = max_buffer_bytes(k.limits().max_storage_block_bytes);
            let p = DeviceProduct::upload(k, &a, &d, max)?;
            let mut c = TiledMatrix::uninitialized(k.context(), m, storage, part)?;
            assemble(k, &p, &mut c)?;
            k.context().finish();
            row("assembly", n, start.elapsed().as_secs_f64() * 1e3);
        }
        Some("cholesky") => {
            let c = bench::spd_matrix(k, m, storage)?;
            k.context().finish();
            let start = Instant::now();
            let mut work = TiledMatrix::uninitialized(k.context(), m, storage, part)?;
            work.copy_from(&c)?;
            factor(k, &mut work)?;
            k.context().finish();
            row("cholesky", m, start.elapsed().as_secs_f64() * 1e3);
        }
        other => bail!("--first-call times assembly or cholesky first, not {other:?}"),
    }
    Ok(())
}

/// Op `verify`: factors a copy of the SPD matrix of order m in `storage` once and prints (on
/// stderr) ‖L·(Lᵀ·x) − C·x‖ / ‖C·x‖ for a random x in f64, and whether the factorization ran as
/// one chained launch: the check that a schedule's timings belong to a right factor.
fn verify(
    k: &TiledKernels,
    label: &str,
    m: usize,
    storage: Storage,
    spd: &mut HashMap<Storage, TiledMatrix>,
) -> anyhow::Result<()> {
    let c = match spd.entry(storage) {
        Entry::Occupied(c) => c.into_mut(),
        Entry::Vacant(e) => e.insert(bench::spd_matrix(k, m, storage)?),
    };
    let part = symraster::tiled::storage::part_bytes(k.limits().max_storage_block_bytes, None);
    let mut work = TiledMatrix::uninitialized(k.context(), m, storage, part)?;
    work.copy_from(c)?;
    let chained = k.chained_factors();
    symraster::tiled::cholesky::factor(k, &mut work)?;
    let chained = k.chained_factors() - chained;
    let (cl, l) = (c.download_lower()?, work.download_lower()?);
    let x: Vec<f64> = (0..m)
        .map(|i| ((i * 7919) % 1000) as f64 / 500.0 - 1.0)
        .collect();
    // y = Lᵀ·x, z = L·y; w = C·x from C's lower triangle.
    let mut y = vec![0.0; m];
    for i in 0..m {
        for j in 0..=i {
            y[j] += f64::from(l[(i, j)]) * x[i];
        }
    }
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for i in 0..m {
        let (mut z, mut w) = (0.0, 0.0);
        for j in 0..=i {
            z += f64::from(l[(i, j)]) * y[j];
            w += f64::from(cl[(i, j)]) * x[j];
        }
        for j in i + 1..m {
            w += f64::from(cl[(j, i)]) * x[j];
        }
        num += (z - w) * (z - w);
        den += w * w;
    }
    eprintln!(
        "# {label} verify {} m={m}: residual {:.2e}, chained {chained}",
        storage.name(),
        (num / den).sqrt()
    );
    Ok(())
}

/// Op `k`: the solves of `rhs` right sides as the library runs them (chained where it
/// chains) against the blocked solve with the same factor (the chains told they gave up), on
/// stderr: ‖x − x_blocked‖ / ‖x_blocked‖ and whether the solve ran chained.
fn solve_check(
    k: &TiledKernels,
    label: &str,
    m: usize,
    rhs: usize,
    storage: Storage,
) -> anyhow::Result<()> {
    use symraster::tiled::{DeviceRhs, solve};
    let max = max_buffer_bytes(k.limits().max_storage_block_bytes);
    let mut l = bench::spd_matrix(k, m, storage)?;
    factor(k, &mut l)?;
    let b = problems::uniform_matrix(&mut problems::rng(3), m, rhs);
    let mut x = DeviceRhs::upload(k, &b, max)?;
    let chained = k.chained_solves();
    solve::solve_in_place(k, &l, &mut x)?;
    let chained = k.chained_solves() - chained;
    let mut blocked = DeviceRhs::upload(k, &b, max)?;
    solve::solve_after_chain_gives_up(k, &l, std::slice::from_mut(&mut blocked))?;
    let error = symraster::relative_error(&x.download()?, &blocked.download()?);
    eprintln!(
        "# {label} solve-check {} m={m} rhs={rhs}: against the blocked solve {error:.2e}, chained {chained}",
        storage.name(),
    );
    Ok(())
}

/// One run each of the paper's passes (full format) at the same size, for the ratio.
fn faithful(gpu: &Gpu, m: usize, n: usize, ops: &[String]) -> anyhow::Result<()> {
    let options = Options::new(Format::Full).method(Method::Faithful);
    let mut rng = problems::rng(1);
    let a = problems::uniform_matrix(&mut rng, m, n);
    let d: Vec<f32> = (0..n).map(|j| 0.5 + (j % 4) as f32 * 0.25).collect();
    let (mf, nf) = (m as f64, n as f64);
    if ops.iter().any(|o| o == "assembly") {
        let mut run = gpu.start_assembly(&a, &d, options)?;
        let ms = gpu_or_wall_ms(time_finish(&mut run, gpu.preheat())?);
        let gflops = mf * (mf + 1.0) * nf / (ms * 1e6);
        println!("faithful,assembly,full,{m},{n},{ms:.4},{gflops:.2}");
    }
    if ops.iter().any(|o| o == "cholesky") {
        let c = gpu.assemble(&a, &d, options)?;
        let mut run = gpu.start_cholesky(&c, options)?;
        let ms = gpu_or_wall_ms(time_finish(&mut run, gpu.preheat())?);
        let gflops = mf * mf * mf / 3.0 / (ms * 1e6);
        println!("faithful,cholesky,full,{m},{m},{ms:.4},{gflops:.2}");
    }
    Ok(())
}

/// The GPU timer's milliseconds, or the wall time where the timer reads more than it (llvmpipe's
/// timer has been seen to overflow on runs of thousands of passes).
fn gpu_or_wall_ms(t: Timing) -> f64 {
    t.gpu.min(t.wall).as_secs_f64() * 1e3
}
