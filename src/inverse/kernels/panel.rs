//! The pivoted panel of the general inverses (LU and Gauss-Jordan): LU of the rows k0 .. n of b
//! columns, blocked in leaves of at most [`LEAF`] columns, with one of two pivot choices
//! ([`Pivoting`]):
//!
//! - [`Pivoting::Tournament`] (the default; CALU, Grigori, Demmel & Xiang 2011): work groups
//!   of at most 256 rows each choose 32 candidate rows by partial pivoting in shared memory,
//!   rounds of merges choose among the candidates (glsl/inverse/tournament.comp), and one
//!   launch moves the winners into place and writes L11\U11 and L21 = A21·U11⁻¹
//!   (glsl/inverse/leaf_finish.comp): two to four launches a leaf at 4096.
//!   Where one group holds all the leaf's rows (order at most 256 past the leaf) the
//!   tournament is partial pivoting itself.
//! - [`Pivoting::Partial`] (LAPACK's pivots): one dispatch per column
//!   (glsl/inverse/leaf.comp: the pivot found from the previous dispatch's per-group maxima,
//!   the rows updated in place, nothing moved), then the same interchanges.
//!
//! The pivots are recorded as LAPACK's: row q was swapped with `piv[q]` at step q, whole rows
//! (partial pivoting: the largest |candidate|, the smallest row on ties). The panel's columns
//! right of a leaf are updated by a triangular solve and one product; with tournament pivoting
//! and at most a leaf's width of them (the block's last leaf, as for b ≤ 64) the leaf's last
//! launch forms U12 = L11⁻¹·A12 and the next leaf's launches apply A22 −= L21·U12 to each row
//! they read, so a block of two leaves costs no launch between them.
//!
//! Issue 26's latency options ([`PanelSettings`]): [`ColumnStep`] (the leaves' rows in
//! registers), [`SplitInverse`] (the Gauss-Jordan panel's inverses by parallel steps) and
//! [`PanelSettings::fused_merge`] (a tournament's last merge in the round before it), then
//! [`PanelSettings::prefetch`] (loads issued together before a serial sum uses them).

use super::{CopyMode, DeviceSquare, Inverter};
use super::rank::{BlockUpdate, RankProduct, RankTile, rank_launch, rank_update};
use crate::error::Result;
use crate::gl::{Buffer, ComputeProgram};
use crate::tiled::{Product, Update};
use crate::tiled::cholesky::trsm;
use crate::tiled::{Operand, View};

/// The most columns of a leaf (the kernels' shared arrays hold 32 pivot-row values).
pub const LEAF: usize = 32;

/// Rows per work group of the leaf's column steps.
const LEAF_GROUP_ROWS: usize = 256;

/// The most rows a tournament work group holds (glsl/inverse/tournament.comp's shared arrays;
/// half on devices with GL's least shared memory: [`Inverter::tournament_rows`]).
pub const TOURNAMENT_ROWS: usize = 256;

/// How a pivoted panel chooses its pivot rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pivoting {
    /// LAPACK's partial pivoting: one dispatch per column.
    Partial,
    /// Tournament pivoting (CALU): a few dispatches per leaf; partial pivoting within each
    /// group of rows, then among the groups' winners.
    Tournament,
}

impl Pivoting {
    /// The name in the examples' flags.
    pub fn name(self) -> &'static str {
        match self {
            Pivoting::Partial => "partial",
            Pivoting::Tournament => "tournament",
        }
    }

    /// The choice named `name` ("partial" or "tournament").
    pub fn from_name(name: &str) -> Option<Self> {
        [Pivoting::Partial, Pivoting::Tournament]
            .into_iter()
            .find(|p| p.name() == name)
    }
}

