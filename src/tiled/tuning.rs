//! The tiled method's part of the tuning ([`TiledTuning`]: block sizes, the Cholesky's
//! schedules, the chain's options; `None` leaves a value to the kernels' defaults) and the
//! check of a kernel configuration against the device's work-group limits. The public
//! [`Tuning`](crate::tuning::Tuning) holds these fields beside the other methods' and converts
//! into this.

use super::KernelConfig;
use crate::error::{DeviceError, Result};
use crate::gl::Context;

/// The tiled method's tuning; `None` leaves a value to the kernels' default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TiledTuning {
    /// The order of the diagonal blocks the tiled Cholesky factors and inverts in one work
    /// group (a multiple of 16 from 16 to 128; default 64 with the GPUs' kernels, 32 with
    /// software renderers': [`KernelConfig::default_diagonal_block`]); set, it is also the
    /// chained Cholesky's tile order unless [`TiledTuning::chain_tile`] names another.
    pub diagonal_block: Option<usize>,
    /// The tiled Cholesky's outer block-column width, the rank of its trailing updates (1 to
    /// 65536, rounded up to a multiple of the diagonal blocks; default 512).
    pub outer_block: Option<usize>,
    /// Whether the tiled Cholesky's inner updates also factor the next diagonal block in the
    /// same launch where the kernels can (one dependent launch fewer per block; default no:
    /// with the GPUs' blocks of 64 the fused launch is slower,
    /// `figures/h200/experiments/cholesky_diag_sweep.csv`).
    pub fused_diagonal: Option<bool>,
    /// How the tiled Cholesky factors and inverts its diagonal blocks (default
    /// [`KernelConfig::default_diagonal_factor`]: column by column).
    pub diagonal_factor: Option<super::DiagonalFactor>,
    /// The order from which full storage is factored with RFP's split (default 16384).
    pub split_order: Option<usize>,
    /// The packed-panel product's variant (k-slice depth, tile order, padded panels, register
    /// double buffering, unroll pragma, A·√d packed once; default
    /// [`PanelVariant::DEFAULT`](super::PanelVariant)).
    pub panel: Option<super::PanelVariant>,
    /// How the tiled Cholesky of full storage is scheduled: blocked launches, one chained
    /// launch, or chained panels with trailing products (default on GPUs
    /// [`GPU_CHOLESKY_SCHEDULE`](super::schedule::GPU_CHOLESKY_SCHEDULE), Auto; on
    /// software renderers [`CholeskySchedule::Blocked`](super::schedule::CholeskySchedule)).
    pub cholesky_schedule: Option<super::schedule::CholeskySchedule>,
    /// Whether the chained Cholesky (glsl/tiled/potrf_chain.comp) folds each sub-diagonal
    /// tile's last product L_{j+1,j} = acc·L_jj⁻ᵀ into the work group of the next diagonal
    /// tile: one flag hand-off fewer per diagonal step on its critical path (default: with
    /// tiles of 32 or less, [`TiledTuning::chain_fold_for`]).
    pub chain_fold: Option<bool>,
    /// How the chained Cholesky's waiting invocation polls a tile's ready flag (default
    /// [`ChainPoll::Load`](super::ChainPoll), the fastest measured:
    /// `figures/h200/experiments/cholesky_path.txt`).
    pub chain_poll: Option<super::ChainPoll>,
    /// With [`TiledTuning::chain_fold`]: whether the diagonal group publishes the folded tile
    /// L_{j+1,j} as soon as it is written, before its own update from it, so that the next
    /// sub-diagonal tile's sum (on the critical path) does not wait for that update (default no).
    pub chain_fold_early: Option<bool>,
    /// Whether the chained Cholesky drops the barrier after each term's last slice where the
    /// next term's wait (a barrier itself) follows: one barrier fewer per term (default yes).
    pub chain_lean: Option<bool>,
    /// The largest half [`CholeskySchedule::Split`](super::schedule::CholeskySchedule)
    /// factors by one chained launch (larger halves are split again; default
    /// [`SPLIT_CHAIN_ORDER`](super::schedule::SPLIT_CHAIN_ORDER)).
    pub split_chain_order: Option<usize>,
    /// How the split Cholesky solves L21 below a chained leaf (default
    /// [`SplitSolve::DEFAULT`](super::schedule::SplitSolve::DEFAULT): by rows, one
    /// launch per outer block of 512 columns).
    pub split_solve: Option<super::schedule::SplitSolve>,
    /// How many terms after one it waited for the chained Cholesky's work group checks at once,
    /// one flag per invocation, before it waits again (0: a wait for every term; at most
    /// [`CHAIN_AHEAD_MAX`](super::schedule::CHAIN_AHEAD_MAX) and half the chain's work
    /// group; default [`CHAIN_AHEAD`](super::schedule::CHAIN_AHEAD), or half the work
    /// group where that is smaller).
    pub chain_ahead: Option<usize>,
    /// The order of the chained Cholesky's tiles (a multiple of 16 from 16 to 128; default
    /// [`TiledTuning::diagonal_block`] where that is set, else the kernels'
    /// [`KernelConfig::default_chain_tile`](super::KernelConfig::default_chain_tile)):
    /// the blocked Cholesky (RFP's) keeps [`TiledTuning::diagonal_block`].
    pub chain_tile: Option<usize>,
    /// The largest order whose right sides of several columns (up to 32) are solved by a
    /// chain per column side by side (glsl/tiled/trsv_chain.comp); past it, by one chain for
    /// all the columns (glsl/tiled/trsv_chain_cols.comp; default
    /// [`COLUMN_CHAINS_ORDER`](super::schedule::COLUMN_CHAINS_ORDER)).
    pub column_chains_order: Option<usize>,
}

