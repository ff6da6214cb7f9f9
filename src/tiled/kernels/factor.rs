//! The factorization family's launches: the diagonal blocks' factor (and inverse), the fused
//! update-and-factor of the blocked Cholesky, and the chained Cholesky (one launch, or panels),
//! with the block sizes and chain options the tuning sets.

use crate::tiled::config::DiagonalFactor;
use crate::tiled::schedule::CholeskySchedule;
use crate::tiled::product::Product;
use crate::error::{Error, Result};
use crate::gl::{
    Buffer, BufferTarget, BufferUsage, Uniform,
};

use crate::tiled::table;
use super::*;
use super::product::{SMALL_PRODUCT_TILES, product_views};
use super::solve::CHAIN_MIN_SPINS;

/// Loop iterations one invocation of the chained Cholesky runs per tile column (its ticket,
/// the wait and the T-deep product of one k step, constant loops unrolled) beyond the tile's
/// order, and for the rest of its work (the diagonal factor, the product with the inverse).
pub(super) const FACTOR_CHAIN_LOOPS_PER_COLUMN: usize = 24;

pub(super) const FACTOR_CHAIN_LOOPS_FIXED: usize = 4096;

/// The polls a work group of the chained Cholesky over `tile_columns` tile columns of order
/// `tile` may spend waiting so that no invocation passes [`crate::gl::LOOP_LIMIT`]: at most
/// [`CHAIN_SPIN_LIMIT`]; `None` where too few are left (the factorization runs blocked).
pub fn factor_chain_spin_limit(tile_columns: usize, tile: usize) -> Option<usize> {
    let per_column = tile + FACTOR_CHAIN_LOOPS_PER_COLUMN;
    let rest = crate::gl::LOOP_LIMIT
        .checked_sub(tile_columns.saturating_mul(per_column) + FACTOR_CHAIN_LOOPS_FIXED)?;
    let limit = rest.min(CHAIN_SPIN_LIMIT);
    (limit >= CHAIN_MIN_SPINS).then_some(limit)
}

/// Depth of the slices the chained Cholesky's tile products run over (it divides every
/// diagonal-block order, multiples of 16).
pub fn factor_chain_slice(tile: usize) -> usize {
    if tile.is_multiple_of(32) { 32 } else { 16 }
}

/// Shared memory of the chained Cholesky's work group with tiles of order `tile` (two padded
/// slices of [`factor_chain_slice`] columns beside the diagonal factor's own), in bytes.
pub fn factor_chain_shared_bytes(tile: usize, factor: DiagonalFactor) -> usize {
    2 * tile * (factor_chain_slice(tile) + 1) * 4 + factor.shared_bytes(tile) + 16
}

/// What a chained Cholesky ([`TiledKernels::potrf_chain`]) works on.
pub(crate) struct ChainFactor<'a> {
    /// The matrix (full storage, one buffer; or a block column [B11; B21] of it whose width is
    /// a multiple of the tiles' order), factored in place.
    pub c: Operand<'a>,
    /// Its first column in the whole matrix (for the status word).
    pub column0: usize,
    /// Tickets, the gave-up word and one ready flag per tile, zeroed (the gave-up word may be
    /// set to give up at once).
    pub sync: &'a Buffer<u32>,
    /// Two words for the diagonal factor's own status (the chain reports through the status
    /// word with atomicMin instead).
    pub scratch: &'a Buffer<u32>,
    /// Polls a work group may spend waiting in all ([`factor_chain_spin_limit`]).
    pub spin_limit: usize,
}