/// How a tournament leaf's column steps hold the rows (glsl/inverse/tournament.comp and
/// leaf_finish.comp's `step`): issue 26's latency per block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ColumnStep {
    /// Every row in shared memory, each column's update read and written there.
    Shared = 0,
    /// Each invocation's row in registers (32 entries at compile-time indices), only the
    /// pivot row read from shared memory; leaf_finish's L21 and U12 solves likewise.
    Registers = 1,
    /// As [`ColumnStep::Registers`], the subgroups' best candidates combined by subgroup
    /// reductions instead of a serial loop (where the driver has subgroups).
    Combined = 2,
    /// As [`ColumnStep::Combined`], each subgroup's best row published as vec4s, so the pivot
    /// row is 8 broadcast reads (where there are at most 8 subgroups; else as Combined).
    Broadcast = 3,
}

impl ColumnStep {
    /// Every choice, in the examples' order.
    pub const ALL: [ColumnStep; 4] = [
        ColumnStep::Shared,
        ColumnStep::Registers,
        ColumnStep::Combined,
        ColumnStep::Broadcast,
    ];

    /// The name in the examples' flags.
    pub fn name(self) -> &'static str {
        match self {
            ColumnStep::Shared => "shared",
            ColumnStep::Registers => "registers",
            ColumnStep::Combined => "combined",
            ColumnStep::Broadcast => "broadcast",
        }
    }

    /// The choice named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// How the Gauss-Jordan panel's two b x b inverses are formed (glsl/inverse/panel_split.comp).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SplitInverse {
    /// One invocation per column, each a serial substitution (2b dependent sums).
    Columns = 0,
    /// All the work group's invocations on each right-looking substitution step (2b barriers).
    Steps = 1,
    /// As [`SplitInverse::Steps`], each invocation's 16 entries in registers, only the row a
    /// step needs read from shared memory.
    Registers = 2,
}

impl SplitInverse {
    /// Every choice, in the examples' order.
    pub const ALL: [SplitInverse; 3] = [
        SplitInverse::Columns,
        SplitInverse::Steps,
        SplitInverse::Registers,
    ];

    /// The name in the examples' flags.
    pub fn name(self) -> &'static str {
        match self {
            SplitInverse::Columns => "columns",
            SplitInverse::Steps => "steps",
            SplitInverse::Registers => "registers",
        }
    }

    /// The choice named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// The general inverses' panel choices an [`Inverter`] gives every [`PivotWork`] it makes
/// (the timing examples compare them): the pivoting, the rows a tournament group takes first,
/// the block size b (`None`: [`Inverter::block`]'s default), the kernel of the block
/// updates, how the LU inverse forms L⁻¹, and issue 26's latency options (column steps, the
/// panel's inverses, the fused merge).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PanelSettings {
    /// How pivots are chosen.
    pub pivoting: Pivoting,
    /// Rows per work group of the tournament's first round (1 ..= [`TOURNAMENT_ROWS`]).
    pub chunk_rows: usize,
    /// The block size b of the general inverses (`None`: the default).
    pub block: Option<usize>,
    /// The kernel of the blocks' rank-b updates (default: [`BlockUpdate::Rank64`]).
    pub update: BlockUpdate,
    /// How the LU inverse forms L⁻¹ (default: [`LowerInverse::Triangular`]).
    pub lower: LowerInverse,
    /// How tournament leaves hold their rows (default: [`ColumnStep::Shared`]).
    pub step: ColumnStep,
    /// How the Gauss-Jordan panel's inverses are formed (default: [`SplitInverse::Registers`]).
    pub split: SplitInverse,
    /// Whether a tournament's last merge runs in the launch of the round before it (the last
    /// group to finish merges, where that round has at most [`Inverter::tournament_rows`] / 32
    /// groups): one launch fewer per leaf (default: on).
    pub fused_merge: bool,
    /// Whether the tournament, leaf-finish and panel-split launches issue every load of a
    /// pass into shared memory before its first store (constant trip counts), read the
    /// pending product's entries 16 at a time, and form the last round's stash from one
    /// coalesced pass into shared memory: issue 26's latency of dependent memory accesses
    /// (default: on).
    pub prefetch: bool,
    /// Where the general inverses factor each panel beside the previous block's update of
    /// the other columns (look-ahead: that block updates the panel's columns first, the
    /// panel's interchanges wait for the rest; tournament pivoting, b ≤ 64, the rank kernel;
    /// default [`LookAhead::Auto`]).
    pub look_ahead: LookAhead,
}

