//! The inversion kernels: the tiled path's product, Cholesky and triangular solve (reused, not
//! copied) plus this module's own (glsl/inverse/): the pivoted panel's column step, tournament
//! rounds, leaf update and row interchanges ([`panel`]), the Gauss-Jordan panel's
//! inverses, a strided block copy, and the elementwise passes of the Newton iteration with
//! partial sums. Also the square matrix in a storage buffer they all work on.

pub mod double;
pub mod panel;
pub mod rank;
mod square;

pub use square::DeviceSquare;

use crate::error::{NumericalError, Result};
use crate::gl::{Buffer, BufferTarget, BufferUsage, ComputeProgram, Context, Uniform};
use crate::matrix::Matrix;
use crate::tiled::status::StatusWord;
use crate::tiled::storage::{check_fits, max_buffer_bytes};
use crate::tiled::{KernelConfig, Operand, TiledKernels, View};

use panel::{Beside, LEAF, Leaf, PanelSettings, PivotWork, TOURNAMENT_ROWS};

/// Entries one work group of the Newton pass covers (256 invocations x 16).
const NEWTON_GROUP_ENTRIES: usize = 256 * 16;

/// What [`Inverter::copy`] writes into the destination view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyMode {
    /// The source.
    Copy = 0,
    /// The identity (source unread).
    Identity = 1,
    /// The unit lower triangle of the source, zeros above.
    UnitLower = 2,
    /// The lower triangle of the source, zeros above.
    Lower = 3,
    /// The lower triangle of the source; nothing above the diagonal is written.
    LowerOnly = 4,
    /// The source, then zeros written over it (a move; the views must not overlap).
    Move = 5,
}

/// The largest order whose general inverses take blocks of the diagonal-block order by
/// default ([`Inverter::general_block`]).
pub const SMALL_BLOCK_ORDER: usize = 1024;

/// The least order from which the LU inverse takes [`LU_WIDE_BLOCK`] columns per block by
/// default ([`Inverter::lu_block`]).
pub const LU_WIDE_ORDER: usize = 8192;

/// The LU inverse's block from [`LU_WIDE_ORDER`] on: its trailing updates then run as deep
/// products on packed panels, faster per flop than the look-ahead's rank-64 updates
/// (`figures/h200/experiments/lu_blocks/`).
pub const LU_WIDE_BLOCK: usize = 512;

/// How the Newton iteration reads its per-step results back (issue 26: each wait idles the
/// GPU, much of a step at small orders; `figures/h200/experiments/sign_phases.csv`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NewtonSync {
    /// Three waits per step: the status word and pivots (the column order formed on the CPU),
    /// the sum for μ_k (formed on the CPU), the stopping test's sums.
    PerPass,
    /// One wait per step: the column order, μ_k and the sums formed on the device and read
    /// with the status word in one report (orders above [`Inverter::newton_max_order`]
    /// form the column order on the CPU: one wait more).
    #[default]
    Once,
}

/// The kernels inversion runs on, compiled for one context.
pub struct Inverter {
    tiled: TiledKernels,
    leaf: ComputeProgram,
    permute: ComputeProgram,
    tournament: ComputeProgram,
    leaf_finish: ComputeProgram,
    panel_split: ComputeProgram,
    copy: ComputeProgram,
    newton: ComputeProgram,
    dgemm: double::DoublePrograms,
    rank: rank::RankPrograms,
    status: StatusWord,
    max_bytes: u64,
    panel: PanelSettings,
    tournament_rows: usize,
    /// The Newton iteration's bookkeeping (glsl/inverse/newton_report.comp), compiled on
    /// first use.
    newton_report: std::cell::OnceCell<ComputeProgram>,
    /// The look-ahead's block interchanges (glsl/inverse/interchange.comp), compiled on first
    /// use.
    interchange: std::cell::OnceCell<ComputeProgram>,
    /// How the Newton iteration reads its per-step results back.
    newton_sync: std::cell::Cell<NewtonSync>,
    /// How the rank kernel walks the depth.
    rank_variant: std::cell::Cell<rank::RankVariant>,
    /// Whether the context renders in software (llvmpipe, softpipe): the choices that weigh
    /// f64 products against inverses differ there ([`Handover::Auto`](crate::inverse::Handover::Auto)).
    software: bool,
}

impl Inverter {
    /// Compiles the kernels with an explicit tile configuration.
    pub fn with_config(ctx: &Context, config: KernelConfig) -> Result<Self> {
        Self::tuned(ctx, config, crate::tiled::TiledTuning::default())
    }

