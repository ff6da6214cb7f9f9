//! A caller's f32 input uploaded as it lies and brought into the kernels' layout on the GPU
//! (`glsl/batched/prepare.comp`): gathered from its strides, each problem divided by its power
//! of two. The host neither copies nor rounds it (C goes up as its triangles instead:
//! [`super::packed`]).

use super::kernels::BatchedKernels;
use super::view::{compact, extent};
use crate::error::Result;
use crate::gl::{Buffer, BufferTarget, BufferUsage, Uniform};
use crate::phases::Phases;
use std::ops::Range;

/// Invocations per work group of the preparation (its `local_size_x`).
const GROUP: usize = 256;

/// How one input's values become what the kernels read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prepare<'a> {
    /// Elements between problems, rows and columns of the values given (their first problem
    /// at 0).
    pub strides: [usize; 3],
    /// Problem p divided by 2^`exponents[p]` (exactly, as the host's product rounded once
    /// would be); `None`: not scaled.
    pub exponents: Option<&'a [i32]>,
}

/// Problems `range` of `values` (rows x cols each at `prepare`'s strides) as a new storage
/// buffer in the kernels' layout (row-major, the batch outer).
pub fn prepared(
    kernels: &BatchedKernels,
    prepare: &Prepare<'_>,
    values: &[f32],
    range: &Range<usize>,
    (rows, cols): (usize, usize),
    launch: usize,
) -> Result<Buffer<f32>> {
    let mut phases = Phases::named("batched input preparation", std::time::Instant::now());
    let ctx = kernels.context();
    let count = range.len();
    let size = rows * cols;
    let total = count * size;
    let strides = prepare.strides;
    let gather = !compact(strides, count, rows, cols);
    let start = range.start * strides[0];
    let span = extent(count, rows, cols, strides).expect("a batch within its slice");
    let storage = |data: &[f32]| Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Static, data);
    let (dst, src) = if gather {
        let src = storage(&values[start..start + span])?;
        let dst = Buffer::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Static, total.max(1))?;
        (dst, Some(src))
    } else {
        (storage(&values[start..start + total])?, None)
    };
    let exponents = prepare
        .exponents
        .map(|e| Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Static, &e[range.clone()]))
        .transpose()?;
    phases.mark("upload");
    if !gather && exponents.is_none() {
        // Already in the kernels' layout and not to be scaled: nothing to do on the GPU.
        return Ok(dst);
    }
    let program = kernels.prepare_program(gather, exponents.is_some())?;
    dst.bind_base(0);
    if let Some(src) = &src {
        src.bind_base(1);
        program.set("problem_stride", Uniform::U32(strides[0] as u32))?;
        program.set("row_stride", Uniform::U32(strides[1] as u32))?;
        program.set("col_stride", Uniform::U32(strides[2] as u32))?;
    }
    if let Some(e) = &exponents {
        e.bind_base(2);
    }
    program.set("total", Uniform::U32(total as u32))?;
    program.set("rows", Uniform::U32(rows as u32))?;
    program.set("cols", Uniform::U32(cols as u32))?;
    let mut first = 0;
    while first < total {
        let groups = (total - first).div_ceil(GROUP).min(launch.max(1));
        program.set("first", Uniform::U32(first as u32))?;
        program.dispatch([groups as u32, 1, 1])?;
        first += groups * GROUP;
    }
    phases.mark_finished(ctx, "pass");
    Ok(dst)
}