impl TiledTuning {
    /// [`TiledTuning::diagonal_block`] or the default of kernels that do not fuse blocks of 64
    /// (32; [`TiledTuning::diagonal_block_for`] gives a configuration's).
    pub fn diagonal_block(&self) -> usize {
        self.diagonal_block
            .unwrap_or(super::schedule::DIAG_BLOCK)
    }

    /// [`TiledTuning::outer_block`] or its default, rounded up to whole diagonal blocks of
    /// [`TiledTuning::diagonal_block`].
    pub fn outer_block(&self) -> usize {
        Self::whole_blocks(self.outer_block, self.diagonal_block())
    }

    /// [`TiledTuning::diagonal_block`] or the default of the kernels of `config`.
    pub fn diagonal_block_for(&self, config: &KernelConfig) -> usize {
        self.diagonal_block
            .unwrap_or(config.default_diagonal_block())
    }

    /// [`TiledTuning::outer_block`] or its default, rounded up to whole diagonal blocks of the
    /// kernels of `config`.
    pub fn outer_block_for(&self, config: &KernelConfig) -> usize {
        Self::whole_blocks(self.outer_block, self.diagonal_block_for(config))
    }

    fn whole_blocks(outer: Option<usize>, diag: usize) -> usize {
        outer
            .unwrap_or(super::schedule::OUTER_BLOCK)
            .max(1)
            .div_ceil(diag)
            * diag
    }

    /// [`TiledTuning::diagonal_factor`] or the default of the kernels of `config`.
    pub fn diagonal_factor_for(&self, config: &KernelConfig) -> super::DiagonalFactor {
        self.diagonal_factor
            .unwrap_or(config.default_diagonal_factor())
    }

    /// [`TiledTuning::fused_diagonal`] or its default (no).
    pub fn fused_diagonal(&self) -> bool {
        self.fused_diagonal.unwrap_or(false)
    }

    /// [`TiledTuning::chain_fold`] or its default for chained tiles of order `tile`: yes up to 32
    /// (the fold speeds up tiles of 32 and slows tiles of 64:
    /// `figures/h200/experiments/chain_ahead.csv`, `figures/h200/experiments/cholesky_path.txt`).
    pub fn chain_fold_for(&self, tile: usize) -> bool {
        self.chain_fold.unwrap_or(tile <= 32)
    }

    /// [`TiledTuning::chain_poll`] or its default ([`ChainPoll::Load`](super::ChainPoll):
    /// the fastest measured, `figures/h200/experiments/cholesky_path.txt`).
    pub fn chain_poll(&self) -> super::ChainPoll {
        self.chain_poll.unwrap_or_default()
    }

    /// [`TiledTuning::chain_fold_early`] or its default (no).
    pub fn chain_fold_early(&self) -> bool {
        self.chain_fold_early.unwrap_or(false)
    }

    /// [`TiledTuning::chain_lean`] or its default (yes: the same factor, a little
    /// faster, `figures/h200/experiments/cholesky_path.txt`).
    pub fn chain_lean(&self) -> bool {
        self.chain_lean.unwrap_or(true)
    }

    /// [`TiledTuning::split_order`] or its default.
    pub fn split_order(&self) -> usize {
        self.split_order
            .unwrap_or(super::schedule::SPLIT_ORDER)
    }

    /// [`TiledTuning::cholesky_schedule`] or Blocked (the software renderers' default;
    /// [`TiledTuning::cholesky_schedule_for`] gives a device's).
    pub fn cholesky_schedule(&self) -> super::schedule::CholeskySchedule {
        self.cholesky_schedule.unwrap_or_default()
    }

    /// [`TiledTuning::cholesky_schedule`] or the default of the device: blocked on software
    /// renderers, [`GPU_CHOLESKY_SCHEDULE`](super::schedule::GPU_CHOLESKY_SCHEDULE) on GPUs.
    pub fn cholesky_schedule_for(&self, software: bool) -> super::schedule::CholeskySchedule {
        match (self.cholesky_schedule, software) {
            (Some(s), _) => s,
            (None, true) => super::schedule::CholeskySchedule::Blocked,
            (None, false) => super::schedule::GPU_CHOLESKY_SCHEDULE,
        }
    }

