//! The triangular-solve family's launches: blocks solved in shared memory, the diagonal blocks
//! inverted and applied as products, the wide and row solves' inverses, and the one-right-hand-
//! side solve chained in one launch each way.

use crate::tiled::config::KernelConfig;
use crate::tiled::product::Product;
use crate::tiled::view::View;
use crate::error::{Error, Result};
use crate::gl::{
    Buffer, BufferTarget, BufferUsage, ComputeProgram, Uniform,
};
use std::collections::hash_map::Entry;

use crate::tiled::table;
use super::*;
use crate::tiled::schedule::{SOLVE_BLOCK, SplitSolve};

/// Polls a work group of the chained solve spends waiting (in all) before it gives up and the
/// solve runs the blocked way: within llvmpipe's loop limit ([`crate::gl::LOOP_LIMIT`]) with
/// room for the kernel's other loops.
pub const CHAIN_SPIN_LIMIT: usize = 40_000;

/// Loop iterations (counted as if nothing were unrolled) one invocation of the chained solve
/// runs per block it subtracts, and for the rest of its work.
pub(super) const CHAIN_LOOPS_PER_BLOCK: usize = 160;

pub(super) const CHAIN_LOOPS_FIXED: usize = 1024;

/// The fewest polls worth a chained solve: below, it would give up too soon to be of use.
pub(super) const CHAIN_MIN_SPINS: usize = 4096;

/// The polls a chained solve over `blocks` diagonal blocks may spend waiting so that, with its
/// tile loops, no invocation passes [`crate::gl::LOOP_LIMIT`] (where llvmpipe would end its
/// loops silently): at most [`CHAIN_SPIN_LIMIT`]; `None` where too few are left, and the
/// solve runs the blocked way.
pub fn chain_spin_limit(blocks: usize) -> Option<usize> {
    let rest = crate::gl::LOOP_LIMIT
        .checked_sub(blocks.saturating_mul(CHAIN_LOOPS_PER_BLOCK) + CHAIN_LOOPS_FIXED)?;
    let limit = rest.min(CHAIN_SPIN_LIMIT);
    (limit >= CHAIN_MIN_SPINS).then_some(limit)
}

/// The vec4s of columns one invocation of the several-column chained solve keeps
/// (glsl/tiled/trsv_chain_cols.comp's `CV`), one compiled program each: a right side of c
/// columns runs on the first whose two invocations a row hold them (8·CV columns).
pub(super) const CHAIN_COLUMN_VARIANTS: [usize; 3] = [1, 2, 4];

/// Loop iterations (counted as if nothing were unrolled) one invocation of the several-column
/// chained solve runs per block it subtracts and for the rest of its work, with `cv` vec4s of
/// columns an invocation.
fn chain_columns_loops(blocks: usize, cv: usize) -> usize {
    blocks.saturating_mul(280 + 140 * cv) + 280 + 140 * cv
}

/// The polls a work group of the several-column chained solve over `blocks` diagonal blocks
/// with `cv` vec4s of columns an invocation may spend waiting: [`CHAIN_SPIN_LIMIT`], and on a
/// `software` renderer no more than its loop limit leaves ([`crate::gl::LOOP_LIMIT`], where
/// llvmpipe ends loops silently); `None` where too few polls are left.
fn chain_columns_spin_limit(blocks: usize, cv: usize, software: bool) -> Option<usize> {
    let limit = match software {
        true => crate::gl::LOOP_LIMIT
            .checked_sub(chain_columns_loops(blocks, cv))?
            .min(CHAIN_SPIN_LIMIT),
        false => CHAIN_SPIN_LIMIT,
    };
    (limit >= CHAIN_MIN_SPINS).then_some(limit)
}

