//! The general inverses' panel flags of the timing examples (issue 26's tuning): `--pivoting
//! partial,tournament`, `--chunk 128,256` (rows per work group of the tournament's first
//! round), `--block 64,128` (the block size b), `--update products,rank,rank64,rank128,mixed` (the
//! kernel of the block updates: src/inverse/rank.rs), `--lower solve,triangular,product` (how the LU
//! inverse forms L⁻¹: src/inverse/lu.rs), `--step shared,registers,combined,broadcast` (how
//! tournament leaves hold their rows), `--split columns,steps,registers` (how the
//! Gauss-Jordan panel's inverses are formed), `--fuse off,on` (a tournament's last merge in
//! the round before it: src/inverse/panel.rs), `--prefetch off,on` (the leaf kernels' loads
//! issued together), `--look-ahead off,always,auto` (the general inverses' panels beside
//! the previous block's update: src/inverse/gje.rs); each takes a comma-separated list and every combination runs. The other
//! arguments are the orders.

use symraster::inverse::kernels::panel::{ColumnStep, PanelSettings, Pivoting, SplitInverse};
use symraster::inverse::kernels::panel::{LookAhead, LowerInverse};
use symraster::inverse::kernels::rank::BlockUpdate;

/// The orders and the panel settings given by `args` (program name excluded).
pub fn parse(
    args: impl Iterator<Item = String>,
) -> anyhow::Result<(Vec<usize>, Vec<PanelSettings>)> {
    let mut sizes = vec![];
    let mut pivoting: Vec<Pivoting> = vec![];
    let mut chunk: Vec<usize> = vec![];
    let mut block: Vec<Option<usize>> = vec![];
    let mut update: Vec<BlockUpdate> = vec![];
    let mut lower: Vec<LowerInverse> = vec![];
    let mut step: Vec<ColumnStep> = vec![];
    let mut split: Vec<SplitInverse> = vec![];
    let mut fuse: Vec<bool> = vec![];
    let mut prefetch: Vec<bool> = vec![];
    let mut look_ahead: Vec<LookAhead> = vec![];
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        let Some(flag) = arg.strip_prefix("--") else {
            sizes.push(arg.parse()?);
            continue;
        };
        let value = args
            .next()
            .ok_or_else(|| anyhow::anyhow!("--{flag} needs a value"))?;
        for v in value.split(',') {
            match flag {
                "pivoting" => pivoting.push(Pivoting::from_name(v).ok_or_else(|| {
                    anyhow::anyhow!("--pivoting takes partial or tournament, not {v}")
                })?),
                "chunk" => chunk.push(v.parse()?),
                "block" => block.push(Some(v.parse()?)),
                "update" => update.push(BlockUpdate::from_name(v).ok_or_else(|| {
                    anyhow::anyhow!(
                        "--update takes products, rank, rank64, rank128 or mixed, not {v}"
                    )
                })?),
                "lower" => lower.push(LowerInverse::from_name(v).ok_or_else(|| {
                    anyhow::anyhow!("--lower takes solve, triangular or product, not {v}")
                })?),
                "step" => step.push(ColumnStep::from_name(v).ok_or_else(|| {
                    anyhow::anyhow!(
                        "--step takes shared, registers, combined or broadcast, not {v}"
                    )
                })?),
                "split" => split.push(SplitInverse::from_name(v).ok_or_else(|| {
                    anyhow::anyhow!("--split takes columns, steps or registers, not {v}")
                })?),
                "fuse" => fuse.push(on_off(flag, v)?),
                "prefetch" => prefetch.push(on_off(flag, v)?),
                "look-ahead" => look_ahead.push(LookAhead::from_name(v).ok_or_else(|| {
                    anyhow::anyhow!("--look-ahead takes off, always or auto, not {v}")
                })?),
                _ => anyhow::bail!(
                    "unknown flag --{flag} (--pivoting, --chunk, --block, --update, --lower, \
                     --step, --split, --fuse, --prefetch, --look-ahead)"
                ),
            }
        }
    }
    let default = PanelSettings::default();
    fn or<T>(v: &mut Vec<T>, d: T) {
        if v.is_empty() {
            v.push(d)
        }
    }
    or(&mut pivoting, default.pivoting);
    or(&mut chunk, default.chunk_rows);
    or(&mut block, default.block);
    or(&mut update, default.update);
    or(&mut lower, default.lower);
    or(&mut step, default.step);
    or(&mut split, default.split);
    or(&mut fuse, default.fused_merge);
    or(&mut prefetch, default.prefetch);
    or(&mut look_ahead, default.look_ahead);
    // Every combination, the first flag outermost.
    fn expand<T: Copy>(
        settings: Vec<PanelSettings>,
        values: &[T],
        set: impl Fn(&mut PanelSettings, T),
    ) -> Vec<PanelSettings> {
        let set = &set;
        settings
            .into_iter()
            .flat_map(|s| {
                values.iter().map(move |&v| {
                    let mut s = s;
                    set(&mut s, v);
                    s
                })
            })
            .collect()
    }
    let settings = vec![default];
    let settings = expand(settings, &pivoting, |s, v| s.pivoting = v);
    let settings = expand(settings, &chunk, |s, v| s.chunk_rows = v);
    let settings = expand(settings, &block, |s, v| s.block = v);
    let settings = expand(settings, &update, |s, v| s.update = v);
    let settings = expand(settings, &lower, |s, v| s.lower = v);
    let settings = expand(settings, &step, |s, v| s.step = v);
    let settings = expand(settings, &split, |s, v| s.split = v);
    let settings = expand(settings, &fuse, |s, v| s.fused_merge = v);
    let settings = expand(settings, &prefetch, |s, v| s.prefetch = v);
    let settings = expand(settings, &look_ahead, |s, v| s.look_ahead = v);
    Ok((sizes, settings))
}

/// `on` or `off` as a bool, else an error naming `--flag`.
fn on_off(flag: &str, v: &str) -> anyhow::Result<bool> {
    match v {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => anyhow::bail!("--{flag} takes off or on, not {v}"),
    }
}

/// The settings in one CSV field: pivoting/chunk/block/update/lower/step/split/fuse, then
/// "/prefetch" where on and "/ahead-<look-ahead>" where not auto ("-": the default block).
pub fn label(s: &PanelSettings) -> String {
    let block = s.block.map_or("-".to_string(), |b| b.to_string());
    format!(
        "{}/{}/{block}/{}/{}/{}/{}/{}{}{}",
        s.pivoting.name(),
        s.chunk_rows,
        s.update.name(),
        s.lower.name(),
        s.step.name(),
        s.split.name(),
        if s.fused_merge { "fused" } else { "merge" },
        if s.prefetch { "/prefetch" } else { "" },
        match s.look_ahead {
            LookAhead::Auto => String::new(),
            mode => format!("/ahead-{}", mode.name()),
        }
    )
}
