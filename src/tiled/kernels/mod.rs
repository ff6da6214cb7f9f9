//! The compiled compute kernels of the tiled method ([`TiledKernels`], the registry) and the
//! small buffers they share: the launched tile lists (cached by shape) and the status word where
//! the diagonal-block factor records the first pivot that is not positive. The launches live
//! with their kernel family: `product`, `solve` (triangular solves), `factor` (the
//! Cholesky's diagonal blocks and chains).

mod factor;
mod product;
mod solve;

pub(crate) use factor::ChainFactor;
pub use factor::{factor_chain_shared_bytes, factor_chain_slice, factor_chain_spin_limit};
pub use product::{DEPTH_PER_LAUNCH, PANEL_MIN_DEPTH, panel_rows};
pub(crate) use solve::ChainSolve;
pub use solve::{CHAIN_SPIN_LIMIT, chain_spin_limit};

use super::schedule::SOLVE_BLOCK;
use factor::{chain_ahead, chain_source, check_chain_tile, lcm};
use product::{PanelProducts, TexelProducts};

use super::config::{DiagonalFactor, KernelConfig};
use super::schedule::CholeskySchedule;
use super::launches::{LaunchCounts, LaunchKind};
use super::status::StatusWord;
use super::view::View;
use crate::error::{NumericalError, Result};
use crate::gl::{
    Buffer, BufferTarget, BufferUsage, ComputeLimits, ComputeProgram, Context, LazyProgram,
};
use crate::timing::Preheat;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use crate::tiled::table;

/// Launched tile lists by (rows, cols, mask shift, tile rows, tile cols, band of tile rows).
type TileLists = HashMap<(usize, usize, Option<isize>, usize, usize, usize), Buffer<[u32; 2]>>;

/// A view of a storage buffer: what a kernel reads or writes.
#[derive(Clone, Copy)]
pub struct Operand<'a> {
    /// The buffer.
    pub buffer: &'a Buffer<f32>,
    /// The block of it.
    pub view: View,
}

impl<'a> Operand<'a> {
    /// `view` of `buffer`.
    pub fn new(buffer: &'a Buffer<f32>, view: View) -> Self {
        Self { buffer, view }
    }

    /// The same buffer through another view.
    pub fn with(&self, view: View) -> Self {
        Self {
            buffer: self.buffer,
            view,
        }
    }
}