/// What a chained solve ([`TiledKernels::trsv_chain`]) works on.
pub(crate) struct ChainSolve<'a> {
    /// The factor's storage.
    pub l: &'a Buffer<f32>,
    /// Its inverted diagonal blocks, slot = block.
    pub inv: &'a Buffer<f32>,
    /// The right sides in, the solutions out: row i of right side r at r·x_rhs + i·x_row.
    pub x: &'a Buffer<f32>,
    /// How many right sides x holds (each its own chain in the one launch; for
    /// [`TiledKernels::trsv_chain_cols`], the columns of its one right side).
    pub rhs: usize,
    /// The step between a right side's rows in x (1 for right sides one after another, the
    /// column count for the columns of a row-major matrix).
    pub x_row: usize,
    /// The step between right sides in x (m for right sides one after another, 1 for the
    /// columns of a row-major matrix).
    pub x_rhs: usize,
    /// Tickets, the gave-up word and each right side's blocks' ready flags (one set for
    /// [`TiledKernels::trsv_chain_cols`]), zeroed.
    pub sync: &'a Buffer<u32>,
    /// The order.
    pub m: usize,
    /// Rows of view 0 (m for one view).
    pub n1: usize,
    /// Blocks in the first n1 rows.
    pub blocks1: usize,
    /// All blocks.
    pub blocks: usize,
    /// Polls a work group may spend waiting in all ([`chain_spin_limit`]).
    pub spin_limit: usize,
    /// L's entries: rows below n1; rows from n1, columns below; both from n1.
    pub views: [View; 3],
}

impl ChainSolve<'_> {
    /// Binds the chain's buffers for `p` (glsl/tiled/trsv_chain.comp or trsv_chain_cols.comp)
    /// and sets the uniforms both kernels read, and `own`, the kernel's own.
    fn bind(&self, p: &ComputeProgram, transposed: bool, own: &[(&str, usize)]) -> Result<()> {
        self.l.bind_base(0);
        self.inv.bind_base(1);
        self.x.bind_base(2);
        self.sync.bind_base(3);
        let [v0, v1, v2] = self.views;
        let common = [
            ("m", self.m),
            ("n1", self.n1),
            ("blocks1", self.blocks1),
            ("blocks", self.blocks),
            ("transposed", usize::from(transposed)),
            ("spin_limit", self.spin_limit),
            ("off0", v0.offset),
            ("rs0", v0.rs),
            ("cs0", v0.cs),
            ("off1", v1.offset),
            ("rs1", v1.rs),
            ("cs1", v1.cs),
            ("off2", v2.offset),
            ("rs2", v2.rs),
            ("cs2", v2.cs),
        ];
        let values: Vec<(&str, Uniform)> = own
            .iter()
            .chain(&common)
            .map(|&(name, v)| (name, Uniform::U32(v as u32)))
            .collect();
        p.set_all(&values)
    }
}

impl TiledKernels {
    /// Whether x ← x·L⁻ᵀ can run by [`super::trsm_wide`] with inverted blocks of `nb` (32,
    /// 64 or [`SOLVE_BLOCK`]): diagonal blocks inverted in one launch, products in place with
    /// them (the product's full tiles span a whole block).
    pub fn solves_by_wide_blocks(&self, nb: usize) -> bool {
        self.trtri.is_some() && [32, 64, SOLVE_BLOCK].contains(&nb) && self.config.bn() >= nb
    }