impl Default for PanelSettings {
    fn default() -> Self {
        Self {
            pivoting: Pivoting::Tournament,
            chunk_rows: TOURNAMENT_ROWS,
            block: None,
            // The fastest of issue 26's sweeps of GJE at 1024, 4096 and 8192: 64 x 64 update
            // tiles, the panel's inverses by steps in registers, the fused merge and the
            // prefetching launches (`figures/h200/experiments/inverse_latency.csv`).
            update: BlockUpdate::Rank64,
            lower: LowerInverse::Triangular,
            step: ColumnStep::Shared,
            split: SplitInverse::Registers,
            fused_merge: true,
            prefetch: true,
            look_ahead: LookAhead::Auto,
        }
    }
}

/// Workspace of the pivoted sweeps.
pub struct PivotWork {
    /// Row swapped with row p at step p (LAPACK's ipiv, 0-based).
    pub piv: Buffer<u32>,
    /// An n x b copy of the panel column (Gauss-Jordan).
    pub row_block: Buffer<f32>,
    /// Gauss-Jordan's block row 1 (b x n), moved out before the block's products.
    pub block_row: Buffer<f32>,
    /// Gauss-Jordan's [L11⁻¹; U11⁻¹·L11⁻¹]·W1 (2b x n).
    pub spread: Buffer<f32>,
    /// Two b x b workspaces (the Gauss-Jordan panel's L11⁻¹ and A11⁻¹, stacked).
    pub square: Buffer<f32>,
    /// Partial pivoting's per-group candidates, (|value|, row) as bits, written and read
    /// alternately.
    pub candidates: [Buffer<[u32; 2]>; 2],
    /// The rows chosen as pivots in the current leaf (partial pivoting).
    pub chosen: Buffer<u32>,
    /// The rows the leaf's interchanges move (2·[`LEAF`] rows of n; partial pivoting).
    pub moved: Buffer<f32>,
    /// The block size b.
    pub block: usize,
    /// Pivoting (true); false for the LU of an SPD matrix, whose pivots are then its
    /// Cholesky pivots (a non-positive one fails).
    pub pivoting: bool,
    /// How pivots are chosen when `pivoting`.
    pub pivots: Pivoting,
    /// The kernel of the blocks' rank-b updates.
    pub update: BlockUpdate,
    /// Rows per work group of the tournament's first round (fixed here: `rounds` is sized
    /// for it).
    chunk_rows: usize,
    /// The tournament's candidate sets (32 rows each), written and read alternately by its
    /// rounds.
    pub rounds: [Buffer<u32>; 2],
    /// The tournament winners' packed LU, L11\U11 ([`LEAF`] x [`LEAF`]).
    pub lu11: Buffer<f32>,
    /// A leaf's or block's unit lower L11 (row-major) for the solve right of it.
    pub unit_l: Buffer<f32>,
    /// The leaf columns of the rows a tournament leaf's interchanges touch (2·[`LEAF`] rows
    /// of [`LEAF`]).
    pub stash: Buffer<f32>,
    /// The fused merge's count of finished first-round groups (zero between launches: the
    /// merging group resets it).
    pub tally: Buffer<u32>,
}

impl PivotWork {
    /// Rows per work group of the tournament's first round (1 ..= [`TOURNAMENT_ROWS`], from
    /// the [`PanelSettings`] at [`PivotWork::new`]).
    pub fn chunk_rows(&self) -> usize {
        self.chunk_rows
    }