/// The source of the chained Cholesky for a work group of `(px, py)` (the diagonal factor's)
/// with the diagonal factor `factor` at its `// FUSED_DIAG_FUNCTION` line, each sub-diagonal
/// tile's last product folded into the next diagonal tile's group where `fold`
/// ([`TiledTuning::chain_fold`](crate::tiled::TiledTuning::chain_fold); its flag set before the group's update
/// where `early`, [`TiledTuning::chain_fold_early`](crate::tiled::TiledTuning::chain_fold_early)), its flags
/// polled as `poll` says ([`TiledTuning::chain_poll`](crate::tiled::TiledTuning::chain_poll)), the barriers the
/// next wait makes redundant dropped where `lean` ([`TiledTuning::chain_lean`](crate::tiled::TiledTuning::chain_lean)),
/// `ahead` later terms checked at once after each wait ([`TiledTuning::chain_ahead`](crate::tiled::TiledTuning::chain_ahead)).
pub(super) fn chain_source(
    (px, py): (usize, usize),
    diag: usize,
    factor: DiagonalFactor,
    (fold, early): (bool, bool),
    (poll, lean, ahead): (crate::tiled::ChainPoll, bool, usize),
) -> String {
    let ks = factor_chain_slice(diag);
    let (fold, early, lean) = (u8::from(fold), u8::from(early), u8::from(lean));
    let (poll, every) = (poll.define(), crate::tiled::schedule::CHAIN_GAVE_UP_EVERY);
    format!(
        "{}#define PX {px}\n#define PY {py}\n#define KS {ks}\n#define CHAIN_FOLD {fold}\n#define CHAIN_FOLD_EARLY {early}\n#define CHAIN_LEAN {lean}\n#define CHAIN_POLL {poll}\n#define CHAIN_GAVE_UP_EVERY {every}u\n#define CHAIN_AHEAD {ahead}\n#define FUSED_DIAG\n#define INV_BINDING 1\n{}",
        table::SUBGROUPS_HEADER,
        table::POTRF_CHAIN
            .source
            .replace("// FUSED_DIAG_FUNCTION", factor.function())
    )
}

/// The chain's look-ahead for its work group of `(px, py)`: `ahead`
/// ([`TiledTuning::chain_ahead`](crate::tiled::TiledTuning::chain_ahead)) where the group has an invocation for
/// each flag it checks (two per term) and it is at most
/// [`CHAIN_AHEAD_MAX`](crate::tiled::schedule::CHAIN_AHEAD_MAX), else the tuning error; without one
/// [`CHAIN_AHEAD`](crate::tiled::schedule::CHAIN_AHEAD) or the most the group checks.
pub(super) fn chain_ahead(ahead: Option<usize>, (px, py): (usize, usize)) -> Result<usize> {
    let max = crate::tiled::schedule::CHAIN_AHEAD_MAX.min(px * py / 2);
    let Some(ahead) = ahead else {
        return Ok(crate::tiled::schedule::CHAIN_AHEAD.min(max));
    };
    if ahead <= max {
        return Ok(ahead);
    }
    Err(crate::error::DeviceError::BadTuning {
        what: format!("the chained Cholesky's look-ahead of {ahead} terms"),
        why: format!(
            "its work group of {px} x {py} invocations checks at most {max} terms at once"
        ),
    }
    .into())
}

/// The least common multiple of two orders (both at least 1).
pub(super) fn lcm(a: usize, b: usize) -> usize {
    let gcd = |mut x: usize, mut y: usize| {
        while y != 0 {
            (x, y) = (y, x % y);
        }
        x
    };
    a / gcd(a, b).max(1) * b
}

/// `tile` ([`TiledTuning::chain_tile`](crate::tiled::TiledTuning::chain_tile)) where it is an order the chain's
/// kernel takes (a multiple of 16 from 16 to 128), else the tuning error.
pub(super) fn check_chain_tile(tile: usize) -> Result<()> {
    if (16..=128).contains(&tile) && tile.is_multiple_of(16) {
        return Ok(());
    }
    Err(crate::error::DeviceError::BadTuning {
        what: format!("the chained Cholesky's tiles of {tile}"),
        why: "they must be a multiple of 16 from 16 to 128".into(),
    }
    .into())
}

impl TiledKernels {
    /// The order from which full storage is factored with RFP's split.
    pub fn split_order(&self) -> usize {
        self.split
    }

    /// The largest half [`CholeskySchedule::Split`] factors by one chained launch.
    pub fn split_chain_order(&self) -> usize {
        self.split_chain
    }

