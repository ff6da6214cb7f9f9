//! Triangular solves with the Cholesky factor on the GPU for several right-hand sides at once:
//! L·Y = B, then Lᵀ·X = Y (section 2's forward and back substitution, blocked), so a solve runs
//! end to end on the device.

use super::cholesky::trsm_factor;
use super::kernels::{ChainSolve, Operand, TiledKernels, chain_spin_limit};
use super::schedule::SOLVE_BLOCK;
use super::product::Product;
use super::storage::{TiledMatrix, Triangle, check_fits};
use super::view::View;
use crate::error::{Error, Result};
use crate::gl::{Buffer, BufferTarget, BufferUsage};
use crate::matrix::Matrix;
use std::cell::OnceCell;
use std::rc::Rc;

/// Right-hand sides on the GPU: an m x r row-major block.
pub struct DeviceRhs {
    buffer: Buffer<f32>,
    rows: usize,
    cols: usize,
}

impl DeviceRhs {
    /// Uploads B (m x r).
    pub fn upload(k: &TiledKernels, b: &Matrix<f32>, max_bytes: u64) -> Result<Self> {
        let (rows, cols) = b.shape();
        check_fits(
            &format!("{rows}x{cols} right-hand sides"),
            rows * cols,
            max_bytes,
        )?;
        let buffer = Buffer::new(
            k.context(),
            BufferTarget::Storage,
            BufferUsage::Dynamic,
            b.as_slice(),
        )?;
        Ok(Self { buffer, rows, cols })
    }

    /// Reads X back.
    pub fn download(&self) -> Result<Matrix<f32>> {
        Matrix::from_row_major(self.rows, self.cols, self.buffer.download()?)
    }

    /// Bᵀ as a view: its rows are the right-hand sides.
    fn transposed(&self) -> Operand<'_> {
        Operand::new(&self.buffer, View::row_major(self.rows, self.cols).t())
    }
}

/// What a factor keeps between its solves: the inverted diagonal blocks, made by the first.
#[derive(Default)]
pub struct SolveCache {
    inverted: OnceCell<Buffer<f32>>,
}

/// Overwrites B with X = (L·Lᵀ)⁻¹·B, L the factor in `l`.
pub fn solve_in_place(k: &TiledKernels, l: &TiledMatrix, b: &mut DeviceRhs) -> Result<()> {
    solve_in_place_cached(k, l, &SolveCache::default(), b)
}

/// [`solve_in_place`] with what earlier solves with the same (unchanged) `l` kept in `cache`.
pub fn solve_in_place_cached(
    k: &TiledKernels,
    l: &TiledMatrix,
    cache: &SolveCache,
    b: &mut DeviceRhs,
) -> Result<()> {
    solve_each_in_place_cached(k, l, cache, std::slice::from_mut(b))
}

/// [`solve_in_place_cached`] for each of `bs`, each to the values it would get alone (right
/// sides of up to [`CHAIN_COLUMNS`] columns as chains, the one-column ones side by side in one
/// launch each way), with nothing waited on between them: the chained solves' gave-up words
/// are read back together, once, after all are queued.
pub fn solve_each_in_place_cached(
    k: &TiledKernels,
    l: &TiledMatrix,
    cache: &SolveCache,
    bs: &mut [DeviceRhs],
) -> Result<()> {
    solve_each_given(k, l, cache, bs, false)
}

/// [`solve_each_in_place_cached`] with each chain marked as given up before it runs where
/// `given_up` (the tests' way onto that path).
fn solve_each_given(
    k: &TiledKernels,
    l: &TiledMatrix,
    cache: &SolveCache,
    bs: &mut [DeviceRhs],
    given_up: bool,
) -> Result<()> {
    let chains = launch_each(k, l, cache, bs, given_up)?;
    let (_, gave_up) = read_together(k, &[], &chains)?;
    finish(k, l, cache, bs, &chains, &gave_up)?;
    Ok(())
}

/// [`solve_each_in_place_cached`], then X read back: the solutions and the chains' gave-up
/// words in one read (a chain that gave up is solved again the blocked way and read again).
pub fn solve_each_read_back(
    k: &TiledKernels,
    l: &TiledMatrix,
    cache: &SolveCache,
    bs: &mut [DeviceRhs],
) -> Result<Vec<Matrix<f32>>> {
    let chains = launch_each(k, l, cache, bs, false)?;
    let (xs, gave_up) = read_together(k, bs, &chains)?;
    match finish(k, l, cache, bs, &chains, &gave_up)? {
        true => Ok(read_together(k, bs, &[])?.0),
        false => Ok(xs),
    }
}