    /// Workspace for order n with block size b, pivoting as `inv`'s [`PanelSettings`] say.
    pub fn new(inv: &Inverter, n: usize, block: usize) -> Result<Self> {
        let groups = n.div_ceil(LEAF_GROUP_ROWS).max(1);
        let candidates = || inv.pair_buffer(groups);
        let settings = inv.panel();
        let chunk_rows = settings.chunk_rows.clamp(1, inv.tournament_rows());
        // The first round's sets, 32 rows each (later rounds have fewer).
        let sets = || inv.index_buffer(LEAF * n.div_ceil(chunk_rows).max(1));
        Ok(Self {
            piv: inv.index_buffer(n)?,
            row_block: inv.buffer("a block column", block * n)?,
            block_row: inv.buffer("a block row", block * n)?,
            spread: inv.buffer("two block rows", 2 * block * n)?,
            square: inv.buffer("the panel's inverses", 2 * block * block)?,
            candidates: [candidates()?, candidates()?],
            chosen: inv.index_buffer(LEAF)?,
            moved: inv.buffer("the rows a leaf moves", 2 * LEAF * n)?,
            block,
            pivoting: true,
            pivots: settings.pivoting,
            update: settings.update,
            chunk_rows,
            rounds: [sets()?, sets()?],
            lu11: inv.buffer("a leaf's diagonal block", LEAF * LEAF)?,
            unit_l: inv.buffer("a unit lower factor", block.max(LEAF).pow(2))?,
            stash: inv.buffer("the rows a leaf moves", 2 * LEAF * LEAF)?,
            tally: Buffer::new(
                inv.context(),
                crate::gl::BufferTarget::Storage,
                crate::gl::BufferUsage::Dynamic,
                &[0u32],
            )?,
        })
    }
}

/// One leaf of a pivoted panel: columns `c0 .. c0 + width` of the order-`n` matrix, rows
/// `c0 .. n` (its column steps and its row interchanges).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Leaf {
    /// The matrix's order.
    pub n: usize,
    /// The leaf's first column (and first row).
    pub c0: usize,
    /// Its columns, at most [`LEAF`].
    pub width: usize,
    /// A pivot at or below this (in magnitude when pivoting) fails.
    pub tol: f32,
    /// Partial pivoting (false: the diagonal is the pivot).
    pub pivoting: bool,
    /// The columns whose rows the leaf's interchanges move, first and end: all (0, n), or
    /// the panel's own under the Gauss-Jordan look-ahead ([`Beside`]).
    pub cols: (usize, usize),
}

impl Leaf {
    /// Work groups of a column step.
    pub fn groups(&self) -> usize {
        (self.n - self.c0).div_ceil(LEAF_GROUP_ROWS)
    }
}

/// Launches that run beside a panel's chain of dependent ones (the Gauss-Jordan look-ahead,
/// [`crate::inverse::gje`]): each chain launch goes out without a barrier and the next slot
/// of these after it (independent updates, the last one fenced), so the driver may run them
/// at once; the barrier after the slot orders all before the chain's next launch. What the
/// chain leaves runs in [`Beside::flush`].
#[derive(Default)]
pub struct Beside<'a> {
    slots: std::collections::VecDeque<Vec<(RankProduct<'a>, RankTile)>>,
}