    /// Later terms the chained Cholesky checks at once after each wait
    /// ([`TiledTuning::chain_ahead`](crate::tiled::TiledTuning::chain_ahead)).
    pub fn chain_ahead(&self) -> usize {
        self.chain_ahead
    }

    /// The chained Cholesky's tile order ([`TiledTuning::chain_tile`](crate::tiled::TiledTuning::chain_tile)).
    pub fn chain_tile(&self) -> usize {
        self.chain_tile
    }

    /// How the split Cholesky solves L21 below a chained leaf
    /// ([`TiledTuning::split_solve`](crate::tiled::TiledTuning::split_solve)).
    pub fn split_solve(&self) -> crate::tiled::schedule::SplitSolve {
        self.split_solve
    }

    /// Factors the diagonal block `c` (order ≤ nb) in place; `column0` is its first column in
    /// the whole matrix, for the status word.
    pub fn potrf_block(&self, c: Operand<'_>, column0: usize) -> Result<()> {
        let v = c.view;
        debug_assert!(v.rows == v.cols && v.rows <= self.config.nb);
        c.buffer.bind_base(0);
        self.status.bind_base(5);
        let u = |v: usize| Uniform::U32(v as u32);
        let p = self.potrf_block.get()?;
        p.set_all(&[
            ("n", u(v.rows)),
            ("c_off", u(v.offset)),
            ("c_rs", u(v.rs)),
            ("c_cs", u(v.cs)),
            ("column0", u(column0)),
        ])?;
        self.run(p, [1, 1, 1])?;
        Ok(())
    }

    /// c ← c − a·bᵀ on the entries with j ≤ i (the blocked Cholesky's inner update of an
    /// outer block column), and in the same launch the diagonal block of order `n` at c's
    /// corner factored and its inverse written to `slot`, as [`TiledKernels::potrf_inv_block`]
    /// would (`column0`: its first global column). `Ok(false)`, nothing launched, where these
    /// kernels cannot (buffer-texture or register-only tiles, a product they would pack, a
    /// block larger than a tile): then run the two apart.
    pub fn update_and_factor(
        &self,
        c: Operand<'_>,
        a: Operand<'_>,
        b: Operand<'_>,
        (n, column0, slot): (usize, usize, usize),
    ) -> Result<bool> {
        let (cv, av, bv) = (c.view, a.view, b.view);
        debug_assert!(av.rows == cv.rows && bv.rows == cv.cols && av.cols == bv.cols);
        let Some(fused) = &self.fused else {
            return Ok(false);
        };
        let full_tiles = cv.rows.div_ceil(self.config.bm()) * cv.cols.div_ceil(self.config.bn());
        let (p, config) = &fused[usize::from(full_tiles < SMALL_PRODUCT_TILES)];
        if av.cols >= self.panel_min_depth()
            || n == 0
            || n > self.diag
            || n > config.bm().min(config.bn())
            || n > cv.rows.min(cv.cols)
        {
            return Ok(false);
        }
        self.reserve_inverses(slot + 1)?;
        let inv = self.inverses.borrow();
        let inv = inv
            .as_ref()
            .ok_or_else(|| Error::shape("no inverse slots reserved"))?;
        c.buffer.bind_base(0);
        a.buffer.bind_base(1);
        b.buffer.bind_base(2);
        self.no_scaling.bind_base(3);
        self.status.bind_base(5);
        inv.bind_base(6);
        let u = |v: usize| Uniform::U32(v as u32);
        let p = p.get()?;
        p.set_all(&product_views(cv, av, bv))?;
        p.set_all(&[
            ("alpha", Uniform::F32(-1.0)),
            ("beta", Uniform::F32(1.0)),
            ("use_d", Uniform::I32(0)),
            ("lower", Uniform::I32(1)),
            ("shift", Uniform::I32(0)),
            ("diag_n", u(n)),
            ("diag_column0", u(column0)),
            ("diag_inv_off", u(slot * self.diag * self.diag)),
        ])?;
        self.dispatch_tiles(p, *config, cv, Some(0))?;
        Ok(true)
    }