/// Launches the solves of each of `bs`, none waited on: through the inverted diagonal blocks
/// where the kernels have them (as chains where they have them: several one-column right
/// sides in one launch, a right side of up to [`CHAIN_COLUMNS`] columns a chain per column
/// or, past the kernels' column-chains order, one chain for all its columns,
/// [`launch_chains`]; `given_up` marks each chain as given up before it runs), else by two
/// blocked triangular solves. The chains, by index into `bs`, for [`finish`].
fn launch_each(
    k: &TiledKernels,
    l: &TiledMatrix,
    cache: &SolveCache,
    bs: &mut [DeviceRhs],
    given_up: bool,
) -> Result<Vec<(usize, Chain)>> {
    if let Some(b) = bs.iter().find(|b| b.rows != l.order()) {
        return Err(Error::shape(format!(
            "the factor is {m}x{m}, so the right-hand sides need {m} rows, but have {}",
            b.rows,
            m = l.order()
        )));
    }
    let mut chains = Vec::new();
    // L·Y = B  ⇔  Yᵀ = Bᵀ·L⁻ᵀ;  Lᵀ·X = Y  ⇔  Xᵀ = Yᵀ·L⁻¹.
    match inverses(k, l, cache)? {
        Some(inv) => {
            // The one-column right sides as chains, up to CHAINS_TOGETHER in one launch each
            // way; a right side of up to CHAIN_COLUMNS columns by chains in one launch each
            // way (launch_chains); the others (and any the chains cannot take) the blocked way.
            let by_chain = |cols: std::ops::RangeInclusive<usize>| -> Vec<usize> {
                match k.solves_by_chain() {
                    true => (0..bs.len()).filter(|&i| cols.contains(&bs[i].cols)).collect(),
                    false => Vec::new(),
                }
            };
            let single = by_chain(1..=1);
            let groups = single
                .chunks(CHAINS_TOGETHER)
                .map(<[usize]>::to_vec)
                .chain(by_chain(2..=CHAIN_COLUMNS).into_iter().map(|i| vec![i]));
            for group in groups {
                let members: Vec<&DeviceRhs> = group.iter().map(|&i| &bs[i]).collect();
                if let Some(launched) = launch_chains(k, l, inv, &members, given_up)? {
                    chains.extend(group.iter().copied().zip(launched));
                }
            }
            for (i, b) in bs.iter_mut().enumerate() {
                if !chains.iter().any(|(c, _)| *c == i) {
                    solve_by_inverses(k, l, inv, b)?;
                }
            }
        }
        None => {
            for b in bs {
                trsm_factor(k, b.transposed(), l, false)?;
                trsm_factor(k, b.transposed(), l, true)?;
            }
        }
    }
    Ok(chains)
}

/// The factor's inverted diagonal blocks (made once, kept in `cache`) where the solves run
/// through them: kernels with shared-memory tiles and L in one buffer.
fn inverses<'c>(
    k: &TiledKernels,
    l: &TiledMatrix,
    cache: &'c SolveCache,
) -> Result<Option<&'c Buffer<f32>>> {
    if !(k.solves_by_inverses() && l.part_count() == 1) {
        return Ok(None);
    }
    if let Some(inv) = cache.inverted.get() {
        return Ok(Some(inv));
    }
    let mut phase = crate::phases::Phases::named("solve", std::time::Instant::now());
    let inv = inverted_blocks(k, l)?;
    phase.mark_finished(k.context(), "the factor's diagonal blocks inverted");
    Ok(Some(cache.inverted.get_or_init(|| inv)))
}

/// Completes [`launch_each`]'s solves given whether each chain gave up (`gave_up`, in `chains`'
/// order): those that did are restored and solved the blocked way. Whether any did.
fn finish(
    k: &TiledKernels,
    l: &TiledMatrix,
    cache: &SolveCache,
    bs: &mut [DeviceRhs],
    chains: &[(usize, Chain)],
    gave_up: &[bool],
) -> Result<bool> {
    let mut again = false;
    for ((i, chain), &gave_up) in chains.iter().zip(gave_up) {
        if !gave_up {
            k.chained();
            continue;
        }
        log::debug!("the chained solve gave up waiting: solving the blocked way");
        let inv = inverses(k, l, cache)?.expect("chains run where the blocks are inverted");
        bs[*i].buffer.copy_from(&chain.saved)?;
        solve_by_inverses(k, l, inv, &mut bs[*i])?;
        again = true;
    }
    k.check("the tiled triangular solves")?;
    Ok(again)
}