/// The tiled method's kernels, compiled for one context with one [`KernelConfig`].
pub struct TiledKernels {
    ctx: Context,
    config: KernelConfig,
    limits: ComputeLimits,
    gemm: LazyProgram,
    // The product kernel with quarter-size tiles, for products too small to fill the GPU
    // with full tiles (the panel updates of the recursion).
    gemm_small: Option<(LazyProgram, KernelConfig)>,
    // The product through buffer textures, with a texel configuration.
    texel: Option<TexelProducts>,
    // The product on packed panels, with shared-memory tiles that allow it.
    panel: Option<PanelProducts>,
    // Inverts diagonal blocks of order SOLVE_BLOCK for the solves (shared-memory tiles only).
    trtri: Option<LazyProgram>,
    // One solve with one right-hand side in one launch, on those inverses.
    trsv_chain: Option<LazyProgram>,
    // One solve of a right side of several columns in one launch, per vec4s of columns an
    // invocation keeps (CHAIN_COLUMN_VARIANTS).
    trsv_chain_cols: Option<Vec<LazyProgram>>,
    // Whether the renderer is a software one (where loops end at crate::gl::LOOP_LIMIT).
    software: bool,
    // The largest order whose several-column right sides are solved a chain per column.
    column_chains_order: usize,
    // Solves that ran chained (tests check the chain itself ran).
    chained: Cell<u64>,
    // The Cholesky of full storage as one launch (potrf_chain.comp), where its tiles fit.
    potrf_chain: Option<LazyProgram>,
    // Whether the Cholesky runs as that one launch, and factorizations that did so far.
    schedule: CholeskySchedule,
    chained_factors: Cell<u64>,
    // Whether the chain folds each sub-diagonal tile's last product into the next diagonal
    // tile's group (Tuning::chain_fold).
    chain_fold: bool,
    // How the chain polls its ready flags (Tuning::chain_poll).
    chain_poll: super::ChainPoll,
    // Whether the folded tile's flag is set before the diagonal group's update
    // (Tuning::chain_fold_early).
    chain_fold_early: bool,
    // Whether the chain drops the barriers the next wait makes redundant (Tuning::chain_lean).
    chain_lean: bool,
    // Later terms the chain checks at once after each wait (Tuning::chain_ahead).
    chain_ahead: usize,
    // The chain's tile order (Tuning::chain_tile; its inverted tiles are chain_tile² floats a
    // slot in `inverses`).
    chain_tile: usize,
    // The product kernel (full and small tiles) that then factors the diagonal block at its
    // output's corner (gemm.comp with FUSED_DIAG), where the tiles allow it.
    fused: Option<[(LazyProgram, KernelConfig); 2]>,
    potrf_block: LazyProgram,
    trsm_block: LazyProgram,
    potrf_inv_block: LazyProgram,
    // Order of the inverted diagonal blocks (potrf_inv_block's NB).
    diag: usize,
    // How the diagonal blocks are factored and inverted (potrf_inv_block and the fused kernels).
    factor: DiagonalFactor,
    // Outer block-column width of the blocked Cholesky (a multiple of diag).
    outer: usize,
    // The chained panels' width (TiledKernels::panel_outer).
    panel_outer: usize,
    // The order from which full storage is factored with RFP's split.
    split: usize,
    // The largest half CholeskySchedule::Split factors by one chained launch.
    split_chain: usize,
    // How the split solves L21 below a chained leaf, and the inverses of SOLVE_BLOCK its
    // block solve keeps (SOLVE_BLOCK² floats a block).
    split_solve: super::schedule::SplitSolve,
    solve_inverses: RefCell<Option<Buffer<f32>>>,
    // trtri_blocks.comp of orders below SOLVE_BLOCK, compiled on first use by the wide solve.
    trtri_orders: RefCell<HashMap<usize, ComputeProgram>>,
    // trsm_rows.comp per rows per work group and block order, compiled on first use.
    trsm_rows: RefCell<HashMap<(usize, usize), ComputeProgram>>,
    // The inverted diagonal blocks, diag x diag each, row-major, one slot per block column.
    inverses: RefCell<Option<Buffer<f32>>>,
    tile_lists: RefCell<TileLists>,
    // Kernel launches so far (glDispatchCompute calls), for counting what an operation costs.
    launches: Cell<u64>,
    // Of those, the packing launches of the products (texel and panel).
    packs: Cell<u64>,
    // The launches by kind, the kind the caller declared, and whether launches are skipped.
    by_kind: Cell<LaunchCounts>,
    kind: Cell<LaunchKind>,
    dry_run: Cell<bool>,
    status: StatusWord,
    no_scaling: Buffer<f32>,
    // The busy work run before timed stretches (nothing compiled on software renderers).
    preheat: Preheat,
}


impl TiledKernels {
    /// Compiles the kernels with `config` and the default block sizes (the context must have
    /// compute shaders).
    pub fn new(ctx: &Context, config: KernelConfig) -> Result<Self> {
        Self::tuned(ctx, config, super::TiledTuning::default())
    }