    /// Compiles the kernels with an explicit tile configuration and the Cholesky's tuning.
    pub(crate) fn tuned(
        ctx: &Context,
        config: KernelConfig,
        tuning: impl Into<crate::tiled::TiledTuning>,
    ) -> Result<Self> {
        let tiled = TiledKernels::tuned(ctx, config, tuning)?;
        let program = |kernel: &'static crate::gl::ComputeKernel| {
            ComputeProgram::new(ctx, kernel, "", &config.source(kernel.source))
        };
        let max_bytes = max_buffer_bytes(tiled.limits().max_storage_block_bytes);
        // 256 rows of 32 columns need about 41 KiB of shared memory; GL promises 32.
        let tournament_rows = if tiled.limits().max_shared_bytes >= 48 * 1024 {
            TOURNAMENT_ROWS
        } else {
            TOURNAMENT_ROWS / 2
        };
        let tournament_source = format!(
            "#define ROWS {tournament_rows}u\n{}",
            crate::inverse::table::TOURNAMENT.source
        );
        Ok(Self {
            leaf: program(&crate::inverse::table::LEAF)?,
            permute: program(&crate::inverse::table::PERMUTE)?,
            tournament: ComputeProgram::new(
                ctx,
                &crate::inverse::table::TOURNAMENT,
                "",
                &config.source(&tournament_source),
            )?,
            leaf_finish: program(&crate::inverse::table::LEAF_FINISH)?,
            panel_split: program(&crate::inverse::table::PANEL_SPLIT)?,
            copy: program(&crate::inverse::table::COPY)?,
            newton: program(&crate::inverse::table::NEWTON)?,
            dgemm: double::DoublePrograms::new(),
            rank: rank::RankPrograms::default(),
            status: StatusWord::new(ctx)?,
            tiled,
            max_bytes,
            panel: PanelSettings::default(),
            tournament_rows,
            newton_report: std::cell::OnceCell::new(),
            interchange: std::cell::OnceCell::new(),
            newton_sync: std::cell::Cell::new(NewtonSync::default()),
            rank_variant: std::cell::Cell::new(rank::RankVariant::default()),
            software: crate::gl::DeviceInfo::query(ctx)?.software,
        })
    }

    /// Whether the context renders in software (Mesa's llvmpipe or softpipe).
    pub fn software_renderer(&self) -> bool {
        self.software
    }

    /// These kernels with the general inverses' panel choices `panel` (pivoting, tournament
    /// rows, block size), for every [`PivotWork`] made from them.
    pub fn with_panel(mut self, panel: PanelSettings) -> Self {
        self.panel = panel;
        self
    }

    /// These kernels with a per-buffer limit of at most `bytes` (below the device's: for tests
    /// of what the limit refuses and where it sends the work).
    pub fn with_max_bytes(mut self, bytes: u64) -> Self {
        self.max_bytes = self.max_bytes.min(bytes);
        self
    }

    /// The general inverses' panel choices.
    pub fn panel(&self) -> PanelSettings {
        self.panel
    }

    /// The most rows a tournament work group holds on this device: [`TOURNAMENT_ROWS`], or
    /// half that where shared memory is under 48 KiB (GL promises 32, as on llvmpipe).
    pub fn tournament_rows(&self) -> usize {
        self.tournament_rows
    }

    /// The tiled path's kernels (product, Cholesky, triangular solve).
    pub fn tiled(&self) -> &TiledKernels {
        &self.tiled
    }

    /// The context.
    pub fn context(&self) -> &Context {
        self.tiled.context()
    }

    /// The default block size b of the blocked algorithms: the panel settings' block where
    /// set, else twice the diagonal-block order.
    pub fn block(&self) -> usize {
        self.panel.block.unwrap_or(2 * self.tiled.config().nb).max(1)
    }

    /// The block size of a general inverse of order `n` (Gauss-Jordan, LU, the Newton
    /// iteration's): the panel settings' block where set, else the diagonal-block order up to
    /// [`SMALL_BLOCK_ORDER`] and [`Inverter::block`] beyond (the smaller
    /// blocks win at small orders, the larger ones at large:
    /// `figures/h200/experiments/inverse_blocks.csv`).
    pub fn general_block(&self, n: usize) -> usize {
        match self.panel.block {
            Some(b) => b.max(1),
            None if n <= SMALL_BLOCK_ORDER => self.tiled.config().nb.max(1),
            None => self.block(),
        }
    }

    /// The block size of an LU inverse of order `n`: the panel settings' block where set, else
    /// [`LU_WIDE_BLOCK`] from [`LU_WIDE_ORDER`] on and [`Inverter::general_block`] below.
    pub fn lu_block(&self, n: usize) -> usize {
        match self.panel.block {
            Some(b) => b.max(1),
            None if n >= LU_WIDE_ORDER => LU_WIDE_BLOCK,
            None => self.general_block(n),
        }
    }

    /// The f64 product's programs ([`double`]), compiled on first use.
    pub(crate) fn dgemm_programs(&self) -> &double::DoublePrograms {
        &self.dgemm
    }

    /// The rank-b update's programs ([`rank`]), compiled on first use.
    pub(crate) fn rank_programs(&self) -> &rank::RankPrograms {
        &self.rank
    }

    /// The most bytes one storage buffer may hold.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// A buffer of `len` f32 values, refused before allocation beyond the device's limit.
    pub fn buffer(&self, what: &str, len: usize) -> Result<Buffer<f32>> {
        check_fits(what, len, self.max_bytes)?;
        Buffer::uninitialized(
            self.context(),
            BufferTarget::Storage,
            BufferUsage::Dynamic,
            len.max(1),
        )
    }

    /// A new buffer holding `data` (large ones through a mapping on all cores: see
    /// [`Buffer::new`]), size-checked as [`Inverter::buffer`] does.
    pub fn buffer_with(&self, what: &str, data: &[f32]) -> Result<Buffer<f32>> {
        check_fits(what, data.len(), self.max_bytes)?;
        if data.is_empty() {
            return self.buffer(what, 0);
        }
        // Static: mapped Dynamic buffers may land in host memory (see TiledMatrix::from_rows).
        Buffer::new(
            self.context(),
            BufferTarget::Storage,
            BufferUsage::Static,
            data,
        )
    }

    /// A buffer of `len` u32 values (pivot indices).
    pub fn index_buffer(&self, len: usize) -> Result<Buffer<u32>> {
        Buffer::uninitialized(
            self.context(),
            BufferTarget::Storage,
            BufferUsage::Dynamic,
            len.max(1),
        )
    }

    /// A buffer of `len` value pairs (the leaf's pivot candidates).
    pub fn pair_buffer(&self, len: usize) -> Result<Buffer<[u32; 2]>> {
        Buffer::uninitialized(
            self.context(),
            BufferTarget::Storage,
            BufferUsage::Dynamic,
            len.max(1),
        )
    }

    /// The leaf's first pivot candidates: per work group the largest |a(i, c0)| of its rows.
    pub fn leaf_start(&self, a: &Buffer<f32>, leaf: Leaf, w: &PivotWork) -> Result<()> {
        self.leaf_launch(a, leaf, None, w)
    }

    /// The leaf's column step p: the pivot from the previous step's candidates, the rows not
    /// yet chosen updated in place, the next column's candidates (glsl/inverse/leaf.comp).
    pub fn leaf_step(&self, a: &Buffer<f32>, leaf: Leaf, p: usize, w: &PivotWork) -> Result<()> {
        self.leaf_launch(a, leaf, Some(p), w)
    }

    fn leaf_launch(
        &self,
        a: &Buffer<f32>,
        leaf: Leaf,
        step: Option<usize>,
        w: &PivotWork,
    ) -> Result<()> {
        // Step p reads the candidates step p − 1 (or the start) wrote.
        let k = step.map_or(0, |p| p - leaf.c0 + 1);
        a.bind_base(0);
        w.candidates[(k + 1) % 2].bind_base(1);
        w.candidates[k % 2].bind_base(2);
        w.chosen.bind_base(3);
        self.status.bind_base(4);
        let u = |v: usize| Uniform::U32(v as u32);
        let groups = leaf.groups();
        self.leaf.set_all(&[
            ("n", u(leaf.n)),
            ("c0", u(leaf.c0)),
            ("w", u(leaf.width)),
            ("p", u(step.unwrap_or(leaf.c0))),
            ("groups", u(groups)),
            ("tol", Uniform::F32(leaf.tol)),
            ("pivoting", Uniform::I32(i32::from(leaf.pivoting))),
            ("start", Uniform::I32(i32::from(step.is_none()))),
        ])?;
        self.leaf.dispatch([groups as u32, 1, 1])
    }

    /// Runs `f`; with trace logging on, logs the GPU time of what it queued as `what` (two
    /// GL_TIMESTAMP queries, which may sit inside a GL_TIME_ELAPSED one; each waits for the GPU).
    pub(crate) fn traced<T>(
        &self,
        what: impl FnOnce() -> String,
        f: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        if !log::log_enabled!(log::Level::Trace) {
            return f();
        }
        let first = crate::gl::GpuTimestamp::now(self.context())?;
        let out = f()?;
        let time = crate::gl::GpuTimestamp::now(self.context())?.since(&first)?;
        log::trace!("{}: {:.1} µs", what(), time.as_secs_f64() * 1e6);
        Ok(out)
    }

    /// The leaf's tournament (glsl/inverse/tournament.comp): a round over groups of
    /// `w.chunk_rows()` rows, then merges of up to [`Inverter::tournament_rows`] / 32
    /// candidate sets a group until one set is left (with [`PanelSettings::fused_merge`], a
    /// round of at most that many groups merges its own sets in its launch); returns which of
    /// `w.rounds` holds the winners, in pivot order. `pend` > 0: the previous leaf's product on
    /// these columns (its `pend` columns' L21 times the U12 above this leaf) is applied to
    /// every row as read. Each launch goes out with the next of `beside`'s updates beside it.
    pub fn leaf_tournament(
        &self,
        a: &Buffer<f32>,
        leaf: Leaf,
        pend: usize,
        w: &PivotWork,
        beside: &mut Beside<'_>,
    ) -> Result<usize> {
        debug_assert!(pend <= LEAF && pend <= leaf.c0);
        let u = |v: usize| Uniform::U32(v as u32);
        let fan = self.tournament_rows / LEAF;
        let chunk = w.chunk_rows().clamp(1, self.tournament_rows);
        let rounds = self.tournament_rounds(w, leaf.n - leaf.c0);
        debug_assert!(rounds[0] * LEAF <= w.rounds[0].len());
        self.tournament.set_all(&[
            ("n", u(leaf.n)),
            ("c0", u(leaf.c0)),
            ("w", u(leaf.width)),
            ("chunk", u(chunk)),
            ("fan", u(fan)),
            ("pend", u(pend)),
            ("step", Uniform::I32(self.panel.step as i32)),
            ("prefetch", Uniform::I32(i32::from(self.panel.prefetch))),
        ])?;
        // Every launch binds all its buffers: an update beside the previous one rebinds.
        let bind = |input: usize| {
            a.bind_base(0);
            w.rounds[input].bind_base(1);
            w.rounds[1 - input].bind_base(2);
            w.lu11.bind_base(3);
            w.stash.bind_base(4);
            w.tally.bind_base(5);
        };
        // Launch i merges launch i − 1's sets (the first round: the chunks of rows) and writes
        // its own into w.rounds[i % 2].
        for (i, &groups) in rounds.iter().enumerate() {
            let sets = if i == 0 { groups } else { rounds[i - 1] };
            let fused = self.tournament_fuses(groups);
            self.tournament.set_all(&[
                ("mode", Uniform::I32(i32::from(i > 0))),
                ("sets", u(sets)),
                ("last", Uniform::I32(i32::from(groups == 1))),
                ("fuse", Uniform::I32(i32::from(fused))),
            ])?;
            bind((i + 1) % 2);
            self.traced(
                || match i {
                    0 => format!("round first {groups} groups pend {pend} fused {fused}"),
                    _ => format!("round merge {groups} groups last {} fused {fused}", groups == 1),
                },
                || beside.launch(self, &self.tournament, [groups as u32, 1, 1]),
            )?;
        }
        Ok((rounds.len() - 1) % 2)
    }

    /// The tournament-pivoted leaf's last launch, its winners listed in `chosen`: the rows
    /// interchanged (recorded in `w.piv`), L11\U11 (from `w.lu11`) and L21 = A21·U11⁻¹
    /// written, the unit lower L11 into `w.unit_l` (w x w) for a solve right of the leaf,
    /// a failing pivot into the status word (glsl/inverse/leaf_finish.comp). The `right` ≤ 32
    /// columns after the leaf become U12 = L11⁻¹·A12 in the same launch (rows c0 .. c0+w);
    /// `pend` and `beside` as in [`Inverter::leaf_tournament`]; the interchanges move the
    /// columns `leaf.cols` says.
    #[allow(clippy::too_many_arguments)]
    pub fn leaf_finish(
        &self,
        a: &Buffer<f32>,
        leaf: Leaf,
        chosen: &Buffer<u32>,
        w: &PivotWork,
        right: usize,
        pend: usize,
        beside: &mut Beside<'_>,
    ) -> Result<()> {
        debug_assert!(right <= LEAF && leaf.c0 + leaf.width + right <= leaf.n);
        a.bind_base(0);
        chosen.bind_base(1);
        w.piv.bind_base(2);
        self.status.bind_base(3);
        w.lu11.bind_base(4);
        w.stash.bind_base(5);
        w.unit_l.bind_base(6);
        let u = |v: usize| Uniform::U32(v as u32);
        // 64 of the moved columns outside the leaf per group, then 128 rows below it per group.
        let (lo, end) = leaf.cols;
        debug_assert!(lo <= leaf.c0 && leaf.c0 + leaf.width + right <= end && end <= leaf.n);
        let others = end - lo - leaf.width - right;
        let col_groups = others.div_ceil(64);
        let row_groups = (leaf.n - leaf.c0 - leaf.width).div_ceil(128).max(1);
        self.leaf_finish.set_all(&[
            ("n", u(leaf.n)),
            ("c0", u(leaf.c0)),
            ("w", u(leaf.width)),
            ("tol", Uniform::F32(leaf.tol)),
            ("col_groups", u(col_groups)),
            ("right", u(right)),
            ("lo", u(lo)),
            ("others", u(others)),
            ("pend", u(pend)),
            ("step", Uniform::I32(self.panel.step as i32)),
            ("prefetch", Uniform::I32(i32::from(self.panel.prefetch))),
        ])?;
        beside.launch(
            self,
            &self.leaf_finish,
            [(col_groups + row_groups) as u32, 1, 1],
        )
    }

    /// The launches of a leaf tournament over `rows` rows ([`Inverter::leaf_tournament`]).
    pub fn tournament_launches(&self, w: &PivotWork, rows: usize) -> usize {
        self.tournament_rounds(w, rows).len()
    }

    /// The work groups of each launch of a leaf tournament over `rows` rows: the first round's
    /// (one a chunk of rows), then each merge round's (up to `fan` sets a group) until one set
    /// is left or a round merges its own sets ([`Inverter::tournament_fuses`]).
    fn tournament_rounds(&self, w: &PivotWork, rows: usize) -> Vec<usize> {
        let fan = self.tournament_rows / LEAF;
        let mut sets = rows.div_ceil(w.chunk_rows().clamp(1, self.tournament_rows));
        let mut rounds = vec![sets];
        while sets > 1 && !self.tournament_fuses(sets) {
            sets = sets.div_ceil(fan);
            rounds.push(sets);
        }
        rounds
    }

    /// Whether a tournament round of `groups` work groups merges their sets in its own launch
    /// (its last group to finish; [`PanelSettings::fused_merge`], 2 ..= `fan` groups).
    fn tournament_fuses(&self, groups: usize) -> bool {
        let fan = self.tournament_rows / LEAF;
        self.panel.fused_merge && groups > 1 && groups <= fan
    }

    /// A block's row interchanges, `piv[k0 .. k0+b]` (b ≤ [`panel::LOOK_AHEAD_MAX`], else an
    /// error), on the columns outside
    /// k0 .. k0+b of the order-n `a` (glsl/inverse/interchange.comp): what a look-ahead
    /// panel's leaves left ([`panel::Beside`]).
    pub fn interchange(&self, a: &Buffer<f32>, n: usize, k0: usize, b: usize, piv: &Buffer<u32>) -> Result<()> {
        if b > panel::LOOK_AHEAD_MAX || k0 + b > n {
            return Err(crate::error::Error::shape(format!(
                "interchanges of a block of {b} at {k0} in order {n} (at most {} inside it)",
                panel::LOOK_AHEAD_MAX
            )));
        }
        let groups = (n - b).div_ceil(64);
        if groups == 0 {
            return Ok(());
        }
        let program = match self.interchange.get() {
            Some(p) => p,
            None => {
                let kernel = &crate::inverse::table::INTERCHANGE;
                let source = self.tiled.config().source(kernel.source);
                let p = ComputeProgram::new(self.context(), kernel, "", &source)?;
                self.interchange.get_or_init(|| p)
            }
        };
        a.bind_base(0);
        piv.bind_base(1);
        let u = |v: usize| Uniform::U32(v as u32);
        program.set_all(&[("n", u(n)), ("k0", u(k0)), ("b", u(b))])?;
        program.dispatch([groups as u32, 1, 1])
    }

    /// Before a Gauss-Jordan block's products: the panel column (columns k0 .. k0+b, all n
    /// rows) copied into `col` (n x b) and block row 1 outside the panel moved into `row`
    /// (b x n), zeros left in `a`. With `inverses` (b ≤ 64), the panel column of `a` zeroed
    /// too, the identity in the panel's columns of `row` (else those are unwritten), and one
    /// more work group forming the panel's inverses from L11\U11: [L11⁻¹; U11⁻¹·L11⁻¹]
    /// stacked into it (2b x b), −I in the block's rows of `col`
    /// (glsl/inverse/panel_split.comp).
    #[allow(clippy::too_many_arguments)]
    pub fn panel_split(
        &self,
        a: &Buffer<f32>,
        n: usize,
        k0: usize,
        b: usize,
        col: &Buffer<f32>,
        row: &Buffer<f32>,
        inverses: Option<&Buffer<f32>>,
    ) -> Result<()> {
        debug_assert!(inverses.is_none() || b <= 64);
        a.bind_base(0);
        col.bind_base(1);
        row.bind_base(2);
        // Bound to something in any case.
        inverses.unwrap_or(row).bind_base(3);
        let u = |v: usize| Uniform::U32(v as u32);
        self.panel_split.set_all(&[
            ("n", u(n)),
            ("k0", u(k0)),
            ("b", u(b)),
            ("whole", Uniform::I32(i32::from(inverses.is_some()))),
            ("steps", Uniform::I32(self.panel.split as i32)),
            ("prefetch", Uniform::I32(i32::from(self.panel.prefetch))),
        ])?;
        let groups = (n * b).div_ceil(256) + usize::from(inverses.is_some());
        let max = self.tiled.limits().max_groups_x.max(1) as usize;
        let mut base = 0;
        while base < groups {
            let count = (groups - base).min(max);
            self.panel_split.set("base", u(base))?;
            self.panel_split.dispatch([count as u32, 1, 1])?;
            base += count;
        }
        Ok(())
    }

    /// Moves the leaf's chosen rows into place across all n columns (LAPACK's interchanges,
    /// recorded in `w.piv`): two launches through `w.moved` (glsl/inverse/permute.comp).
    pub fn leaf_interchanges(&self, a: &Buffer<f32>, leaf: Leaf, w: &PivotWork) -> Result<()> {
        a.bind_base(0);
        w.moved.bind_base(1);
        w.chosen.bind_base(2);
        w.piv.bind_base(3);
        let u = |v: usize| Uniform::U32(v as u32);
        self.permute
            .set_all(&[("n", u(leaf.n)), ("c0", u(leaf.c0)), ("w", u(leaf.width))])?;
        let groups = [leaf.n.div_ceil(256) as u32, 2 * leaf.width as u32, 1];
        for mode in [0, 1] {
            self.permute.set("mode", Uniform::I32(mode))?;
            self.permute.dispatch(groups)?;
        }
        Ok(())
    }

    /// dst ← alpha·mode(src) over two views of the same shape.
    pub fn copy(
        &self,
        dst: Operand<'_>,
        src: Operand<'_>,
        mode: CopyMode,
        alpha: f32,
    ) -> Result<()> {
        let (d, s) = (dst.view, src.view);
        debug_assert!(d.rows == s.rows && d.cols == s.cols);
        if d.rows == 0 || d.cols == 0 {
            return Ok(());
        }
        dst.buffer.bind_base(0);
        src.buffer.bind_base(1);
        let u = |v: usize| Uniform::U32(v as u32);
        self.copy.set_all(&[
            ("rows", u(d.rows)),
            ("cols", u(d.cols)),
            ("d_off", u(d.offset)),
            ("d_rs", u(d.rs)),
            ("d_cs", u(d.cs)),
            ("s_off", u(s.offset)),
            ("s_rs", u(s.rs)),
            ("s_cs", u(s.cs)),
            ("mode", Uniform::I32(mode as i32)),
            ("alpha", Uniform::F32(alpha)),
        ])?;
        self.copy
            .dispatch([d.cols.div_ceil(16) as u32, d.rows.div_ceil(16) as u32, 1])?;
        Ok(())
    }

    /// Work groups (and so partial sums) of a Newton pass over an order-n matrix.
    pub fn newton_groups(n: usize) -> usize {
        (n * n).div_ceil(NEWTON_GROUP_ENTRIES).max(1)
    }

    /// y(i, j) = w(i, perm\[j\]) over the order-n matrices `w` and `y` of `pass` (the
    /// Gauss-Jordan result with its columns put back); per work group (Σ y², 0, max |y|, 0)
    /// into `pass.partial` ([`Inverter::newton_groups`] entries).
    pub fn newton_unscramble(&self, w: &Buffer<f32>, pass: &NewtonPass<'_>) -> Result<()> {
        // x is not touched in this mode; bind y there too so every binding is a buffer.
        self.newton_pass(0, pass.y, w, pass, [0.0, 0.0])
    }

    /// x ← a·x + b·y in place over the order-n matrices of `pass`; per work group
    /// (Σ (x_new − x)², Σ x_new², max |x_new|, 0) into `pass.partial`.
    pub fn newton_step(
        &self,
        x: &Buffer<f32>,
        pass: &NewtonPass<'_>,
        a: f32,
        b: f32,
    ) -> Result<()> {
        self.newton_pass(1, x, pass.y, pass, [a, b])
    }

    /// The Lyapunov solver's stability test of the last Newton iterate `x` (order n of
    /// `pass`, whose y and perm are not read): per work group (Σ (x + I)², tr x, 0, 0) into
    /// `pass.partial`, so that only the sums come back.
    pub fn newton_distance_from_minus_identity(
        &self,
        x: &Buffer<f32>,
        pass: &NewtonPass<'_>,
    ) -> Result<()> {
        self.newton_pass(2, x, x, pass, [0.0, 0.0])
    }

    fn newton_pass(
        &self,
        mode: i32,
        x: &Buffer<f32>,
        w: &Buffer<f32>,
        pass: &NewtonPass<'_>,
        [a, b]: [f32; 2],
    ) -> Result<()> {
        let n = pass.n;
        let groups = Self::newton_groups(n);
        debug_assert!(pass.partial.len() >= groups);
        x.bind_base(0);
        w.bind_base(1);
        pass.perm.bind_base(2);
        pass.partial.bind_base(3);
        pass.y.bind_base(4);
        self.newton.set_all(&[
            ("n", Uniform::U32(n as u32)),
            ("mode", Uniform::I32(mode)),
            ("a", Uniform::F32(a)),
            ("b", Uniform::F32(b)),
        ])?;
        let max = self.tiled.limits().max_groups_x.max(1) as usize;
        let mut base = 0;
        while base < groups {
            let count = (groups - base).min(max);
            self.newton.set("group_base", Uniform::U32(base as u32))?;
            self.newton.dispatch([count as u32, 1, 1])?;
            base += count;
        }
        Ok(())
    }

    /// How the rank kernel walks the depth (default: [`rank::RankVariant::default`]).
    pub fn rank_variant(&self) -> rank::RankVariant {
        self.rank_variant.get()
    }

    /// Sets how the rank kernel walks the depth.
    pub fn set_rank_variant(&self, variant: rank::RankVariant) {
        self.rank_variant.set(variant);
    }

    /// How the Newton iteration (sign, Lyapunov) reads its per-step results back.
    pub fn newton_sync(&self) -> NewtonSync {
        self.newton_sync.get()
    }

    /// Chooses how the Newton iteration reads its per-step results back (the default:
    /// [`NewtonSync::Once`](NewtonSync::Once)).
    pub fn set_newton_sync(&self, sync: NewtonSync) {
        self.newton_sync.set(sync);
    }

    /// The largest order whose column order [`Inverter::newton_column_order`] forms on the
    /// device (one work group's shared memory holds it).
    pub fn newton_max_order(&self) -> usize {
        self.newton_shared_words() / 2
    }

    /// Shared words of glsl/inverse/newton_report.comp: the device's shared memory, at most
    /// 64 KiB.
    fn newton_shared_words(&self) -> usize {
        (self.tiled.limits().max_shared_bytes as usize / 4).min(NEWTON_SHARED_WORDS)
    }

    fn newton_report_program(&self) -> Result<&ComputeProgram> {
        if let Some(p) = self.newton_report.get() {
            return Ok(p);
        }
        let kernel = &crate::inverse::table::NEWTON_REPORT;
        let source = format!("#define MAX_WORDS {}u\n{}", self.newton_shared_words(), kernel.source);
        let p = ComputeProgram::new(
            self.context(),
            kernel,
            "",
            &self.tiled.config().source(&source),
        )?;
        Ok(self.newton_report.get_or_init(|| p))
    }

    fn newton_report_pass(
        &self,
        mode: i32,
        count: usize,
        buffers: NewtonReportBuffers<'_>,
        scale: Option<f64>,
    ) -> Result<()> {
        let p = self.newton_report_program()?;
        buffers.piv.bind_base(0);
        buffers.report.bind_base(1);
        buffers.partial.bind_base(2);
        self.status.bind_base(3);
        buffers.perm.bind_base(4);
        let bits = scale.unwrap_or(1.0).to_bits();
        p.set_all(&[
            ("mode", Uniform::I32(mode)),
            ("count", Uniform::U32(count as u32)),
            ("scale", Uniform::U32(u32::from(scale.is_some()))),
            ("norm_lo", Uniform::U32(bits as u32)),
            ("norm_hi", Uniform::U32((bits >> 32) as u32)),
        ])?;
        p.dispatch([1, 1, 1])
    }

    /// The column order putting (PA)⁻¹ back ([`column_order`](crate::inverse::newton::column_order)
    /// of the pivots `piv`) into `perm`, on the device (n ≤ [`Inverter::newton_max_order`]).
    pub fn newton_column_order(&self, n: usize, buffers: NewtonReportBuffers<'_>) -> Result<()> {
        debug_assert!(n <= self.newton_max_order());
        self.newton_report_pass(0, n, buffers, None)
    }

    /// The status word, Σ y² of the unscramble pass's `groups` partials, the scaling
    /// μ = (‖Y‖_F/‖X‖_F)^½ with ‖X‖_F = `norm` (1 when `None`) and the step's coefficients
    /// into the report (glsl/inverse/newton_report.comp says where).
    pub fn newton_scale(&self, groups: usize, buffers: NewtonReportBuffers<'_>, norm: Option<f64>) -> Result<()> {
        self.newton_report_pass(1, groups, buffers, norm)
    }

    /// The step pass's `groups` partials summed into the report.
    pub fn newton_sums(&self, groups: usize, buffers: NewtonReportBuffers<'_>) -> Result<()> {
        self.newton_report_pass(2, groups, buffers, None)
    }

    /// [`Inverter::newton_step`] with the coefficients the report holds
    /// ([`Inverter::newton_scale`]'s), read on the device.
    pub fn newton_step_from_report(
        &self,
        x: &Buffer<f32>,
        pass: &NewtonPass<'_>,
        report: &Buffer<u32>,
    ) -> Result<()> {
        let pass = NewtonPass { perm: report, ..*pass };
        self.newton_pass(3, x, pass.y, &pass, [0.0, 0.0])
    }

    /// Clears the status word before an inversion.
    pub fn reset_status(&self) -> Result<()> {
        self.status.reset()
    }

    /// Reads the status word: the first column without a usable pivot, as
    /// [`NumericalError::SingularMatrix`].
    pub fn check_status(&self, tol: f32) -> Result<()> {
        match self.status.failure()? {
            None => Ok(()),
            Some((column, pivot)) => Err(NumericalError::SingularMatrix {
                column,
                pivot: f64::from(pivot),
                tolerance: f64::from(tol),
            }
            .into()),
        }
    }

    /// Reads the status word after the LU of an SPD matrix without pivoting: the first pivot
    /// not positive, as [`NumericalError::NotPositiveDefinite`] (its Cholesky pivot).
    pub fn check_status_positive(&self) -> Result<()> {
        match self.status.failure()? {
            None => Ok(()),
            Some((column, pivot)) => Err(NumericalError::NotPositiveDefinite {
                column,
                pivot: f64::from(pivot),
            }
            .into()),
        }
    }
}