    /// c ← c − a·aᵀ on the lower tiles (the blocked Cholesky's trailing update, `b` the first
    /// rows of `a`) on packed panels, and in the same launch the diagonal block of order `n` at
    /// c's corner factored and its inverse written to `slot` (`column0`: its first global
    /// column). `Ok(false)`, nothing launched, where these kernels cannot (no fused panel
    /// kernel, a block larger than its tiles, a product too shallow or too small to pack, a
    /// panel past a buffer): then run the two apart.
    pub fn trailing_and_factor(
        &self,
        c: Operand<'_>,
        a: Operand<'_>,
        b: Operand<'_>,
        (n, column0, slot): (usize, usize, usize),
    ) -> Result<bool> {
        let (cv, av) = (c.view, a.view);
        let Some(panel) = &self.panel else {
            return Ok(false);
        };
        let Some((diag, fused)) = &panel.fused else {
            return Ok(false);
        };
        let full_tiles = cv.rows.div_ceil(self.config.bm()) * cv.cols.div_ceil(self.config.bn());
        let choice = match (&fused[1], full_tiles < SMALL_PRODUCT_TILES) {
            (Some(small), true) => Some(small),
            _ => fused[0].as_ref(),
        };
        let Some((p, config)) = choice else {
            return Ok(false);
        };
        if n == 0
            || n > *diag
            || n > config.bm().min(config.bn())
            || n > cv.rows.min(cv.cols)
            || av.cols < self.panel_min_depth()
            || cv.rows <= config.bm()
            || cv.cols <= config.bn()
        {
            return Ok(false);
        }
        self.reserve_inverses(slot + 1)?;
        let product = Product::new(c, a, b).subtract().lower();
        self.gemm_panel(panel, (p, *config), product, 0, Some((n, column0, slot)))
    }

    /// The Cholesky of `chain.c` (full storage, order m) in place as one chained launch
    /// (glsl/tiled/potrf_chain.comp), tiles of [`TiledKernels::chain_tile`], the inverses of
    /// the diagonal tiles in the inverse slots' buffer, chain_tile² floats each (the blocked
    /// Cholesky's slots where the orders agree); whether it gave up is in `chain.sync[1]`.
    pub(crate) fn potrf_chain(&self, chain: &ChainFactor<'_>) -> Result<()> {
        let p = self
            .potrf_chain
            .as_ref()
            .ok_or_else(|| Error::shape("these kernels have no chained Cholesky"))?
            .get()?;
        let v = chain.c.view;
        let t = self.chain_tile;
        let (tiles, col_tiles) = (v.rows.div_ceil(t), v.cols.div_ceil(t));
        self.reserve_inverse_floats(col_tiles * t * t)?;
        let inv = self.inverses.borrow();
        let inv = inv
            .as_ref()
            .ok_or_else(|| Error::shape("no inverse slots reserved"))?;
        chain.c.buffer.bind_base(0);
        inv.bind_base(1);
        inv.bind_base(7);
        chain.sync.bind_base(3);
        chain.scratch.bind_base(5);
        self.status.bind_base(6);
        let u = |v: usize| Uniform::U32(v as u32);
        p.set_all(&[
            ("m", u(v.rows)),
            ("n", u(v.cols)),
            ("column0", u(chain.column0)),
            ("tiles", u(tiles)),
            ("c_off", u(v.offset)),
            ("c_rs", u(v.rs)),
            ("c_cs", u(v.cs)),
            ("spin_limit", u(chain.spin_limit)),
        ])?;
        let groups = col_tiles * tiles - col_tiles * col_tiles.saturating_sub(1) / 2;
        self.run(p, [groups as u32, 1, 1])?;
        Ok(())
    }