impl<'a> Beside<'a> {
    /// Queues independent rank updates to run together beside a later chain launch.
    pub fn push(&mut self, slot: Vec<(RankProduct<'a>, RankTile)>) {
        if !slot.is_empty() {
            self.slots.push_back(slot);
        }
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Launches `program` over `groups`, with the next queued slot beside it.
    pub fn launch(&mut self, inv: &Inverter, program: &ComputeProgram, groups: [u32; 3]) -> Result<()> {
        match self.slots.pop_front() {
            Some(slot) => {
                program.dispatch_unfenced(groups)?;
                run_slot(inv, slot)
            }
            None => program.dispatch(groups),
        }
    }

    /// Runs what is still queued.
    pub fn flush(&mut self, inv: &Inverter) -> Result<()> {
        while let Some(slot) = self.slots.pop_front() {
            run_slot(inv, slot)?;
        }
        Ok(())
    }
}

/// The widest block the look-ahead takes (glsl/inverse/interchange.comp's interchanges).
pub const LOOK_AHEAD_MAX: usize = 64;

/// The rank kernel's tile where a general inverse of order n (Gauss-Jordan's where `gje`)
/// runs with look-ahead ([`PanelSettings::look_ahead`]): there, tournament pivoting, blocks of
/// at most [`LOOK_AHEAD_MAX`] and more than one of them, updates on the rank kernel.
pub fn look_ahead(inv: &Inverter, w: &PivotWork, n: usize, gje: bool) -> Option<RankTile> {
    let on = inv.panel().look_ahead.at(n, gje)
        && w.pivoting
        && w.pivots == Pivoting::Tournament
        && w.block <= LOOK_AHEAD_MAX
        && n > w.block;
    on.then(|| w.update.tile(n, n, w.block)).flatten()
}

/// Queues the update of `rows` (first, count) x `cols` (two column ranges, first and width)
/// in `slots` bands of whole tiles of rows (bands keep each launch's rows contiguous; slabs of
/// columns ran slower on large orders: docs/results.md); `block(rows, cols)` is the update of
/// one rectangle.
pub fn queue_bands<'a>(
    beside: &mut Beside<'a>,
    tile: RankTile,
    slots: usize,
    (i0, rows): (usize, usize),
    cols: [(usize, usize); 2],
    block: impl Fn((usize, usize), (usize, usize)) -> RankProduct<'a>,
) {
    let height = rows.div_ceil(slots.max(1)).div_ceil(tile.side()).max(1) * tile.side();
    for i in (i0..i0 + rows).step_by(height) {
        let band = (i, height.min(i0 + rows - i));
        let parts = cols.into_iter().filter(|c| c.1 > 0);
        beside.push(parts.map(|c| (block(band, c), tile)).collect());
    }
}

/// A slot's updates, the barrier after the last.
fn run_slot(inv: &Inverter, slot: Vec<(RankProduct<'_>, RankTile)>) -> Result<()> {
    let last = slot.len().saturating_sub(1);
    for (i, (piece, tile)) in slot.into_iter().enumerate() {
        rank_launch(inv, piece, tile, i == last)?;
    }
    Ok(())
}

/// Factors P·[A11; A21] = [L11; L21]·U11 in place for columns k0 .. k0+b and rows k0 .. n of
/// `a` (whole rows interchanged; L unit lower below the diagonal, U on and above), the pivots
/// into `w.piv[k0 .. k0+b]`, a failing pivot flagged in the status word. With `beside`
/// (tournament pivoting only) the interchanges move the panel's own columns only (the caller
/// moves the rest: [`Inverter::interchange`]) and the queued updates run beside the panel's
/// launches.
pub fn factor_panel(
    inv: &Inverter,
    a: &DeviceSquare,
    w: &PivotWork,
    k0: usize,
    b: usize,
    tol: f32,
    beside: Option<&mut Beside<'_>>,
) -> Result<()> {
    let end = k0 + b;
    let tournament = w.pivoting && w.pivots == Pivoting::Tournament;
    debug_assert!(beside.is_none() || tournament);
    let cols = if beside.is_some() { (k0, end) } else { (0, a.n) };
    let mut none = Beside::default();
    let beside = beside.unwrap_or(&mut none);
    let mut c0 = k0;
    // Columns of the previous leaf whose product A22 −= L21·U12 on this leaf's is pending.
    let mut pend = 0;
    while c0 < end {
        let leaf = Leaf {
            n: a.n,
            c0,
            width: LEAF.min(end - c0),
            tol,
            pivoting: w.pivoting,
            cols,
        };
        if tournament {
            let winners = inv.leaf_tournament(&a.buffer, leaf, pend, w, beside)?;
            // Up to a leaf's width of columns right of it (then the block's last leaf): U12 in
            // this leaf's last launch, the product A22 −= L21·U12 applied by the next leaf's
            // launches to each row they read; more: the solve from the unit L11 this leaf
            // leaves in its workspace, then one product.
            let cols = end - c0 - leaf.width;
            let right = if cols <= LEAF { cols } else { 0 };
            // A leaf with a pending product is its block's last: nothing right of it.
            debug_assert!(pend == 0 || right == 0);
            inv.traced(
                || format!("leaf finish at {c0}"),
                || inv.leaf_finish(&a.buffer, leaf, &w.rounds[winners], w, right, pend, beside),
            )?;
            if right == 0 {
                update_right_after(inv, a, w, c0, leaf.width, end)?;
            }
            pend = if right > 0 { leaf.width } else { 0 };
        } else {
            inv.leaf_start(&a.buffer, leaf, w)?;
            for p in c0..c0 + leaf.width {
                inv.leaf_step(&a.buffer, leaf, p, w)?;
            }
            inv.leaf_interchanges(&a.buffer, leaf, w)?;
            update_right(inv, a, w, c0, leaf.width, end)?;
        }
        c0 += leaf.width;
    }
    Ok(())
}

/// [`factor_panel`] with look-ahead: the panel beside `beside`'s queued updates, what is left
/// of them after it, then the block's interchanges on the other columns
/// ([`Inverter::interchange`]).
#[allow(clippy::too_many_arguments)]
pub fn factor_panel_ahead(
    inv: &Inverter,
    a: &DeviceSquare,
    w: &PivotWork,
    k0: usize,
    b: usize,
    tol: f32,
    beside: &mut Beside<'_>,
) -> Result<()> {
    factor_panel(inv, a, w, k0, b, tol, Some(beside))?;
    beside.flush(inv)?;
    inv.interchange(&a.buffer, a.n, k0, b, &w.piv)
}

/// The launches [`factor_panel`] with tournament pivoting makes one after the other (not
/// counting the solves right of a leaf, which only blocks of more than two leaves make).
pub fn panel_launches(inv: &Inverter, w: &PivotWork, n: usize, k0: usize, b: usize) -> usize {
    (k0..k0 + b)
        .step_by(LEAF)
        .map(|c0| inv.tournament_launches(w, n - c0) + 1)
        .sum()
}

/// After the factored columns k0 .. k0+b: A12 := L11⁻¹·A12 and A22 −= L21·A12 for the columns
/// k0+b .. `end` (rows k0 .. n).
pub fn update_right(
    inv: &Inverter,
    a: &DeviceSquare,
    w: &PivotWork,
    k0: usize,
    b: usize,
    end: usize,
) -> Result<()> {
    if end == k0 + b {
        return Ok(());
    }
    copy_unit_lower(inv, a, w, k0, b)?;
    update_right_after(inv, a, w, k0, b, end)
}

/// L11 of the factored columns k0 .. k0+b with its unit diagonal into `w.unit_l` (b x b).
pub fn copy_unit_lower(inv: &Inverter, a: &DeviceSquare, w: &PivotWork, k0: usize, b: usize) -> Result<()> {
    let v = a.view();
    inv.copy(
        Operand::new(&w.unit_l, View::row_major(b, b)),
        a.op(v.sub(k0, k0, b, b)),
        CopyMode::UnitLower,
        1.0,
    )
}

/// A12 := L11⁻¹·A12 for the columns k0+b .. `end` (rows k0 .. k0+b), the unit lower L11
/// (b x b, row-major) in `w.unit_l`.
pub fn solve_right(
    inv: &Inverter,
    a: &DeviceSquare,
    w: &PivotWork,
    k0: usize,
    b: usize,
    end: usize,
) -> Result<()> {
    let a12 = a.view().sub(k0, k0 + b, b, end - k0 - b);
    // A12ᵀ ← A12ᵀ·L11⁻ᵀ.
    trsm(inv.tiled(), a.op(a12.t()), &w.unit_l, View::row_major(b, b), false)
}

/// [`update_right`] with the unit lower L11 (b x b, row-major) in `w.unit_l` already.
fn update_right_after(
    inv: &Inverter,
    a: &DeviceSquare,
    w: &PivotWork,
    k0: usize,
    b: usize,
    end: usize,
) -> Result<()> {
    let (n, v, k) = (a.n, a.view(), inv.tiled());
    let cols = end - k0 - b;
    if cols == 0 {
        return Ok(());
    }
    solve_right(inv, a, w, k0, b, end)?;
    let rows = n - k0 - b;
    if rows == 0 {
        return Ok(());
    }
    let a12 = v.sub(k0, k0 + b, b, cols);
    let (c, l21) = (v.sub(k0 + b, k0 + b, rows, cols), v.sub(k0 + b, k0, rows, b));
    match w.update.tile(rows, cols, b) {
        // A22 −= L21·A12 with A12 read by rows.
        Some(tile) => rank_update(
            inv,
            RankProduct {
                c: a.op(c),
                x: a.op(l21),
                y: a.op(a12),
                below: None,
                update: Update::Subtract,
            },
            tile,
        ),
        None => k.gemm(Product::new(a.op(c), a.op(l21), a.op(a12.t())).subtract()),
    }
}

/// The general inverses' look-ahead ([`PanelSettings::look_ahead`], src/inverse/gje.rs and
/// lu.rs): each panel factored beside the previous block's update of the other columns, in
/// bands of rows, one beside each panel launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LookAhead {
    /// None: each panel after the whole previous update.
    Off,
    /// At every order with more than one block.
    Always,
    /// Where the H200 measured a gain (`figures/h200/experiments/look_ahead/`): from
    /// [`LOOK_AHEAD_MIN_ORDER`] on, Gauss-Jordan up to [`GJE_LOOK_AHEAD_MAX_ORDER`].
    Auto,
}

/// The least order [`LookAhead::Auto`] looks ahead at (below it the launches the look-ahead
/// adds to each block cost more than the update it hides).
pub const LOOK_AHEAD_MIN_ORDER: usize = 4096;

/// The largest order [`LookAhead::Auto`] runs Gauss-Jordan with look-ahead at (past it the
/// update beside the panel slows the panel more than it hides).
pub const GJE_LOOK_AHEAD_MAX_ORDER: usize = 8192;

impl LookAhead {
    /// Every choice, in the examples' order.
    pub const ALL: [LookAhead; 3] = [LookAhead::Off, LookAhead::Always, LookAhead::Auto];