/// The values of `bs` and whether each of `chains` gave up waiting (its two gave-up words), all
/// copied into one buffer on the GPU and brought back in one read (none where there is nothing
/// to read; one right-hand side alone is read from where it lies).
fn read_together(
    k: &TiledKernels,
    bs: &[DeviceRhs],
    chains: &[(usize, Chain)],
) -> Result<(Vec<Matrix<f32>>, Vec<bool>)> {
    let sizes: Vec<usize> = bs.iter().map(|b| b.rows * b.cols).collect();
    let values = sizes.iter().sum::<usize>();
    let total = values + 2 * chains.len();
    let all = match (bs, chains) {
        _ if total == 0 => Vec::new(),
        ([b], []) => b.buffer.download()?,
        _ => {
            let all = Buffer::<f32>::uninitialized(
                k.context(),
                BufferTarget::Storage,
                BufferUsage::Stream,
                total,
            )?;
            let mut offset = 0;
            for (b, &size) in bs.iter().zip(&sizes) {
                all.copy_range_from(&b.buffer, 0, offset, size)?;
                offset += size;
            }
            for (_, chain) in chains {
                all.copy_range_from(&chain.forward, 1, offset, 1)?;
                all.copy_range_from(&chain.backward, 1, offset + 1, 1)?;
                offset += 2;
            }
            all.download()?
        }
    };
    let (mut values, words) = all.split_at(values);
    let mut xs = Vec::with_capacity(bs.len());
    for (b, &size) in bs.iter().zip(&sizes) {
        let (x, rest) = values.split_at(size);
        xs.push(Matrix::from_row_major(b.rows, b.cols, x.to_vec())?);
        values = rest;
    }
    let gave_up = words
        .chunks_exact(2)
        .map(|w| w[0].to_bits() | w[1].to_bits() != 0)
        .collect();
    Ok((xs, gave_up))
}

/// The diagonal blocks the solves invert: (first row, order, inverse slot), blocks of
/// [`SOLVE_BLOCK`] that never straddle RFP's halves.
fn solve_blocks(tri: Triangle) -> Vec<(usize, usize, usize)> {
    let halves = match tri {
        Triangle::Square(v) => vec![(0, v.rows)],
        Triangle::Blocks([b11, _, b22]) => vec![(0, b11.rows), (b11.rows, b22.rows)],
    };
    let mut blocks = Vec::new();
    for (start, n) in halves {
        for j in (0..n).step_by(SOLVE_BLOCK) {
            blocks.push((start + j, SOLVE_BLOCK.min(n - j), blocks.len()));
        }
    }
    blocks
}

/// The entries rows i0.., columns j0.. (rows x cols, on or below the diagonal) of the factor
/// in `tri` as views of its storage: (view, first row, first column) within the block, cut
/// where RFP's blocks meet.
fn factor_pieces(
    tri: Triangle,
    (i0, j0): (usize, usize),
    (rows, cols): (usize, usize),
) -> Vec<(View, usize, usize)> {
    let [b11, b21, b22] = match tri {
        Triangle::Square(v) => return vec![(v.sub(i0, j0, rows, cols), 0, 0)],
        Triangle::Blocks(b) => b,
    };
    let n1 = b11.rows;
    let cut = |a: usize, len: usize| {
        if a < n1 && a + len > n1 {
            vec![(a, n1 - a), (n1, a + len - n1)]
        } else {
            vec![(a, len)]
        }
    };
    let mut out = Vec::new();
    for (i, r) in cut(i0, rows) {
        for (j, c) in cut(j0, cols) {
            let v = match (i >= n1, j >= n1) {
                (false, false) => b11.sub(i, j, r, c),
                (true, false) => b21.sub(i - n1, j, r, c),
                (true, true) => b22.sub(i - n1, j - n1, r, c),
                (false, true) => continue,
            };
            out.push((v, i - i0, j - j0));
        }
    }
    out
}

/// The factor's diagonal blocks of [`SOLVE_BLOCK`] inverted (one launch per triangle), slot =
/// block in [`solve_blocks`]' order.
fn inverted_blocks(k: &TiledKernels, l: &TiledMatrix) -> Result<Buffer<f32>> {
    let tri = l.triangle();
    let blocks = solve_blocks(tri).len();
    let inv = Buffer::<f32>::uninitialized(
        k.context(),
        BufferTarget::Storage,
        BufferUsage::Dynamic,
        (blocks * SOLVE_BLOCK * SOLVE_BLOCK).max(1),
    )?;
    let lb = l.buffer();
    match tri {
        Triangle::Square(v) => k.invert_blocks(Operand::new(lb, v), 0, &inv)?,
        Triangle::Blocks([b11, _, b22]) => {
            k.invert_blocks(Operand::new(lb, b11), 0, &inv)?;
            k.invert_blocks(Operand::new(lb, b22), b11.rows.div_ceil(SOLVE_BLOCK), &inv)?;
        }
    }
    Ok(inv)
}