    /// How the Cholesky of order `m` (full storage, one buffer) is chained
    /// ([`CholeskySchedule::Chain`], [`CholeskySchedule::Panels`] or
    /// [`CholeskySchedule::Split`]), or `None` (blocked): the schedule chooses it, the kernels
    /// have the chain and one launch can take its tiles (the split's, of its largest leaf: a
    /// device that launches 65,535 work groups at most chains the leaves of 4096 on tiles of
    /// 32, 8,256 groups, at any order).
    pub fn chains_factor(&self, m: usize) -> Option<CholeskySchedule> {
        let chained = self.schedule.resolve(m);
        let largest = match chained {
            CholeskySchedule::Split => m.min(self.split_chain.max(self.chain_tile)),
            _ => m,
        };
        let tiles = largest.div_ceil(self.chain_tile.max(1));
        (self.potrf_chain.is_some()
            && chained != CholeskySchedule::Blocked
            && tiles * (tiles + 1) / 2 <= self.limits.max_groups_x as usize)
            .then_some(chained)
    }

    /// The Cholesky's schedule ([`CholeskySchedule`]).
    pub fn cholesky_schedule(&self) -> CholeskySchedule {
        self.schedule
    }

    /// Whether the chained Cholesky folds each sub-diagonal tile's last product into the next
    /// diagonal tile's work group ([`TiledTuning::chain_fold`](crate::tiled::TiledTuning::chain_fold)).
    pub fn chain_fold(&self) -> bool {
        self.chain_fold
    }

    /// How the chained Cholesky polls its ready flags
    /// ([`TiledTuning::chain_poll`](crate::tiled::TiledTuning::chain_poll)).
    pub fn chain_poll(&self) -> crate::tiled::ChainPoll {
        self.chain_poll
    }

    /// Whether the folded chain publishes each folded tile before the diagonal group's update
    /// from it ([`TiledTuning::chain_fold_early`](crate::tiled::TiledTuning::chain_fold_early)).
    pub fn chain_fold_early(&self) -> bool {
        self.chain_fold_early
    }

    /// Whether the chained Cholesky drops the barriers the next wait makes redundant
    /// ([`TiledTuning::chain_lean`](crate::tiled::TiledTuning::chain_lean)).
    pub fn chain_lean(&self) -> bool {
        self.chain_lean
    }

    /// Factorizations that ran as one chained launch ([`TiledKernels::potrf_chain`]) so far.
    pub fn chained_factors(&self) -> u64 {
        self.chained_factors.get()
    }

    pub(crate) fn factor_chained(&self) {
        self.chained_factors.set(self.chained_factors.get() + 1);
    }

    /// Order of the inverted diagonal blocks of the blocked Cholesky.
    pub fn diag(&self) -> usize {
        self.diag
    }

    /// How the blocked Cholesky factors and inverts its diagonal blocks.
    pub fn diagonal_factor(&self) -> DiagonalFactor {
        self.factor
    }

    /// Width of the outer block columns of the blocked Cholesky (a multiple of
    /// [`TiledKernels::diag`]).
    pub fn outer(&self) -> usize {
        self.outer
    }

    /// The chained panels' width: [`TiledKernels::outer`], or at least
    /// [`PANELS_AUTO_OUTER`](crate::tiled::schedule::PANELS_AUTO_OUTER) where Auto chose the panels and
    /// the tuning set no outer block.
    pub fn panel_outer(&self) -> usize {
        self.panel_outer
    }

    /// Whether [`TiledKernels::multiply_by_inverse`] can run in place here: one product tile
    /// must span a whole block column (so no work group reads what another writes), which the
    /// shared-memory kernels do (the small-tile kernel only where its tiles are wide enough)
    /// and the register-only ones do not.
    pub fn inverted_blocks(&self) -> bool {
        (self.config.shared || self.config.texel) && self.config.bn() >= self.diag
    }

    /// Makes room for `slots` inverted diagonal blocks (a larger buffer drops the ones held:
    /// reserve before a factorization).
    pub fn reserve_inverses(&self, slots: usize) -> Result<()> {
        self.reserve_inverse_floats(slots.max(1) * self.diag * self.diag)
    }

