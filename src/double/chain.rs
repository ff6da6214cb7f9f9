//! The f64 Cholesky as one chained launch (glsl/double/potrf_chain.comp), and L⁻¹ after it
//! (glsl/double/trtri_chain.comp): by tiles of [`CHAIN_TILE`], each work group waiting on the
//! GPU for the tiles it reads, so that an order costs one launch instead of one or two a block.

use super::kernels::{CHAIN_HEAD, CHAIN_TILE, DoubleKernels, chain_tiles};
use crate::error::{DeviceError, Result};
use crate::gl::{Buffer, BufferTarget, BufferUsage};
use crate::tiled::kernels::factor_chain_spin_limit;

/// The first pivot of a factorization that was not positive: its column and value (before
/// its square root).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct FailedPivot {
    pub column: usize,
    pub pivot: f64,
}

/// The polls each work group of the chain over order `n` may spend waiting, or `None` where
/// the chain cannot run there: more tiles than one launch takes, or too many tile columns to
/// wait across within the loop limit of software renderers.
pub(crate) fn spin_limit(kernels: &DoubleKernels, n: usize) -> Option<usize> {
    let (columns, tiles) = chain_tiles(n);
    if n == 0 || tiles > kernels.max_groups() {
        return None;
    }
    factor_chain_spin_limit(columns, CHAIN_TILE)
}

/// Factors `w` (order n, row-major, its lower triangle) in place, running `meanwhile` on the
/// host once the GPU has the work; returns the diagonal tiles' inv(L_jj)ᵀ (n x [`CHAIN_TILE`],
/// row-major) and the first failed pivot, if any. `given_up` marks the chain given up before
/// its first launch (the path a long wait on a software renderer takes: launched again on the
/// tiles already published). Needs [`spin_limit`].
pub(crate) fn factor(
    kernels: &DoubleKernels,
    w: &Buffer<f64>,
    n: usize,
    spins: usize,
    given_up: bool,
    meanwhile: &(dyn Fn() + Sync),
) -> Result<(Buffer<f64>, Option<FailedPivot>)> {
    let inv = Buffer::<f64>::uninitialized(
        kernels.context(),
        BufferTarget::Storage,
        BufferUsage::Static,
        (n * CHAIN_TILE).max(1),
    )?;
    let head = run(kernels, n, given_up, meanwhile, "Cholesky", &|sync| {
        kernels.potrf_chain(w, &inv, sync, n, spins)
    })?;
    Ok((inv, failed_pivot(&head)))
}

/// `z` (order n, row-major) ← L⁻¹ in its lower triangle from L in `l` and the diagonal tiles'
/// inv(L_jj)ᵀ in `inv` as [`factor`] keeps them (zeros above the diagonal in the diagonal
/// tiles; the tiles above those are not written); `given_up` as [`factor`] takes it. Needs
/// [`spin_limit`].
pub(crate) fn inverse(
    kernels: &DoubleKernels,
    (l, inv, z): (&Buffer<f64>, &Buffer<f64>, &Buffer<f64>),
    n: usize,
    spins: usize,
    given_up: bool,
) -> Result<()> {
    run(
        kernels,
        n,
        given_up,
        &|| {},
        "triangular inverse",
        &|sync| kernels.trtri_chain((l, inv, z), sync, n, spins),
    )
    .map(|_| ())
}

/// Runs a chained launch over order n's tiles ([`start`], then [`settle`]), running
/// `meanwhile` once the GPU has the first launch; returns the first five sync words (the
/// ticket, the gave-up word, the factor's failed column and its pivot's two halves).
fn run(
    kernels: &DoubleKernels,
    n: usize,
    given_up: bool,
    meanwhile: &(dyn Fn() + Sync),
    what: &str,
    launch: &dyn Fn(&Buffer<u32>) -> Result<()>,
) -> Result<Vec<u32>> {
    let sync = start(kernels, n, given_up, launch)?;
    kernels.context().flush();
    meanwhile();
    Ok(settle(&sync, n, what, launch)?.0)
}

/// Queues a chained launch over order n's tiles (`launch`, given the sync words: zeroed, the
/// failed column none, the gave-up word set where `given_up`, and then not launched); its
/// sync words, for [`settle`].
pub(crate) fn start(
    kernels: &DoubleKernels,
    n: usize,
    given_up: bool,
    launch: &dyn Fn(&Buffer<u32>) -> Result<()>,
) -> Result<Buffer<u32>> {
    let (_, tiles) = chain_tiles(n);
    let mut words = vec![0u32; CHAIN_HEAD + tiles];
    words[1] = u32::from(given_up);
    words[2] = u32::MAX;
    let sync = Buffer::new(
        kernels.context(),
        BufferTarget::Storage,
        BufferUsage::Stream,
        &words,
    )?;
    if !given_up {
        launch(&sync)?;
    }
    Ok(sync)
}

/// Waits for a chained launch [`start`] queued and, while a work group gave up, launches it
/// again from the published tiles until every tile is: the first five sync words, and
/// whether it was launched again.
pub(crate) fn settle(
    sync: &Buffer<u32>,
    n: usize,
    what: &str,
    launch: &dyn Fn(&Buffer<u32>) -> Result<()>,
) -> Result<(Vec<u32>, bool)> {
    let (_, tiles) = chain_tiles(n);
    for again in 0..=tiles {
        let head = sync.download_range(0, 5)?;
        if head[1] == 0 {
            return Ok((head, again > 0));
        }
        // Only on software renderers (and in the tests): the next launch goes on from the
        // published tiles.
        log::debug!("the chained f64 {what} gave up waiting: launched again");
        sync.write(0, &[0, 0])?;
        launch(sync)?;
    }
    Err(DeviceError::Unsupported {
        what: format!("finish the chained f64 {what}"),
        why: format!(
            "its work groups did not publish its {tiles} tiles in {} launches",
            tiles + 1
        ),
    }
    .into())
}

/// The failed pivot the factor's sync words (the first five) name, if any.
pub(crate) fn failed_pivot(head: &[u32]) -> Option<FailedPivot> {
    (head[2] != u32::MAX).then(|| FailedPivot {
        column: head[2] as usize,
        pivot: f64::from_bits(u64::from(head[3]) | (u64::from(head[4]) << 32)),
    })
}