    /// Compiles the kernels with `config` and the Cholesky's block sizes and split order of
    /// `tuning` (the context must have compute shaders).
    pub fn tuned(
        ctx: &Context,
        config: KernelConfig,
        tuning: impl Into<super::TiledTuning>,
    ) -> Result<Self> {
        let tuning = tuning.into();
        let limits = ComputeLimits::query(ctx)?;
        let diag = tuning.diagonal_block_for(&config);
        let factor = tuning.diagonal_factor_for(&config);
        let software = crate::gl::DeviceInfo::query(ctx)?.software;
        let schedule = tuning.cholesky_schedule_for(software);
        let chain_tile = tuning.chain_tile_for(&config);
        let chain_fold = tuning.chain_fold_for(chain_tile);
        let chain_poll = tuning.chain_poll();
        let chain_fold_early = tuning.chain_fold_early();
        let chain_lean = tuning.chain_lean();
        let chain_ahead = chain_ahead(tuning.chain_ahead, config.diagonal_group(chain_tile))?;
        let group_limits = super::tuning::GroupLimits::query(ctx)?;
        // The chained panels' width: whole tiles of both the blocked factor and the chain.
        let both_tiles = lcm(diag, chain_tile);
        super::tuning::check_kernel_config(&config, diag, &group_limits)?;
        if chain_tile != diag {
            check_chain_tile(chain_tile)?;
            super::tuning::check_kernel_config(&config, chain_tile, &group_limits)?;
        }
        // Compiled on first use (LazyProgram): a first call compiles only what it reaches.
        let program = |kernel: &'static crate::gl::ComputeKernel| {
            LazyProgram::new(ctx, kernel, "", config.source(kernel.source))
        };
        Ok(Self {
            gemm: program(&table::GEMM),
            gemm_small: config.small().map(|small| {
                (
                    LazyProgram::new(
                        ctx,
                        &table::GEMM,
                        "small tiles",
                        small.source(table::GEMM.source),
                    ),
                    small,
                )
            }),
            texel: match config.texel {
                true => Some(TexelProducts::new(ctx, config)?),
                false => None,
            },
            panel: PanelProducts::new(
                ctx,
                config,
                &limits,
                tuning.fused_diagonal().then_some(diag),
                factor,
                tuning.panel.unwrap_or_default(),
            )?,
            fused: match (config.small(), config.shared && !config.texel) {
                (Some(small), true)
                    if tuning.fused_diagonal()
                        && config.wg_x == 16
                        && config.wg_y == 16
                        && small.bm().min(small.bn()) >= diag =>
                {
                    let fused = |c: KernelConfig, variant: &str| -> Result<_> {
                        let k = &table::GEMM_FUSED;
                        let source = fused_source(k, factor);
                        let c = KernelConfig { nb: diag, ..c };
                        Ok((LazyProgram::new(ctx, k, variant, c.source(&source)), c))
                    };
                    Some([fused(config, "")?, fused(small, "small tiles")?])
                }
                _ => None,
            },
            trtri: match config.shared && !config.texel {
                true => Some(LazyProgram::new(
                    ctx,
                    &table::TRTRI_BLOCKS,
                    "",
                    KernelConfig {
                        nb: SOLVE_BLOCK,
                        ..config
                    }
                    .source(table::TRTRI_BLOCKS.source),
                )),
                false => None,
            },
            trsv_chain: match config.shared && !config.texel {
                true => Some(LazyProgram::new(
                    ctx,
                    &table::TRSV_CHAIN,
                    "",
                    KernelConfig {
                        nb: SOLVE_BLOCK,
                        ..config
                    }
                    .source(table::TRSV_CHAIN.source),
                )),
                false => None,
            },
            trsv_chain_cols: match config.shared && !config.texel {
                true => Some(
                    solve::CHAIN_COLUMN_VARIANTS
                        .iter()
                        .map(|&cv| {
                            LazyProgram::new(
                                ctx,
                                &table::TRSV_CHAIN_COLS,
                                &format!("{} columns an invocation", 4 * cv),
                                KernelConfig {
                                    nb: SOLVE_BLOCK,
                                    ..config
                                }
                                .source(&format!(
                                    "#define CV {cv}u\n{}",
                                    table::TRSV_CHAIN_COLS.source
                                )),
                            )
                        })
                        .collect(),
                ),
                false => None,
            },
            software,
            column_chains_order: tuning.column_chains_order(),
            potrf_chain: match config.shared
                && !config.texel
                && factor_chain_shared_bytes(chain_tile, factor) as u64 <= limits.max_shared_bytes
            {
                true => Some(LazyProgram::new(
                    ctx,
                    &table::POTRF_CHAIN,
                    "",
                    KernelConfig {
                        nb: chain_tile,
                        ..config
                    }
                    .source(&chain_source(
                        config.diagonal_group(chain_tile),
                        chain_tile,
                        factor,
                        (chain_fold, chain_fold_early),
                        (chain_poll, chain_lean, chain_ahead),
                    )),
                )),
                false => None,
            },
            schedule,
            panel_outer: match (tuning.outer_block, schedule) {
                (None, CholeskySchedule::Auto) => super::schedule::PANELS_AUTO_OUTER
                    .max(tuning.outer_block_for(&config)),
                _ => tuning.outer_block_for(&config),
            }
            .div_ceil(both_tiles)
            .saturating_mul(both_tiles),
            chained_factors: Cell::new(0),
            chain_fold,
            chain_poll,
            chain_fold_early,
            chain_lean,
            chain_ahead,
            chain_tile,
            potrf_block: program(&table::POTRF_BLOCK),
            trsm_block: program(&table::TRSM_BLOCK),
            potrf_inv_block: LazyProgram::new(
                ctx,
                &table::POTRF_INV_BLOCK,
                "",
                KernelConfig { nb: diag, ..config }.source(&format!(
                    "{}{}{}{}",
                    table::SUBGROUPS_HEADER,
                    config.diagonal_group_defines(diag),
                    factor.function(),
                    table::POTRF_INV_BLOCK.source
                )),
            ),
            diag,
            factor,
            outer: tuning.outer_block_for(&config),
            split: tuning.split_order(),
            split_chain: tuning.split_chain_order(),
            split_solve: tuning.split_solve(),
            solve_inverses: RefCell::new(None),
            trtri_orders: RefCell::new(HashMap::new()),
            trsm_rows: RefCell::new(HashMap::new()),
            inverses: RefCell::new(None),
            tile_lists: RefCell::new(HashMap::new()),
            launches: Cell::new(0),
            chained: Cell::new(0),
            packs: Cell::new(0),
            by_kind: Cell::new(LaunchCounts::default()),
            kind: Cell::new(LaunchKind::Other),
            dry_run: Cell::new(false),
            status: StatusWord::new(ctx)?,
            no_scaling: Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Static, &[1.0])?,
            preheat: Preheat::new(ctx)?,
            ctx: ctx.clone(),
            config,
            limits,
        })
    }

    /// Every program these kernels hold that compiles on first use.
    fn lazy_programs(&self) -> Vec<&LazyProgram> {
        let mut programs: Vec<&LazyProgram> = vec![
            &self.gemm,
            &self.potrf_block,
            &self.trsm_block,
            &self.potrf_inv_block,
        ];
        programs.extend(self.gemm_small.as_ref().map(|(p, _)| p));
        programs.extend(&self.trtri);
        programs.extend(&self.trsv_chain);
        programs.extend(self.trsv_chain_cols.iter().flatten());
        programs.extend(&self.potrf_chain);
        programs.extend(self.fused.iter().flatten().map(|(p, _)| p));
        if let Some(panel) = &self.panel {
            programs.extend([&panel.pack, &panel.gemm.0]);
            programs.extend(panel.small.as_ref().map(|(p, _)| p));
            if let Some((_, fused)) = &panel.fused {
                programs.extend(fused.iter().flatten().map(|(p, _)| p));
            }
        }
        programs
    }

    /// Compiles every kernel not compiled yet (they compile on first use, so that a first
    /// call pays only for what it reaches), the split Cholesky's solve included, and returns
    /// how many compile on first use.
    pub fn compile_all(&self) -> Result<usize> {
        let programs = self.lazy_programs();
        programs.iter().for_each(|p| p.start());
        for p in &programs {
            p.get()?;
        }
        Ok(programs.len() + self.compile_split_solve()?)
    }

    /// The driver's binaries ([`ComputeProgram::binary`]) of every program compiled so far,
    /// by the program's name (kernel and variant; nothing is compiled to get them): for
    /// comparing on the device what the driver made of the same source in two processes.
    pub fn program_binaries(&self) -> Vec<(String, Vec<u8>)> {
        let own = |p: &ComputeProgram| p.binary().map(|(_, bytes)| (p.name().to_string(), bytes));
        let mut out: Vec<_> = self
            .lazy_programs()
            .into_iter()
            .filter_map(LazyProgram::compiled)
            .filter_map(own)
            .collect();
        out.extend(self.trtri_orders.borrow().values().filter_map(own));
        out.extend(self.trsm_rows.borrow().values().filter_map(own));
        out
    }

    /// Hands to the driver the chained programs that the Cholesky of order `m` in full storage
    /// and, with `solves`, the one-column solves with its factor reach, so that a driver
    /// compiling in its own threads compiles them side by side ([`LazyProgram::start`]).
    pub(crate) fn start_chained(&self, m: usize, solves: bool) {
        if self.chains_factor(m).is_some() {
            self.potrf_chain.iter().for_each(LazyProgram::start);
        }
        if solves {
            self.trtri
                .iter()
                .chain(&self.trsv_chain)
                .for_each(LazyProgram::start);
        }
    }

    /// Hands to the driver the packed-panel product's programs (the packing, full-size and
    /// quarter-size tiles) that an assembly reaches, to compile side by side where the driver
    /// compiles in its own threads ([`LazyProgram::start`]).
    pub(crate) fn start_products(&self) {
        if let Some(panel) = &self.panel {
            panel.pack.start();
            panel.gemm.0.start();
            panel.small.iter().for_each(|(p, _)| p.start());
        }
    }

    /// How many of the kernels that compile on first use have been compiled so far (the
    /// solves' programs per block order and rows per group included).
    pub fn compiled(&self) -> usize {
        let lazy = self.lazy_programs().iter().filter(|p| p.is_compiled()).count();
        lazy + self.trtri_orders.borrow().len() + self.trsm_rows.borrow().len()
    }

    /// The driver's binary ([`ComputeProgram::binary`]) of the chained Cholesky's kernel, where
    /// compiled: for checking on the device that the lanes factor's arrays stay in registers.
    pub fn chain_binary(&self) -> Option<Vec<u8>> {
        self.potrf_chain.as_ref()?.get().ok()?.binary().map(|(_, bytes)| bytes)
    }

    /// The driver's binaries ([`ComputeProgram::binary`]) of the packed-panel product kernels
    /// (full-size tiles, then the quarter-size ones where compiled): for reading on the device
    /// what the compiler made of a variant.
    pub fn panel_binaries(&self) -> Vec<(String, Vec<u8>)> {
        let Some(panel) = &self.panel else {
            return Vec::new();
        };
        [Some(("gemm_panel", &panel.gemm)), panel.small.as_ref().map(|s| ("gemm_panel_small", s))]
            .into_iter()
            .flatten()
            .filter_map(|(name, (p, _))| {
                p.get().ok()?.binary().map(|(_, bytes)| (name.to_string(), bytes))
            })
            .collect()
    }

    /// The context the kernels run on.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The tile sizes compiled in.
    pub fn config(&self) -> KernelConfig {
        self.config
    }

    /// The device's compute limits.
    pub fn limits(&self) -> ComputeLimits {
        self.limits
    }

    /// Kernel launches (glDispatchCompute calls) issued through these kernels so far: what an
    /// operation costs in launches is the difference around it.
    pub fn launches(&self) -> u64 {
        self.launches.get()
    }

    /// The busy work that brings the GPU's clocks up before timed runs (the benchmarks).
    pub fn preheat(&self) -> &Preheat {
        &self.preheat
    }

    /// Of [`TiledKernels::launches`], those that packed a product's operands for the texel
    /// kernel (software renderers: column-major RFP blocks, orders off multiples of 4).
    pub fn packs(&self) -> u64 {
        self.packs.get()
    }

    // One launch of the current kind counted.
    fn launched(&self) {
        self.launches.set(self.launches.get() + 1);
        let mut counts = self.by_kind.get();
        counts.add(self.kind.get());
        self.by_kind.set(counts);
    }

    // One packing launch counted (as a copy, whatever the current kind).
    fn launched_pack(&self) {
        self.launches.set(self.launches.get() + 1);
        self.packs.set(self.packs.get() + 1);
        let mut counts = self.by_kind.get();
        counts.add(LaunchKind::Copy);
        self.by_kind.set(counts);
    }

    // Dispatches `p` (unless this is a dry run) and counts it.
    fn run(&self, p: &ComputeProgram, groups: [u32; 3]) -> Result<()> {
        if !self.dry_run.get() {
            p.dispatch(groups)?;
        }
        self.launched();
        Ok(())
    }

    /// The launches so far per kind ([`TiledKernels::set_launch_kind`]).
    pub fn launch_counts(&self) -> LaunchCounts {
        self.by_kind.get()
    }

    /// Declares what the following launches do (for [`TiledKernels::launch_counts`]);
    /// returns the kind declared before.
    pub fn set_launch_kind(&self, kind: LaunchKind) -> LaunchKind {
        self.kind.replace(kind)
    }

    /// With `on`, launches are counted but not issued (nothing is computed: for counting what
    /// an operation launches at sizes the device could not run quickly).
    pub fn set_dry_run(&self, on: bool) {
        self.dry_run.set(on);
    }

    /// Turns a GL error pending after a batch of dispatches into a typed error.
    pub fn check(&self, during: &str) -> Result<()> {
        self.ctx.check(|| during.to_string())
    }

    /// Clears the status word before a factorization.
    pub fn reset_status(&self) -> Result<()> {
        self.status.reset()
    }

    /// Reads the status word: the first column whose pivot was not positive, as
    /// [`NumericalError::NotPositiveDefinite`] with the pivot before its square root.
    pub fn check_status(&self) -> Result<()> {
        status_result(self.status.failure()?)
    }

    /// Copies the status word's two words to `dst` from `offset` on, on the GPU, for a read
    /// that brings them back with other values ([`TiledKernels::check_status_words`]).
    pub(crate) fn copy_status(&self, dst: &Buffer<f32>, offset: usize) -> Result<()> {
        self.status.copy_to(dst, offset)
    }

    /// [`TiledKernels::check_status`] on the status word's two words as read back.
    pub(crate) fn check_status_words(&self, words: [u32; 2]) -> Result<()> {
        status_result(super::status::failure_in(words))
    }
}

/// A status word's failure as [`NumericalError::NotPositiveDefinite`].
fn status_result(failure: Option<(usize, f32)>) -> Result<()> {
    match failure {
        None => Ok(()),
        Some((column, pivot)) => Err(NumericalError::NotPositiveDefinite {
            column,
            pivot: f64::from(pivot),
        }
        .into()),
    }
}

/// The source of a product kernel with FUSED_DIAG that then factors the diagonal block at its
/// output's corner with `factor` (its function at the kernel's `// FUSED_DIAG_FUNCTION` line,
/// the subgroup directives first).
fn fused_source(k: &crate::gl::ComputeKernel, factor: DiagonalFactor) -> String {
    format!(
        "{}#define FUSED_DIAG\n#define INV_BINDING 6\n{}",
        table::SUBGROUPS_HEADER,
        k.source
            .replace("// FUSED_DIAG_FUNCTION", factor.function())
    )
}