/// What the Newton iteration's elementwise passes work on: the order, the column order putting
/// the inverse back, its result `y` (the unscrambled inverse), the per-group partial sums.
pub struct NewtonPass<'a> {
    /// The order n.
    pub n: usize,
    /// The column order y(:, j) = w(:, perm\[j\]).
    pub perm: &'a Buffer<u32>,
    /// The unscrambled inverse (written by the unscramble pass, read by the step).
    pub y: &'a Buffer<f32>,
    /// Per-work-group sums ([`Inverter::newton_groups`] entries).
    pub partial: &'a Buffer<[f32; 4]>,
}

/// The buffers of the Newton iteration's bookkeeping passes: the pivots, the report (at
/// least [`NEWTON_REPORT_WORDS`] words), the partial sums read and the column order written.
#[derive(Clone, Copy)]
pub struct NewtonReportBuffers<'a> {
    /// The pivots (LAPACK's ipiv, 0-based).
    pub piv: &'a Buffer<u32>,
    /// The report.
    pub report: &'a Buffer<u32>,
    /// Per-work-group partial sums of the last Newton pass.
    pub partial: &'a Buffer<[f32; 4]>,
    /// The column order.
    pub perm: &'a Buffer<u32>,
}

/// Words of the Newton iteration's report (glsl/inverse/newton_report.comp).
pub const NEWTON_REPORT_WORDS: usize = 14;

/// The most shared words of the Newton bookkeeping's work group (64 KiB).
const NEWTON_SHARED_WORDS: usize = 16384;