    /// The name in the examples' flags.
    pub fn name(self) -> &'static str {
        match self {
            LookAhead::Off => "off",
            LookAhead::Always => "always",
            LookAhead::Auto => "auto",
        }
    }

    /// The choice named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Whether a sweep of order n (Gauss-Jordan's where `gje`) looks ahead.
    pub fn at(self, n: usize, gje: bool) -> bool {
        match self {
            LookAhead::Off => false,
            LookAhead::Always => true,
            LookAhead::Auto => n >= LOOK_AHEAD_MIN_ORDER && (!gje || n <= GJE_LOOK_AHEAD_MAX_ORDER),
        }
    }
}

/// How the LU inverse forms (PA)⁻¹ = U⁻¹·L⁻¹ from its factors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LowerInverse {
    /// L⁻¹ by a triangular solve with the identity, X·L = I (about s³ flops; the earlier
    /// path), then X := U⁻¹·X by a triangular solve (s³).
    Solve,
    /// L⁻¹ by the triangular inverse (about s³/3 flops):
    /// [`spd::trtri_by_blocks`](crate::inverse::spd::trtri_by_blocks) where the kernels invert
    /// diagonal blocks (products joining them), else [`spd::trtri`](crate::inverse::spd::trtri);
    /// then X := U⁻¹·X by a triangular solve (s³).
    Triangular,
    /// L⁻¹ and U⁻¹ both by the triangular inverse, then X = U⁻¹·L⁻¹ as one product over the
    /// depth where both are nonzero (entry (i, j) from depth max(i, j): about 2s³/3 flops on
    /// the packed panels, which skip the rest).
    Product,
}

impl LowerInverse {
    /// The name in the examples' flags.
    pub fn name(self) -> &'static str {
        match self {
            LowerInverse::Solve => "solve",
            LowerInverse::Triangular => "triangular",
            LowerInverse::Product => "product",
        }
    }

    /// The choice named `name` ("solve", "triangular" or "product").
    pub fn from_name(name: &str) -> Option<Self> {
        [LowerInverse::Solve, LowerInverse::Triangular, LowerInverse::Product]
            .into_iter()
            .find(|l| l.name() == name)
    }
}