/// Right sides whose chains run together in one launch each way at most.
const CHAINS_TOGETHER: usize = 8;

/// The most columns a right side may have to be solved by chains: the several-column chain's
/// widest variant's (glsl/tiled/trsv_chain_cols.comp); wider ones the blocked way.
const CHAIN_COLUMNS: usize = 32;

/// A chained solve launched ([`launch_chains`]) and not yet checked: its launches' sync words
/// (the gave-up word at index 1, shared by the right sides launched together) and b as it
/// was, for the blocked solve should it have given up.
struct Chain {
    forward: Rc<Buffer<u32>>,
    backward: Rc<Buffer<u32>>,
    saved: Buffer<f32>,
}

/// Launches both solves for `group` as one chained launch each way: one-column right sides
/// side by side, a chain each (glsl/tiled/trsv_chain.comp; several cost about one's time: a
/// chain's few work groups leave the GPU idle), or one right side of several columns solved
/// in place, a chain per column the same way up to the kernels'
/// [`column_chains_order`](TiledKernels::column_chains_order) and one chain for all its
/// columns past it (glsl/tiled/trsv_chain_cols.comp; docs/results.md, "Triangular solves",
/// says why). The blocks'
/// dependences wait on flags on the GPU instead of between launches. Whether a work group gave
/// up waiting (a software renderer's loop limit) is known only once the chains have run; then
/// each b is restored from its copy and solved the blocked way. `None` (nothing launched)
/// where a chain would span more blocks than its spin limit allows ([`chain_spin_limit`],
/// [`TiledKernels::chain_columns_spin_limit`]), or m is 0. `given_up` marks the chains as
/// given up before they run (the tests' way onto that path).
fn launch_chains(
    k: &TiledKernels,
    l: &TiledMatrix,
    inv: &Buffer<f32>,
    group: &[&DeviceRhs],
    given_up: bool,
) -> Result<Option<Vec<Chain>>> {
    let m = l.order();
    let tri = l.triangle();
    let blocks = solve_blocks(tri).len();
    // One right side of several columns past the kernels' column_chains_order: one chain for
    // all of them.
    let several = match group {
        [] => return Ok(None),
        [b] => b.cols > 1 && m > k.column_chains_order(),
        _ => false,
    };
    let spin_limit = match several {
        true => k.chain_columns_spin_limit(blocks, group[0].cols),
        false => chain_spin_limit(blocks),
    };
    let spin_limit = match spin_limit {
        Some(limit) if m > 0 => limit,
        _ => return Ok(None),
    };
    let (n1, views) = match tri {
        Triangle::Square(v) => (m, [v, v, v]),
        Triangle::Blocks(views) => (views[0].rows, views),
    };
    let blocks1 = n1.div_ceil(SOLVE_BLOCK);
    // Row i of right side r at r·x_rhs + i·x_row: one right side's columns where it lies
    // (row-major), several one-column ones one after another.
    let (rhs, x_row, x_rhs) = match group {
        [b] => (b.cols, b.cols, 1),
        _ => {
            debug_assert!(group.iter().all(|b| b.cols == 1));
            (group.len(), 1, m)
        }
    };
    let ctx = k.context();
    let flags = match several {
        true => blocks,
        false => rhs * blocks,
    };
    let mut zeros = vec![0u32; 2 + flags];
    let sync = |data: &[u32]| Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Stream, data);
    let backward = Rc::new(sync(&zeros)?);
    zeros[1] = u32::from(given_up);
    let forward = Rc::new(sync(&zeros)?);
    let saved = group
        .iter()
        .map(|b| {
            let saved = Buffer::<f32>::uninitialized(
                ctx,
                BufferTarget::Storage,
                BufferUsage::Stream,
                b.rows * b.cols,
            )?;
            saved.copy_from(&b.buffer)?;
            Ok(saved)
        })
        .collect::<Result<Vec<_>>>()?;
    // One right side is solved where it lies; several one after another in one buffer, and
    // copied back.
    let together = match group {
        [_] => None,
        _ => {
            let x = Buffer::<f32>::uninitialized(
                ctx,
                BufferTarget::Storage,
                BufferUsage::Static,
                rhs * m,
            )?;
            for (r, b) in group.iter().enumerate() {
                x.copy_range_from(&b.buffer, 0, r * m, m)?;
            }
            Some(x)
        }
    };
    let x = together.as_ref().unwrap_or(&group[0].buffer);
    let chain = |sync| ChainSolve {
        l: l.buffer(),
        inv,
        x,
        rhs,
        x_row,
        x_rhs,
        sync,
        m,
        n1,
        blocks1,
        blocks,
        spin_limit,
        views,
    };
    for (sync, transposed) in [(&forward, false), (&backward, true)] {
        match several {
            true => k.trsv_chain_cols(&chain(sync), transposed)?,
            false => k.trsv_chain(&chain(sync), transposed)?,
        }
    }
    if let Some(x) = &together {
        for (r, b) in group.iter().enumerate() {
            b.buffer.copy_range_from(x, r * m, 0, m)?;
        }
    }
    Ok(Some(
        saved
            .into_iter()
            .map(|saved| Chain {
                forward: forward.clone(),
                backward: backward.clone(),
                saved,
            })
            .collect(),
    ))
}