    /// The buffer of inverted blocks of order `nb` for [`super::trsm_wide`], at least
    /// `blocks` of them (kept between solves; a larger one replaces it).
    pub fn solve_inverses(
        &self,
        blocks: usize,
        nb: usize,
    ) -> Result<std::cell::Ref<'_, Buffer<f32>>> {
        let len = blocks.max(1) * nb * nb;
        {
            let mut inv = self.solve_inverses.borrow_mut();
            if inv.as_ref().is_none_or(|b| b.len() < len) {
                *inv = Some(Buffer::uninitialized(
                    &self.ctx,
                    BufferTarget::Storage,
                    BufferUsage::Dynamic,
                    len,
                )?);
            }
        }
        Ok(std::cell::Ref::map(self.solve_inverses.borrow(), |b| {
            b.as_ref().expect("just made")
        }))
    }

    /// Every diagonal block of order `nb` of the lower-triangular `l` inverted into `inv`'s
    /// slots from 0 ([`TiledKernels::invert_blocks`]' layout with blocks of `nb`), in one
    /// launch; orders below [`SOLVE_BLOCK`] compiled on first use.
    pub fn invert_blocks_of(&self, l: Operand<'_>, nb: usize, inv: &Buffer<f32>) -> Result<()> {
        if !self.solves_by_wide_blocks(nb) {
            return Err(Error::shape(format!(
                "these kernels cannot invert diagonal blocks of order {nb}"
            )));
        }
        if inv.len() < l.view.cols.div_ceil(nb) * nb * nb {
            return Err(Error::shape("too few slots for the inverted diagonal blocks"));
        }
        if nb == SOLVE_BLOCK {
            return self.invert_blocks(l, 0, inv);
        }
        let mut programs = self.trtri_orders.borrow_mut();
        let p = self.trtri_order_program(&mut programs, nb)?;
        self.dispatch_trtri(p, nb, l, 0, inv, false)
    }

    /// trtri_blocks.comp for blocks of order `nb` (below [`SOLVE_BLOCK`]), compiled into
    /// `programs` on first use.
    fn trtri_order_program<'p>(
        &self,
        programs: &'p mut HashMap<usize, ComputeProgram>,
        nb: usize,
    ) -> Result<&'p ComputeProgram> {
        Ok(match programs.entry(nb) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(ComputeProgram::new(
                &self.ctx,
                &table::TRTRI_BLOCKS,
                &format!("order {nb}"),
                &KernelConfig { nb, ..self.config }.source(table::TRTRI_BLOCKS.source),
            )?),
        })
    }

    /// trsm_rows.comp for `rows` rows per work group and blocks of `block`, compiled into
    /// `programs` on first use.
    fn trsm_rows_program<'p>(
        &self,
        programs: &'p mut HashMap<(usize, usize), ComputeProgram>,
        (rows, block): (usize, usize),
    ) -> Result<&'p ComputeProgram> {
        Ok(match programs.entry((rows, block)) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(ComputeProgram::new(
                &self.ctx,
                &table::TRSM_ROWS,
                &format!("{rows} rows, blocks of {block}"),
                &format!(
                    "#version 430\n#define D {block}\n#define R {rows}\n#define RG 4\n{}",
                    table::TRSM_ROWS.source
                ),
            )?),
        })
    }

    /// Compiles the programs that the split Cholesky's solve ([`TiledKernels::split_solve`])
    /// compiles on first use (the row solve's and its block inversion's), returning how many.
    pub(crate) fn compile_split_solve(&self) -> Result<usize> {
        let SplitSolve::Rows { rows, block, .. } = self.split_solve else {
            return Ok(0);
        };
        if !self.solves_by_rows(rows, block) {
            return Ok(0);
        }
        self.trsm_rows_program(&mut self.trsm_rows.borrow_mut(), (rows, block))?;
        if block == SOLVE_BLOCK {
            return Ok(1);
        }
        self.trtri_order_program(&mut self.trtri_orders.borrow_mut(), block)?;
        Ok(2)
    }

    /// Whether [`TiledKernels::solve_rows`] runs here with `rows` rows per work group (a
    /// multiple of 4 from 4 to 64) and diagonal blocks of `block` (32 or 64, inverted by
    /// trtri_blocks.comp), the kernel's shared memory within the device's.
    pub fn solves_by_rows(&self, rows: usize, block: usize) -> bool {
        // The tile of L (padded) and the group's rows of a block.
        let shared = 4 * (block * (block + 1) + rows * block) as u64;
        [32, 64].contains(&block)
            && self.solves_by_wide_blocks(block)
            && rows.is_multiple_of(4)
            && (4..=64).contains(&rows)
            && shared <= self.limits.max_shared_bytes
    }

    /// x ← x·L⁻ᵀ for the lower triangle of the square `l` (its entries above the diagonal
    /// not read), `rows` rows of x per work group through all of l's columns in one launch
    /// (glsl/tiled/trsm_rows.comp), l's diagonal blocks of order `block` inverted in `inv`
    /// from slot `slot0` on ([`TiledKernels::invert_blocks_of`]); rows past the device's
    /// work-group count in several launches. Needs [`TiledKernels::solves_by_rows`].
    pub fn solve_rows(
        &self,
        x: Operand<'_>,
        l: Operand<'_>,
        (inv, slot0): (&Buffer<f32>, usize),
        (rows, block): (usize, usize),
    ) -> Result<()> {
        let (xv, lv) = (x.view, l.view);
        crate::tiled::trsm_wide::check_solve_shapes("the row solve", xv, lv)?;
        if !self.solves_by_rows(rows, block) {
            return Err(Error::shape(format!(
                "these kernels cannot solve by rows of {rows} with blocks of {block}"
            )));
        }
        if xv.rows == 0 || xv.cols == 0 {
            return Ok(());
        }
        let mut programs = self.trsm_rows.borrow_mut();
        let p = self.trsm_rows_program(&mut programs, (rows, block))?;
        x.buffer.bind_base(0);
        l.buffer.bind_base(1);
        inv.bind_base(2);
        let u = |v: usize| Uniform::U32(v as u32);
        p.set_all(&[
            ("w", u(xv.cols)),
            ("x_rs", u(xv.rs)),
            ("x_cs", u(xv.cs)),
            ("l_off", u(lv.offset)),
            ("l_rs", u(lv.rs)),
            ("l_cs", u(lv.cs)),
            ("inv_off", u(slot0 * block * block)),
        ])?;
        // Rows independent of each other: at most the device's work groups per launch.
        let per_launch = rows * self.limits.max_groups_x.max(1) as usize;
        for r0 in (0..xv.rows).step_by(per_launch) {
            let n = (xv.rows - r0).min(per_launch);
            p.set_all(&[("rows", u(n)), ("x_off", u(xv.index(r0, 0)))])?;
            self.run(p, [n.div_ceil(rows) as u32, 1, 1])?;
        }
        Ok(())
    }

    /// x ← x·L⁻ᵀ in place, L⁻¹ the inverted block of order `nb` in slot `slot` of `inv`
    /// ([`TiledKernels::invert_blocks_of`]; x has at most `nb` columns). Needs
    /// [`TiledKernels::solves_by_wide_blocks`].
    pub fn multiply_by_solve_inverse(
        &self,
        x: Operand<'_>,
        inv: &Buffer<f32>,
        slot: usize,
        nb: usize,
    ) -> Result<()> {
        let b = x.view.cols;
        if !self.solves_by_wide_blocks(nb) || b > nb {
            return Err(Error::shape(
                "these kernels cannot multiply by inverted blocks of the solve's order",
            ));
        }
        let linv = View {
            offset: slot * nb * nb,
            rs: nb,
            cs: 1,
            rows: b,
            cols: b,
        };
        // In place as in multiply_by_inverse: each work group owns whole rows of x.
        self.gemm_tiles(Product::new(x, x, Operand::new(inv, linv)), false, true)
    }

    /// x ← x·l⁻ᵀ (`backward` false) or x ← x·l⁻¹ (true) for the lower-triangular diagonal
    /// block l (order ≤ nb), nb rows of x per work group.
    pub fn trsm_block(&self, x: Operand<'_>, l: Operand<'_>, backward: bool) -> Result<()> {
        let (xv, lv) = (x.view, l.view);
        debug_assert!(lv.rows == lv.cols && lv.rows <= self.config.nb && xv.cols == lv.rows);
        if xv.rows == 0 {
            return Ok(());
        }
        x.buffer.bind_base(0);
        l.buffer.bind_base(1);
        let u = |v: usize| Uniform::U32(v as u32);
        let p = self.trsm_block.get()?;
        p.set_all(&[
            ("rows", u(xv.rows)),
            ("n", u(lv.rows)),
            ("x_off", u(xv.offset)),
            ("x_rs", u(xv.rs)),
            ("x_cs", u(xv.cs)),
            ("l_off", u(lv.offset)),
            ("l_rs", u(lv.rs)),
            ("l_cs", u(lv.cs)),
            ("backward", Uniform::I32(i32::from(backward))),
        ])?;
        let groups = xv.rows.div_ceil(self.config.nb);
        let max = self.limits.max_groups_x.max(1) as usize;
        // One dispatch per at most max groups of rows.
        let mut first = 0;
        while first < groups {
            let count = (groups - first).min(max);
            let rows = (xv.rows - first * self.config.nb).min(count * self.config.nb);
            p.set_all(&[
                ("rows", u(rows)),
                ("x_off", u(xv.offset + first * self.config.nb * xv.rs)),
            ])?;
            self.run(p, [count as u32, 1, 1])?;
            first += count;
        }
        Ok(())
    }

    /// Whether the triangular solves can run as products with inverted diagonal blocks
    /// ([`TiledKernels::invert_blocks`]): kernels with shared-memory tiles.
    pub fn solves_by_inverses(&self) -> bool {
        self.trtri.is_some()
    }

    /// Inverts the diagonal blocks of order [`SOLVE_BLOCK`] of the lower-triangular `l` (its
    /// leading square; the last block may be smaller) into `inv`, block g at slot `slot0 + g`
    /// (SOLVE_BLOCK² values each, row-major, zeros above the diagonal). One launch.
    pub fn invert_blocks(&self, l: Operand<'_>, slot0: usize, inv: &Buffer<f32>) -> Result<()> {
        let blocks = l.view.cols.div_ceil(SOLVE_BLOCK);
        if inv.len() < (slot0 + blocks) * SOLVE_BLOCK * SOLVE_BLOCK {
            return Err(Error::shape(
                "too few slots for the inverted diagonal blocks",
            ));
        }
        self.launch_trtri(l, slot0, inv, false)
    }

    /// Every diagonal block of [`SOLVE_BLOCK`] of the lower-triangular `l` replaced by its
    /// inverse in place (the entries above the blocks' diagonals untouched), in one launch.
    pub fn invert_blocks_in_place(&self, l: Operand<'_>) -> Result<()> {
        self.launch_trtri(l, 0, l.buffer, true)
    }

    /// One launch of `trtri_blocks.comp` over `l`'s diagonal blocks, into `inv`'s slots from
    /// `slot0` or (`in_place`, `inv` being `l`'s buffer) over the blocks themselves.
    pub(super) fn launch_trtri(
        &self,
        l: Operand<'_>,
        slot0: usize,
        inv: &Buffer<f32>,
        in_place: bool,
    ) -> Result<()> {
        let p = self
            .trtri
            .as_ref()
            .ok_or_else(|| Error::shape("these kernels do not invert diagonal blocks"))?
            .get()?;
        self.dispatch_trtri(p, SOLVE_BLOCK, l, slot0, inv, in_place)
    }

    /// One launch of the trtri program `p` compiled for blocks of `nb`.
    pub(super) fn dispatch_trtri(
        &self,
        p: &ComputeProgram,
        nb: usize,
        l: Operand<'_>,
        slot0: usize,
        inv: &Buffer<f32>,
        in_place: bool,
    ) -> Result<()> {
        let blocks = l.view.cols.div_ceil(nb);
        l.buffer.bind_base(0);
        inv.bind_base(1);
        let u = |v: usize| Uniform::U32(v as u32);
        p.set_all(&[
            ("n", u(l.view.cols)),
            ("l_off", u(l.view.offset)),
            ("l_rs", u(l.view.rs)),
            ("l_cs", u(l.view.cs)),
            ("slot0", u(slot0)),
            ("in_place", Uniform::I32(i32::from(in_place))),
        ])?;
        self.run(p, [blocks as u32, 1, 1])?;
        Ok(())
    }

    /// One triangular solve of L·y = b (`transposed` false) or Lᵀ·x = y over `x` (one
    /// right-hand side, overwritten) in one launch, L given by up to three views (see
    /// glsl/tiled/trsv_chain.comp) and its diagonal blocks inverted in `inv`; `sync` holds
    /// 2 + blocks zeroed words. Whether the chain gave up is in `sync[1]`.
    pub(crate) fn trsv_chain(&self, chain: &ChainSolve<'_>, transposed: bool) -> Result<()> {
        let p = self
            .trsv_chain
            .as_ref()
            .ok_or_else(|| Error::shape("these kernels have no chained solve"))?
            .get()?;
        chain.bind(p, transposed, &[
            ("rhs", chain.rhs),
            ("x_row", chain.x_row),
            ("x_rhs", chain.x_rhs),
        ])?;
        self.run(p, [(chain.blocks * chain.rhs) as u32, 1, 1])?;
        Ok(())
    }

    /// The polls a work group of the several-column chained solve over `blocks` diagonal
    /// blocks with `cols` columns may spend waiting on this device
    /// ([`chain_columns_spin_limit`]); `None` where the kernels have no such solve, `cols` is
    /// past the widest variant, or too few polls are left.
    pub(crate) fn chain_columns_spin_limit(&self, blocks: usize, cols: usize) -> Option<usize> {
        let (_, cv) = Self::chain_columns_variant(cols)?;
        self.trsv_chain_cols
            .as_ref()
            .and_then(|_| chain_columns_spin_limit(blocks, cv, self.software))
    }

    /// The variant (index, vec4s of columns an invocation keeps) that solves `cols` columns
    /// (2 or more).
    fn chain_columns_variant(cols: usize) -> Option<(usize, usize)> {
        CHAIN_COLUMN_VARIANTS
            .iter()
            .copied()
            .enumerate()
            .find(|&(_, cv)| 8 * cv >= cols)
            .filter(|_| cols >= 2)
    }

    /// One triangular solve of L·Y = B (`transposed` false) or Lᵀ·X = Y over the row-major
    /// right side of `chain.rhs` columns in `chain.x` (overwritten) in one launch, a work group
    /// per diagonal block (glsl/tiled/trsv_chain_cols.comp); `sync` holds 2 + blocks zeroed
    /// words. Whether the chain gave up is in `sync[1]`.
    pub(crate) fn trsv_chain_cols(&self, chain: &ChainSolve<'_>, transposed: bool) -> Result<()> {
        let (variant, _) = Self::chain_columns_variant(chain.rhs).ok_or_else(|| {
            Error::shape(format!(
                "the several-column chained solve takes 2 to {} columns, not {}",
                8 * CHAIN_COLUMN_VARIANTS[CHAIN_COLUMN_VARIANTS.len() - 1],
                chain.rhs
            ))
        })?;
        let p = self
            .trsv_chain_cols
            .as_ref()
            .ok_or_else(|| Error::shape("these kernels have no several-column chained solve"))?
            [variant]
            .get()?;
        debug_assert_eq!(chain.x_rhs, 1);
        chain.bind(p, transposed, &[("cols", chain.rhs), ("x_row", chain.x_row)])?;
        self.run(p, [chain.blocks as u32, 1, 1])?;
        Ok(())
    }

    /// The largest order whose several-column right sides are solved by a chain per column
    /// ([`TiledTuning::column_chains_order`](crate::tiled::TiledTuning::column_chains_order)).
    pub fn column_chains_order(&self) -> usize {
        self.column_chains_order
    }

    /// Whether one-right-hand-side solves can run as one chained launch each way.
    pub fn solves_by_chain(&self) -> bool {
        self.trsv_chain.is_some()
    }

    /// Solves that ran as one chained launch each way ([`TiledKernels::trsv_chain`]) so far.
    pub fn chained_solves(&self) -> u64 {
        self.chained.get()
    }

    pub(crate) fn chained(&self) {
        self.chained.set(self.chained.get() + 1);
    }

    /// x ← x·L⁻ᵀ in place, L⁻¹ the inverted diagonal block in slot `slot` of the slots of
    /// order `order` (x has as many columns as that block's order, at most `order`): the panel
    /// solve as one product. The blocked factor's slots are of [`TiledKernels::diag`], the
    /// chain's of [`TiledKernels::chain_tile`]. Needs [`TiledKernels::inverted_blocks`].
    pub fn multiply_by_inverse(&self, x: Operand<'_>, slot: usize, order: usize) -> Result<()> {
        debug_assert!(self.inverted_blocks() && x.view.cols <= order);
        let inv = self.inverses.borrow();
        let inv = inv
            .as_ref()
            .filter(|inv| inv.len() >= (slot + 1) * order * order)
            .ok_or_else(|| {
                Error::shape("multiply_by_inverse: that inverse slot was never written")
            })?;
        let b = x.view.cols;
        let linv = View {
            offset: slot * order * order,
            rs: order,
            cs: 1,
            rows: b,
            cols: b,
        };
        // C and A are the same entries: safe because each work group owns whole rows of x
        // (one tile column) and writes them only after reading all of them.
        let small_fits = self.gemm_small.as_ref().is_some_and(|(_, c)| c.bn() >= b);
        self.gemm_tiles(
            Product::new(x, x, Operand::new(inv, linv)),
            small_fits,
            true,
        )
    }
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chained_solve_stays_within_the_loop_limit_or_is_not_started() {
        assert_eq!(chain_spin_limit(1), Some(CHAIN_SPIN_LIMIT));
        assert_eq!(chain_spin_limit(64), Some(CHAIN_SPIN_LIMIT));
        for blocks in [1, 64, 200, 313, 378, 379, 400, 10_000] {
            match chain_spin_limit(blocks) {
                Some(spins) => {
                    assert!(spins >= CHAIN_MIN_SPINS, "{blocks} blocks");
                    let loops = blocks * CHAIN_LOOPS_PER_BLOCK + CHAIN_LOOPS_FIXED + spins;
                    assert!(loops <= crate::gl::LOOP_LIMIT, "{blocks} blocks: {loops}");
                }
                None => assert!(blocks > 300, "{blocks} blocks refused"),
            }
        }
        assert_eq!(chain_spin_limit(10_000), None);
    }

    #[test]
    fn a_several_column_chain_stays_within_the_loop_limit_or_is_not_started() {
        for cv in CHAIN_COLUMN_VARIANTS {
            assert_eq!(chain_columns_spin_limit(1, cv, true), Some(CHAIN_SPIN_LIMIT));
            for blocks in [1, 5, 20, 40, 60, 100, 10_000] {
                assert_eq!(
                    chain_columns_spin_limit(blocks, cv, false),
                    Some(CHAIN_SPIN_LIMIT),
                    "{blocks} blocks, {cv} vec4s: a GPU has no loop limit"
                );
                match chain_columns_spin_limit(blocks, cv, true) {
                    Some(spins) => {
                        assert!(spins >= CHAIN_MIN_SPINS, "{blocks} blocks, {cv} vec4s");
                        let loops = chain_columns_loops(blocks, cv) + spins;
                        assert!(loops <= crate::gl::LOOP_LIMIT, "{blocks} blocks: {loops}");
                    }
                    None => assert!(blocks > 20, "{blocks} blocks, {cv} vec4s refused"),
                }
            }
            assert_eq!(chain_columns_spin_limit(10_000, cv, true), None);
        }
    }
}