    /// [`TiledTuning::split_chain_order`] or its default (at least 1).
    pub fn split_chain_order(&self) -> usize {
        self.split_chain_order
            .unwrap_or(super::schedule::SPLIT_CHAIN_ORDER)
            .max(1)
    }

    /// [`TiledTuning::column_chains_order`] or its default.
    pub fn column_chains_order(&self) -> usize {
        self.column_chains_order
            .unwrap_or(super::schedule::COLUMN_CHAINS_ORDER)
    }

    /// [`TiledTuning::split_solve`] or its default (by rows).
    pub fn split_solve(&self) -> super::schedule::SplitSolve {
        self.split_solve.unwrap_or_default()
    }

    /// [`TiledTuning::chain_tile`] or its default with the kernels of `config`.
    pub fn chain_tile_for(&self, config: &KernelConfig) -> usize {
        match (self.chain_tile, self.diagonal_block) {
            (Some(t), _) => t,
            (None, Some(_)) => self.diagonal_block_for(config),
            (None, None) => config.default_chain_tile(),
        }
    }
}

/// The compute limits a kernel configuration must respect on this device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupLimits {
    /// GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS.
    pub invocations: u64,
    /// GL_MAX_COMPUTE_WORK_GROUP_SIZE along x and y.
    pub size: [u64; 2],
    /// GL_MAX_COMPUTE_SHARED_MEMORY_SIZE in bytes.
    pub shared_bytes: u64,
}

impl GroupLimits {
    /// Asks the driver of `ctx` (which must have compute shaders).
    pub fn query(ctx: &Context) -> Result<Self> {
        let compute = crate::gl::ComputeLimits::query(ctx)?;
        let size = crate::gl::max_group_size(ctx);
        let limits = Self {
            invocations: u64::from(compute.max_invocations),
            size: [u64::from(size[0]), u64::from(size[1])],
            shared_bytes: compute.max_shared_bytes,
        };
        ctx.check(|| "querying compute work group limits".into())?;
        Ok(limits)
    }
}

/// Checks a kernel configuration against the device: its work groups (the product's and the
/// diagonal block's of `diag` x `diag`) within the invocation and size limits, its shared
/// memory within the device's.
pub fn check_kernel_config(config: &KernelConfig, diag: usize, limits: &GroupLimits) -> Result<()> {
    let bad = |why: String| -> Result<()> {
        Err(DeviceError::BadTuning {
            what: format!(
                "the product kernel's tiles {},{},{},{},{},{},{}",
                config.wg_x,
                config.wg_y,
                config.tm,
                config.tn,
                config.bk,
                if config.texel {
                    2
                } else {
                    u8::from(config.shared)
                },
                config.nb
            ),
            why,
        }
        .into())
    };
    let (wx, wy) = (config.wg_x as u64, config.wg_y as u64);
    if wx * wy > limits.invocations {
        return bad(format!(
            "a work group of {wx} x {wy} invocations exceeds this device's \
             GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS of {}",
            limits.invocations
        ));
    }
    if wx > limits.size[0] || wy > limits.size[1] {
        return bad(format!(
            "a work group of {wx} x {wy} exceeds this device's GL_MAX_COMPUTE_WORK_GROUP_SIZE \
             of {} x {}",
            limits.size[0], limits.size[1]
        ));
    }
    let (dx, dy) = config.diagonal_group(diag);
    if (dx * dy) as u64 > limits.invocations {
        return bad(format!(
            "the diagonal blocks' work group of {dx} x {dy} invocations exceeds this device's \
             GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS of {}",
            limits.invocations
        ));
    }
    let shared = config.shared_bytes() as u64;
    // The blocks of order nb factored and solved in shared memory (potrf_block, trsm_block:
    // the block padded, and two columns), and the inverted diagonal blocks' columns, rows and
    // pivots (potrf_inv_block: five vectors of `diag`; more with the panels' factor).
    let nb = config.nb as u64;
    let blocks = (nb * (nb + 1) + 2 * nb) * 4;
    let inverted = super::DiagonalFactor::ALL
        .map(|f| f.shared_bytes(diag) as u64)
        .into_iter()
        .max()
        .unwrap_or(0);
    for (what, bytes) in [
        ("the product's k-slices", shared),
        ("the diagonal blocks", blocks),
        ("the inverted diagonal blocks", inverted),
    ] {
        if bytes > limits.shared_bytes {
            return bad(format!(
                "{what} take {bytes} bytes of shared memory, and this device has \
                 GL_MAX_COMPUTE_SHARED_MEMORY_SIZE = {}",
                limits.shared_bytes
            ));
        }
    }
    Ok(())
}
