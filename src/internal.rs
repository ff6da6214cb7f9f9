//! Not part of the API: the `Gpu` internals that the program's debugger, viewer and
//! reproduction, the benchmarks and the tests of the internals reach for (pass-by-pass runs,
//! size limits, the tiled method's kernels and raw storage). Bring [`GpuInternals`](crate::internal::GpuInternals) into scope
//! to call them as methods. Nothing here is stable.

use crate::draw::execution::Execution;
use crate::error::Result;
use crate::gl::{Context, Rgba32F};
use crate::gpu::{Cholesky, DeviceResidual, Gpu, Method, Options};
use crate::layout::{BlockColumn, BlockLayout, Format, Layout, PackedMatrix};
use crate::matrix::Matrix;
use crate::tiled::{Storage, TiledKernels, TiledMatrix};
use crate::timing::Preheat;
use std::rc::Rc;

/// The internals of [`Gpu`] as methods (each forwards to the crate's own).
#[allow(missing_docs)]
pub trait GpuInternals {
    fn context(&self) -> &Context;
    fn preheat(&self) -> &Preheat;
    fn block_column(&self) -> BlockColumn;
    fn blocks(&self, options: Options, m: usize) -> BlockLayout;
    fn resolve(&self, method: Method) -> Result<Method>;
    fn resolve_for(&self, options: Options) -> Result<Method>;
    fn resolve_raster(&self, method: Method) -> Result<Method>;
    fn check_problem_size(&self, m: usize, n: usize, options: Options) -> Result<Method>;
    fn max_order(&self) -> (usize, usize);
    fn check_order(&self, m: usize, format: Format) -> Result<Layout>;
    fn device_residual(&self, a: &Matrix<f64>, d: &[f64], b: &[f64]) -> Result<DeviceResidual>;
    fn tiled_kernels(&self) -> Result<Rc<TiledKernels>>;
    fn max_storage_bytes(&self) -> Result<u64>;
    fn tiled_part_bytes(&self) -> Result<u64>;
    fn max_tiled_order(&self) -> Result<(usize, usize, String)>;
    fn check_tiled_order(&self, m: usize, storage: Storage) -> Result<()>;
    fn assemble_tiled_device(
        &self,
        a: &Matrix<f32>,
        d: &[f32],
        storage: Storage,
    ) -> Result<TiledMatrix>;
    fn assemble_rfp(&self, a: &Matrix<f32>, d: &[f32]) -> Result<Vec<f32>>;
    fn assemble_packed_raw(&self, a: &Matrix<f32>, d: &[f32]) -> Result<PackedMatrix>;
    fn cholesky_packed_raw(&self, c: &PackedMatrix) -> Result<PackedMatrix>;
    /// The tiled Cholesky of an RFP array of order m, kept on the GPU.
    fn cholesky_rfp(&self, m: usize, arf: &[f32]) -> Result<Cholesky>;
    /// [`Gpu::step`] of assembly by the faithful method.
    fn start_assembly(&self, a: &Matrix<f32>, d: &[f32], options: Options)
    -> Result<Execution<'_>>;
    fn start_cholesky(&self, c: &Matrix<f32>, options: Options) -> Result<Execution<'_>>;
    fn start_cholesky_packed(&self, c: &PackedMatrix) -> Result<Execution<'_>>;
    fn start_lu(&self, a: &Matrix<f32>) -> Result<Execution<'_>>;
    /// Blocked assembly into an explicit block layout.
    fn start_blocked_assembly_as(
        &self,
        a: &Matrix<f32>,
        d: &[f32],
        blocks: BlockLayout,
    ) -> Result<Execution<'_, Rgba32F>>;
    /// The blocked Cholesky in an explicit block layout.
    fn start_blocked_cholesky_as(
        &self,
        c: &Matrix<f32>,
        blocks: BlockLayout,
    ) -> Result<Execution<'_, Rgba32F>>;
}

