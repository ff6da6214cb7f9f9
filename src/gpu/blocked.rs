//! The blocked method (after the Brook+ blocked Cholesky sample): fragment passes over RGBA32F
//! textures whose texels hold 2 x 2 blocks, or 4 x 4 blocks over four render targets as in the
//! sample ([`Blocking`]), each fragment applying a rank-K update instead of the paper's rank-1
//! update, over triangles that still cover only the lower triangle of blocks
//! ([`crate::blocked::geometry`]). Needs OpenGL 3.3 only. Full and rectangular packed format (the
//! lower triangle of blocks folded as in Fig 3); the matrix is padded with the identity to
//! whole block columns ([`BlockLayout`]).

use super::Gpu;
use super::assembly::{check_assembly_inputs, check_finite_result, check_product_range};
use super::cholesky::{check_lower_factor, product_diagonal};
use super::{Cholesky, Method};
use crate::draw::execution::{Execution, Operands};
use crate::error::{InputError, Result};
use crate::gl::{PingPong, RenderTexture, Rgba32F, Texture};
use crate::layout::blocked::{ASSEMBLY_RANK, PACKED_ROW_OFFSET};
use crate::layout::{BlockLayout, Format, Layout};
use crate::matrix::{Matrix, check_finite_lower, check_square};

