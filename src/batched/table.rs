//! The batched operations' kernels (`glsl/batched/`): each declared once, with its storage
//! blocks by binding and its uniforms, checked when its program links.

use crate::gl::ComputeKernel;

/// The uniforms every batched kernel has: its launch's first problem and the problems held.
macro_rules! batch_uniforms {
    ($($extra:literal),*) => { &["problem0", "count" $(, $extra)*] };
}

/// The batched kernels' shared part (`glsl/batched/common.glsl`): one work group per problem,
/// packed lower storage in shared memory or a work buffer, the factor and the solves.
pub const BATCHED_COMMON: &str = include_str!("../../glsl/batched/common.glsl");

/// The batched kernels' observations (`glsl/batched/observations.glsl`): A and d staged by
/// column blocks, and the assembly of A·diag(d)·Aᵀ from them.
pub const BATCHED_OBSERVATIONS: &str = include_str!("../../glsl/batched/observations.glsl");

/// The batched assembly by register tiles (`glsl/batched/tiles.glsl`, after
/// [`BATCHED_OBSERVATIONS`]; empty unless the plan defines `ASSEMBLY_TILES`).
pub const BATCHED_TILES: &str = include_str!("../../glsl/batched/tiles.glsl");

/// Batched assembly, one work group per problem ([`BATCHED_COMMON`] and
/// [`BATCHED_OBSERVATIONS`] in front).
pub static BATCHED_ASSEMBLE: ComputeKernel = ComputeKernel {
    name: "batched/assemble",
    source: include_str!("../../glsl/batched/assemble.comp"),
    buffers: &[
        ("ABuf", 0),
        ("DBuf", 1),
        ("CBuf", 3),
        ("WorkBuf", 6),
        ("GramBuf", 7),
    ],
    uniforms: batch_uniforms!(),
    // Read only where it assembles on chip (not from the separate assembly's buffer).
    optional: &["observations"],
};

/// Batched Cholesky with LAPACK's INFO per problem ([`BATCHED_COMMON`] in front).
pub static BATCHED_CHOLESKY: ComputeKernel = ComputeKernel {
    name: "batched/cholesky",
    source: include_str!("../../glsl/batched/cholesky.comp"),
    buffers: &[("CBuf", 3), ("LBuf", 4), ("InfoBuf", 5), ("WorkBuf", 6)],
    uniforms: batch_uniforms!(),
    optional: &[],
};

/// Batched SPD solve with refinement in f64 ([`BATCHED_COMMON`] in front).
pub static BATCHED_SPD_SOLVE: ComputeKernel = ComputeKernel {
    name: "batched/spd_solve",
    source: include_str!("../../glsl/batched/spd_solve.comp"),
    buffers: &[
        ("BBuf", 2),
        ("CBuf", 3),
        ("XBuf", 4),
        ("InfoBuf", 5),
        ("WorkBuf", 6),
    ],
    uniforms: batch_uniforms!(),
    optional: &[],
};

/// Batched weighted least squares in one pass: assembly, factor, solves and refinement
/// ([`BATCHED_COMMON`] and [`BATCHED_OBSERVATIONS`] in front).
pub static BATCHED_LEAST_SQUARES: ComputeKernel = ComputeKernel {
    name: "batched/least_squares",
    source: include_str!("../../glsl/batched/least_squares.comp"),
    buffers: &[
        ("ABuf", 0),
        ("ABuf4", 0),
        ("DBuf", 1),
        ("BBuf", 2),
        ("XBuf", 4),
        ("InfoBuf", 5),
        ("WorkBuf", 6),
        ("GramBuf", 7),
    ],
    uniforms: batch_uniforms!(),
    // Read by the assembly on chip and the residual from A, not where both come from the
    // separate assembly's buffer.
    optional: &["observations"],
};

/// The batched assembly as a launch of its own: C's packed triangle and g per problem in
/// register tiles (`glsl/batched/gram.comp`, self-contained), read by the job's kernel.
pub static BATCHED_GRAM: ComputeKernel = ComputeKernel {
    name: "batched/gram",
    source: include_str!("../../glsl/batched/gram.comp"),
    buffers: &[("ABuf", 0), ("DBuf", 1), ("BBuf", 2), ("GramBuf", 7)],
    uniforms: batch_uniforms!("observations"),
    optional: &[],
};

/// A caller's f32 input brought into the kernels' layout on the GPU
/// (`glsl/batched/prepare.comp`, self-contained): gathered from its strides (`GATHER`), each
/// problem divided by its power of two (`SCALE`).
pub static BATCHED_PREPARE: ComputeKernel = ComputeKernel {
    name: "batched/prepare",
    source: include_str!("../../glsl/batched/prepare.comp"),
    buffers: &[("DstBuf", 0), ("SrcBuf", 1), ("ExpBuf", 2)],
    uniforms: &["first", "total", "rows", "cols"],
    // The strides only where it gathers.
    optional: &["problem_stride", "row_stride", "col_stride"],
};