impl GpuInternals for Gpu {
    fn context(&self) -> &Context {
        Gpu::context(self)
    }
    fn preheat(&self) -> &Preheat {
        Gpu::preheat(self)
    }
    fn block_column(&self) -> BlockColumn {
        Gpu::block_column(self)
    }
    fn blocks(&self, options: Options, m: usize) -> BlockLayout {
        Gpu::blocks(self, options, m)
    }
    fn resolve(&self, method: Method) -> Result<Method> {
        Gpu::resolve(self, method)
    }
    fn resolve_for(&self, options: Options) -> Result<Method> {
        Gpu::resolve_for(self, options)
    }
    fn resolve_raster(&self, method: Method) -> Result<Method> {
        Gpu::resolve_raster(self, method)
    }
    fn check_problem_size(&self, m: usize, n: usize, options: Options) -> Result<Method> {
        Gpu::check_problem_size(self, m, n, options)
    }
    fn max_order(&self) -> (usize, usize) {
        Gpu::max_order(self)
    }
    fn check_order(&self, m: usize, format: Format) -> Result<Layout> {
        Gpu::check_order(self, m, format)
    }
    fn device_residual(&self, a: &Matrix<f64>, d: &[f64], b: &[f64]) -> Result<DeviceResidual> {
        Gpu::device_residual(self, a, d, b)
    }
    fn tiled_kernels(&self) -> Result<Rc<TiledKernels>> {
        Gpu::tiled_kernels(self)
    }
    fn max_storage_bytes(&self) -> Result<u64> {
        Gpu::max_storage_bytes(self)
    }
    fn tiled_part_bytes(&self) -> Result<u64> {
        Gpu::tiled_part_bytes(self)
    }
    fn max_tiled_order(&self) -> Result<(usize, usize, String)> {
        Gpu::max_tiled_order(self)
    }
    fn check_tiled_order(&self, m: usize, storage: Storage) -> Result<()> {
        Gpu::check_tiled_order(self, m, storage)
    }
    fn assemble_tiled_device(
        &self,
        a: &Matrix<f32>,
        d: &[f32],
        storage: Storage,
    ) -> Result<TiledMatrix> {
        Gpu::assemble_tiled_device(self, a, d, storage)
    }
    fn assemble_rfp(&self, a: &Matrix<f32>, d: &[f32]) -> Result<Vec<f32>> {
        Gpu::assemble_rfp(self, a, d)
    }
    fn assemble_packed_raw(&self, a: &Matrix<f32>, d: &[f32]) -> Result<PackedMatrix> {
        Gpu::assemble_packed_raw(self, a, d)
    }
    fn cholesky_packed_raw(&self, c: &PackedMatrix) -> Result<PackedMatrix> {
        Gpu::cholesky_packed_raw(self, c)
    }
    fn cholesky_rfp(&self, m: usize, arf: &[f32]) -> Result<Cholesky> {
        Ok(Cholesky::device(
            Gpu::cholesky_rfp_tiled(self, m, arf)?,
            Format::Packed,
        ))
    }
    fn start_assembly(
        &self,
        a: &Matrix<f32>,
        d: &[f32],
        options: Options,
    ) -> Result<Execution<'_>> {
        Gpu::start_assembly(self, a, d, options)
    }
    fn start_cholesky(&self, c: &Matrix<f32>, options: Options) -> Result<Execution<'_>> {
        Gpu::start_cholesky(self, c, options)
    }
    fn start_cholesky_packed(&self, c: &PackedMatrix) -> Result<Execution<'_>> {
        Gpu::start_cholesky_packed(self, c)
    }
    fn start_lu(&self, a: &Matrix<f32>) -> Result<Execution<'_>> {
        Gpu::start_lu(self, a)
    }
    fn start_blocked_assembly_as(
        &self,
        a: &Matrix<f32>,
        d: &[f32],
        blocks: BlockLayout,
    ) -> Result<Execution<'_, Rgba32F>> {
        Gpu::start_blocked_assembly_as(self, a, d, blocks)
    }
    fn start_blocked_cholesky_as(
        &self,
        c: &Matrix<f32>,
        blocks: BlockLayout,
    ) -> Result<Execution<'_, Rgba32F>> {
        Gpu::start_blocked_cholesky_as(self, c, blocks)
    }
}