/// [`solve_each_in_place_cached`] where the chained solves are told, before they run, that a
/// work group gave up: the path a long wait on a software renderer takes (each b restored,
/// then solved the blocked way). For the tests.
#[doc(hidden)]
pub fn solve_after_chain_gives_up(
    k: &TiledKernels,
    l: &TiledMatrix,
    bs: &mut [DeviceRhs],
) -> Result<()> {
    solve_each_given(k, l, &SolveCache::default(), bs, true)
}

/// Both solves as products with the inverses of the factor's diagonal blocks of
/// [`SOLVE_BLOCK`] (`inv`, [`inverted_blocks`]): per block, one product with its inverse and
/// one update of the rest, each way — about four launches per 128 rows where substitution
/// takes a chain per 32. Y is kept apart from B, and X overwrites B.
fn solve_by_inverses(
    k: &TiledKernels,
    l: &TiledMatrix,
    inv: &Buffer<f32>,
    b: &mut DeviceRhs,
) -> Result<()> {
    let (m, r) = (b.rows, b.cols);
    if m == 0 || r == 0 {
        return Ok(());
    }
    let tri = l.triangle();
    let blocks = solve_blocks(tri);
    let y = Buffer::<f32>::uninitialized(
        k.context(),
        BufferTarget::Storage,
        BufferUsage::Dynamic,
        r * m,
    )?;
    let lb = l.buffer();
    let x = b.transposed();
    let xs = |j, w| x.with(x.view.sub(0, j, r, w));
    let yv = View::row_major(r, m);
    let ys = |j, w| Operand::new(&y, yv.sub(0, j, r, w));
    let inverse = |slot: usize, n: usize| {
        Operand::new(
            inv,
            View {
                offset: slot * SOLVE_BLOCK * SOLVE_BLOCK,
                rs: SOLVE_BLOCK,
                cs: 1,
                rows: n,
                cols: n,
            },
        )
    };
    // Forward, right-looking: Yᵀ_J = Bᵀ_J·L_JJ⁻ᵀ, then Bᵀ_K −= Yᵀ_J·L_KJᵀ for every K below
    // J in one product (wide and shallow: it fills the GPU where a sum over the blocks solved
    // so far would be a few long-running work groups).
    for &(s0, n, slot) in &blocks {
        let e = s0 + n;
        k.gemm(Product::new(ys(s0, n), xs(s0, n), inverse(slot, n)))?;
        if e < m {
            for (lv, ro, co) in factor_pieces(tri, (e, s0), (m - e, n)) {
                let c = xs(e + ro, lv.rows);
                k.gemm(Product::new(c, ys(s0 + co, lv.cols), Operand::new(lb, lv)).subtract())?;
            }
        }
    }
    // Backward, from the last block: Xᵀ_J = Yᵀ_J·L_JJ⁻¹, then Yᵀ_K −= Xᵀ_J·L_JK for every K
    // above J.
    for &(s0, n, slot) in blocks.iter().rev() {
        let zinv = inverse(slot, n);
        let zinv = zinv.with(zinv.view.t());
        k.gemm(Product::new(xs(s0, n), ys(s0, n), zinv))?;
        if s0 > 0 {
            for (lv, ro, co) in factor_pieces(tri, (s0, 0), (n, s0)) {
                let c = ys(co, lv.cols);
                let b = Operand::new(lb, lv.t());
                k.gemm(Product::new(c, xs(s0 + ro, lv.rows), b).subtract())?;
            }
        }
    }
    Ok(())
}