impl Gpu {
    /// Uploads A and d as blocks into `blocks` (its order must be A's rows) and prepares
    /// blocked assembly without running it: one scaling pass, then one rank-K pass per
    /// [`ASSEMBLY_RANK`](crate::layout::blocked::ASSEMBLY_RANK) columns of A. Step it or
    /// finish it; the result, C padded to its block columns, is in the pair's source.
    pub(crate) fn start_blocked_assembly_as(
        &self,
        a: &Matrix<f32>,
        d: &[f32],
        blocks: BlockLayout,
    ) -> Result<Execution<'_, Rgba32F>> {
        check_assembly_inputs(a, d)?;
        let (m, n) = a.shape();
        assert_eq!(blocks.order(), m, "the layout's order is A's rows");
        let (format, blocking) = (blocks.format(), blocks.blocking());
        let blocks = self.check_blocked_order(blocks, n)?;
        check_product_range(a, d)?;
        let ctx = self.context();
        let t = blocks.texels();
        let (w, h) = blocks.texture_size();
        let pair = PingPong::<Rgba32F>::allocate_layers(ctx, w, h, blocking.layers())?;
        // C starts as zero with the identity padding, so the sum is C ⊕ I.
        for (layer, padding) in blocks.padding().iter().enumerate() {
            pair.source().layers()[layer].upload(padding)?;
            pair.target().layers()[layer].upload(padding)?;
        }
        let height = blocks.a_height(n);
        let operands = Operands::Assembly {
            a: Texture::with_texels(ctx, t, height, &blocks.pack_a(a))?,
            d: Texture::with_texels(ctx, height, 1, &blocks.pack_d(d))?,
            b: RenderTexture::allocate(ctx, t, height)?,
        };
        let plan = crate::blocked::geometry::assembly_plan(blocks, n);
        Execution::new(
            ctx,
            self.kernels(),
            plan,
            Layout::new(m, format),
            pair,
            operands,
        )
        .map(|run| run.with_block_column(blocks.column()))
    }

    /// Uploads the lower triangle of C as blocks (padded with the identity) in `blocks`
    /// (format, blocking and block column; its order must be C's) and prepares the blocked
    /// Cholesky factorization without running it.
    pub(crate) fn start_blocked_cholesky_as(
        &self,
        c: &Matrix<f32>,
        blocks: BlockLayout,
    ) -> Result<Execution<'_, Rgba32F>> {
        check_square("C", c, "(a symmetric matrix)")?;
        let m = c.rows();
        assert_eq!(blocks.order(), m, "the layout's order is C's");
        check_finite_lower("C (lower triangle)", c)?;
        let blocking = blocks.blocking();
        let blocks = self.check_blocked_order(blocks, 1)?;
        let (w, h) = blocks.texture_size();
        let pair = PingPong::<Rgba32F>::allocate_layers(self.context(), w, h, blocking.layers())?;
        for (layer, data) in blocks.pack_layers(c, 0.0).iter().enumerate() {
            pair.source().layers()[layer].upload(data)?;
        }
        self.blocked_cholesky_on(blocks, pair)
    }

    /// Prepares the blocked Cholesky factorization on a pair whose source holds C ⊕ I.
    fn blocked_cholesky_on(
        &self,
        blocks: BlockLayout,
        pair: PingPong<Rgba32F>,
    ) -> Result<Execution<'_, Rgba32F>> {
        for layer in pair.target().layers() {
            layer.fill([0.0; 4])?;
        }
        let plan = crate::blocked::geometry::cholesky_plan(blocks);
        Execution::new(
            self.context(),
            self.kernels(),
            plan,
            Layout::new(blocks.order(), blocks.format()),
            pair,
            Operands::PairOnly,
        )
        .map(|run| run.with_block_column(blocks.column()))
    }

    /// [`Gpu::assemble`] by the blocked method.
    pub(crate) fn assemble_blocked(
        &self,
        a: &Matrix<f32>,
        d: &[f32],
        blocks: BlockLayout,
    ) -> Result<Matrix<f32>> {
        let mut run = self.start_blocked_assembly_as(a, d, blocks)?;
        run.finish()?;
        let c = run.download_lower()?;
        check_finite_result(c.as_slice(), c.cols())?;
        Ok(c)
    }

    /// [`Gpu::cholesky`] by the blocked method.
    pub(crate) fn cholesky_blocked(
        &self,
        c: &Matrix<f32>,
        blocks: BlockLayout,
    ) -> Result<Cholesky> {
        let mut run = self.start_blocked_cholesky_as(c, blocks)?;
        run.finish()?;
        let l = run.download_lower()?;
        check_lower_factor(&l, |j| f64::from(c[(j, j)]))?;
        Ok(Cholesky::host(l, Method::Blocked, blocks.format()))
    }

    /// [`Gpu::factor_product`] by the blocked method: C stays on the GPU between the two.
    pub(crate) fn factor_product_blocked(
        &self,
        a: &Matrix<f32>,
        d: &[f32],
        blocks: BlockLayout,
    ) -> Result<Cholesky> {
        let mut run = self.start_blocked_assembly_as(a, d, blocks)?;
        run.finish()?;
        let mut run = self.blocked_cholesky_on(blocks, run.into_pair())?;
        run.finish()?;
        let l = run.download_lower()?;
        let diagonal = product_diagonal(a, d);
        check_lower_factor(&l, |j| diagonal[j])?;
        Ok(Cholesky::host(l, Method::Blocked, blocks.format()))
    }

    /// `blocks` with n columns of A, if its textures fit this GPU.
    pub(super) fn check_blocked_order(&self, blocks: BlockLayout, n: usize) -> Result<BlockLayout> {
        let (m, format, blocking) = (blocks.order(), blocks.format(), blocks.blocking());
        let limit = self.info().max_texture_size;
        let width = blocks.a_height(n);
        let side = blocking.side();
        let (w, h) = blocks.texture_size();
        if w > limit || h > limit {
            // Texels per block column, and the most texels per side the format allows:
            // T in full format, T + S (the packed height) in packed.
            let kb = blocks.block_column_texels();
            let most = match format {
                Format::Full => limit,
                Format::Packed => limit.saturating_sub(PACKED_ROW_OFFSET),
            };
            return Err(InputError::Unsupported(format!(
                "the blocked method needs a {w}x{h} texture for m = {m} in {format} format, \
                 and GL_MAX_TEXTURE_SIZE is {limit}: the largest m is {}",
                most / kb * kb * side,
            ))
            .into());
        }
        if width > limit {
            return Err(InputError::Unsupported(format!(
                "A has {n} columns, and the blocked method ({blocking} blocks) stores A as \
                 texels {width} high (the columns padded to a multiple of {rank}); \
                 GL_MAX_TEXTURE_SIZE is {limit}: at most {} columns",
                limit / (ASSEMBLY_RANK / blocking.a_columns_per_texel()) * ASSEMBLY_RANK,
                rank = ASSEMBLY_RANK,
            ))
            .into());
        }
        Ok(blocks)
    }
}