    /// Makes room for `len` floats of inverted diagonal blocks (as
    /// [`TiledKernels::reserve_inverses`]).
    pub(super) fn reserve_inverse_floats(&self, len: usize) -> Result<()> {
        let len = len.max(1);
        let mut inv = self.inverses.borrow_mut();
        if inv.as_ref().is_none_or(|b| b.len() < len) {
            *inv = Some(Buffer::uninitialized(
                &self.ctx,
                BufferTarget::Storage,
                BufferUsage::Dynamic,
                len,
            )?);
        }
        Ok(())
    }

    /// Factors the diagonal block `c` (order ≤ diag) in place and writes the inverse of its
    /// factor into slot `slot` (reserved with [`TiledKernels::reserve_inverses`]); `column0`
    /// is its first column in the whole matrix, for the status word.
    pub fn potrf_inv_block(&self, c: Operand<'_>, column0: usize, slot: usize) -> Result<()> {
        let v = c.view;
        debug_assert!(v.rows == v.cols && v.rows <= self.diag);
        self.reserve_inverses(slot + 1)?;
        let inv = self.inverses.borrow();
        let inv = inv
            .as_ref()
            .ok_or_else(|| Error::shape("no inverse slots reserved"))?;
        c.buffer.bind_base(0);
        inv.bind_base(1);
        self.status.bind_base(5);
        let u = |v: usize| Uniform::U32(v as u32);
        let p = self.potrf_inv_block.get()?;
        p.set_all(&[
            ("n", u(v.rows)),
            ("c_off", u(v.offset)),
            ("c_rs", u(v.rs)),
            ("c_cs", u(v.cs)),
            ("column0", u(column0)),
            ("inv_off", u(slot * self.diag * self.diag)),
        ])?;
        self.run(p, [1, 1, 1])?;
        Ok(())
    }

    /// The inverse of the diagonal block in slot `slot` (diag x diag, row-major), as
    /// [`TiledKernels::potrf_inv_block`] left it: for tests, with [`TiledKernels::poison_inverses`].
    pub fn inverse_block(&self, slot: usize) -> Result<Vec<f32>> {
        let d2 = self.diag * self.diag;
        match self.inverses.borrow().as_ref() {
            Some(inv) if inv.len() >= (slot + 1) * d2 => inv.download_range(slot * d2, d2),
            _ => Err(Error::shape("no inverted diagonal block in that slot")),
        }
    }

    /// Fills the inverted diagonal blocks' slots with NaN (at least `slots` of them), so that
    /// entries a factor leaves unwritten show.
    pub fn poison_inverses(&self, slots: usize) -> Result<()> {
        self.reserve_inverses(slots)?;
        match self.inverses.borrow().as_ref() {
            Some(inv) => inv.write(0, &vec![f32::NAN; inv.len()]),
            None => Ok(()),
        }
    }
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chained_factor_stays_within_the_loop_limit_or_is_not_started() {
        // Tiles of 32 up to m = 513 (the tests) and of 64 up to 16384 (the H200's sizes) chain
        // with (nearly) the full polls; far more tile columns leave too few: not started.
        assert_eq!(factor_chain_spin_limit(17, 32), Some(CHAIN_SPIN_LIMIT));
        assert!(factor_chain_spin_limit(256, 64).is_some_and(|s| s > 30_000));
        for (columns, tile) in [(512, 32), (400, 64), (128, 128)] {
            let limit = factor_chain_spin_limit(columns, tile).unwrap();
            let loops = columns * (tile + FACTOR_CHAIN_LOOPS_PER_COLUMN) + FACTOR_CHAIN_LOOPS_FIXED;
            assert!(limit >= CHAIN_MIN_SPINS && limit + loops <= crate::gl::LOOP_LIMIT);
        }
        assert_eq!(factor_chain_spin_limit(2000, 64), None);
        // Two slices and the diagonal factor fit llvmpipe's 32 KiB up to tiles of 64.
        for tile in [16, 32, 48, 64] {
            assert!(factor_chain_shared_bytes(tile, DiagonalFactor::Columns) <= 32 * 1024);
            assert!(tile.is_multiple_of(factor_chain_slice(tile)));
        }
    }
}
