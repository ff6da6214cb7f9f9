//! One chunk of a batch on the GPU: its inputs uploaded, its outputs allocated (NaN-poisoned
//! on request, so that an entry a kernel failed to write shows), the launches that run it and
//! the read-back. [`run`] takes a whole batch through in chunks of [`Plan::chunk`] problems.

use super::gram::GramShape;
use super::kernels::BatchedKernels;
use super::packed::{read_lower, upload_lower};
use super::plan::{Job, Plan, WorkStorage, packed};
pub use super::prepare::Prepare;
use super::prepare::{divided, prepared};
use crate::error::Result;
use crate::gl::{Buffer, BufferTarget, BufferUsage, ComputeProgram, Context, Uniform};
use crate::phases::Phases;
use std::mem::MaybeUninit;
use std::ops::Range;
use std::rc::Rc;
use std::time::Instant;

/// A whole batch's inputs in f32, row-major with the batch outer (what a job does not read is
/// `None`): A (B·n·k), d (B·k), b (B·k for least squares, B·n for the SPD solve), C (B·n·n);
/// or, where `prepare` has an entry for the input, as that entry says (strided, to be scaled
/// on the GPU; the Cholesky's C is gathered and scaled on its way up, its lower triangles
/// packed).
#[derive(Clone, Copy, Debug, Default)]
pub struct Inputs<'a> {
    /// A, n x k per problem.
    pub a: Option<&'a [f32]>,
    /// d, k per problem.
    pub d: Option<&'a [f32]>,
    /// b.
    pub b: Option<&'a [f32]>,
    /// C, n x n per problem (only the lower triangle is read).
    pub c: Option<&'a [f32]>,
    /// By binding (A, d, b, C): how that input's values become the kernels' layout on the GPU
    /// (`None`: they are in it).
    pub prepare: [Option<Prepare<'a>>; 4],
}

/// A chunk's (or a batch's) results on the host.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outputs {
    /// C or L, n x n per problem (assembly, Cholesky; zeros above the diagonal, NaN for a
    /// problem that failed).
    pub matrix: Vec<f32>,
    /// x, n per problem (solves).
    pub x: Vec<f64>,
    /// INFO per problem (Cholesky, solves).
    pub info: Vec<i32>,
}

/// Whether outputs are filled with NaN (INFO with i32::MIN) before the launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Poison {
    /// Outputs allocated and left to the kernels.
    No,
    /// Outputs filled first (tests: an entry left unwritten shows).
    Nan,
}

/// The separate assembly's C and g, in f32, or in f64 for the normal equations' residual.
enum GramBuffer {
    Single(Buffer<f32>),
    Double(Buffer<f64>),
}

impl GramBuffer {
    fn bind_base(&self, binding: u32) {
        match self {
            GramBuffer::Single(b) => b.bind_base(binding),
            GramBuffer::Double(b) => b.bind_base(binding),
        }
    }
}

/// One chunk of problems on the GPU.
pub struct Resident {
    ctx: Context,
    plan: Plan,
    program: Rc<ComputeProgram>,
    /// The separate assembly's program and its gram buffer (C and g per problem).
    gram: Option<(Rc<ComputeProgram>, GramBuffer)>,
    count: usize,
    inputs: Vec<(u32, Buffer<f32>)>,
    /// C or L, their lower triangles packed by rows.
    matrix: Option<Buffer<f32>>,
    x: Option<Buffer<f64>>,
    info: Option<Buffer<i32>>,
    work: Option<Buffer<f32>>,
}

/// Slice `range` of problems of a batch array with `size` values per problem.
fn problems<'a>(data: &'a [f32], range: &Range<usize>, size: usize) -> &'a [f32] {
    &data[range.start * size..range.end * size]
}

impl Resident {
    /// Uploads problems `range` of `inputs` and allocates the outputs for `plan`.
    pub fn upload(
        kernels: &BatchedKernels,
        plan: &Plan,
        inputs: &Inputs<'_>,
        range: Range<usize>,
        poison: Poison,
    ) -> Result<Self> {
        let ctx = kernels.context();
        let (n, k) = (plan.n, plan.k);
        let count = range.len();
        // Inputs go into new Static buffers (mapped and copied on all cores when large): a
        // mapped Stream or Dynamic buffer may be placed in host memory, which the kernels then
        // read over the bus, many times slower (measured in docs/results.md).
        let storage =
            |data: &[f32]| Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Static, data);
        let mut uploaded = Vec::new();
        let missing = |what: &str| -> ! { panic!("{} needs {what}", plan.job.name()) };
        // Input `binding` of rows x cols per problem: as given, or prepared on the GPU; C (of
        // the Cholesky and the SPD solve) as its lower triangles packed by rows.
        let mut put = |binding: u32, data: &[f32], shape: (usize, usize)| -> Result<()> {
            let prepare = inputs.prepare[binding as usize].as_ref();
            let buffer = match prepare {
                _ if binding == 3 && matches!(plan.job, Job::Cholesky | Job::SpdSolve) => {
                    let lower = upload_lower(ctx, data, prepare, &range, n)?;
                    divided(kernels, prepare, lower, &range, packed(n), plan.launch)?
                }
                None => storage(problems(data, &range, shape.0 * shape.1))?,
                Some(prepare) => prepared(kernels, prepare, data, &range, shape, plan.launch)?,
            };
            uploaded.push((binding, buffer));
            Ok(())
        };
        if plan.job.reads_observations() {
            put(0, inputs.a.unwrap_or_else(|| missing("A")), (n, k))?;
            put(1, inputs.d.unwrap_or_else(|| missing("d")), (k, 1))?;
        } else {
            put(3, inputs.c.unwrap_or_else(|| missing("C")), (n, n))?;
        }
        if plan.job.solves() {
            let b = inputs.b.unwrap_or_else(|| missing("b"));
            let len = if plan.job == Job::LeastSquares { k } else { n };
            put(2, b, (len, 1))?;
        }
        let f32_out = |len: usize| -> Result<Buffer<f32>> {
            match poison {
                Poison::No => Buffer::uninitialized(
                    ctx,
                    BufferTarget::Storage,
                    BufferUsage::Static,
                    len.max(1),
                ),
                Poison::Nan => storage(&vec![f32::NAN; len.max(1)]),
            }
        };
        let matrix = match plan.job {
            Job::Assemble | Job::Cholesky => Some(f32_out(count * packed(n))?),
            _ => None,
        };
        let f64_out = |len: usize| -> Result<Buffer<f64>> {
            let len = len.max(1);
            match poison {
                Poison::No => {
                    Buffer::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Static, len)
                }
                Poison::Nan => Buffer::new(
                    ctx,
                    BufferTarget::Storage,
                    BufferUsage::Static,
                    &vec![f64::NAN; len],
                ),
            }
        };
        let x = if plan.job.solves() {
            Some(f64_out(count * n)?)
        } else {
            None
        };
        // INFO is written for every problem; filled first only when poisoning (a fill is a
        // glBufferData from pageable memory, slow for large batches).
        let info = match (plan.job, poison) {
            (Job::Assemble, _) => None,
            (_, Poison::No) => Some(Buffer::uninitialized(
                ctx,
                BufferTarget::Storage,
                BufferUsage::Static,
                count.max(1),
            )?),
            (_, Poison::Nan) => Some(Buffer::new(
                ctx,
                BufferTarget::Storage,
                BufferUsage::Static,
                &vec![i32::MIN; count.max(1)],
            )?),
        };
        // The factors' triangles and L⁻¹'s where they are not in shared memory.
        let work = match plan.work_floats() {
            0 => None,
            floats => Some(Buffer::uninitialized(
                ctx,
                BufferTarget::Storage,
                BufferUsage::Static,
                // L⁻¹'s by slot: the last group's empty slots have their own.
                (count.next_multiple_of(plan.problems_per_group.max(1)) * floats).max(1),
            )?),
        };
        // C and g from the separate assembly: NaN-poisoned too, so an entry it missed shows.
        let gram = match kernels.gram_program(plan)? {
            Some(program) => {
                let len = count * GramShape::floats(n);
                let buffer = if plan.gram_f64() {
                    GramBuffer::Double(f64_out(len)?)
                } else {
                    GramBuffer::Single(f32_out(len)?)
                };
                Some((program, buffer))
            }
            None => None,
        };
        Ok(Self {
            ctx: ctx.clone(),
            plan: *plan,
            program: kernels.program(plan)?,
            gram,
            count,
            inputs: uploaded,
            matrix,
            x,
            info,
            work,
        })
    }

    /// Problems held.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Runs the job on every problem held: one work group per [`Plan::problems_per_group`]
    /// problems, in launches of at most [`Plan::launch`] groups. Returns the launches made.
    pub fn launch(&self) -> Result<usize> {
        for (binding, buffer) in &self.inputs {
            buffer.bind_base(*binding);
        }
        // L is written at binding 4 by the Cholesky, C at 3 by the assembly.
        if let Some(m) = &self.matrix {
            m.bind_base(if self.plan.job == Job::Assemble { 3 } else { 4 });
        }
        if let Some(x) = &self.x {
            x.bind_base(4);
        }
        if let Some(info) = &self.info {
            info.bind_base(5);
        }
        if let Some(work) = &self.work {
            work.bind_base(6);
        }
        let mut launches = 0;
        if let (Some((gram, buffer)), Some(shape)) = (&self.gram, self.plan.gram_shape()) {
            buffer.bind_base(7);
            launches += self.launch_gram(gram, shape)?;
        }
        let p = &self.program;
        p.set("count", Uniform::U32(self.count as u32))?;
        if self.plan.job.reads_observations() {
            p.set("observations", Uniform::U32(self.plan.k as u32))?;
        }
        // Plan::problems_per_group problems per group; the last group's empty slots write nothing.
        let per_group = self.plan.problems_per_group.max(1);
        let mut first = 0;
        while first < self.count {
            let groups = (self.count - first)
                .div_ceil(per_group)
                .min(self.plan.launch);
            p.set("problem0", Uniform::U32(first as u32))?;
            p.dispatch([groups as u32, 1, 1])?;
            first += groups * per_group;
            launches += 1;
        }
        Ok(launches)
    }

    /// The separate assembly over every problem held, in launches of at most the device's
    /// work groups (whole problems each). Returns the launches made.
    fn launch_gram(&self, program: &ComputeProgram, shape: GramShape) -> Result<usize> {
        let rhs = self.plan.job == Job::LeastSquares;
        let (n, f64) = (self.plan.n, self.plan.gram_f64());
        // Whole problems per launch, within the device's work groups (a dispatch past them
        // is refused, never cut).
        let per_launch =
            (self.plan.launch * shape.group(n, rhs, f64) / shape.invocations(n, rhs)).max(1);
        program.set("count", Uniform::U32(self.count as u32))?;
        program.set("observations", Uniform::U32(self.plan.k as u32))?;
        let mut first = 0;
        let mut launches = 0;
        while first < self.count {
            let problems = (self.count - first).min(per_launch);
            program.set("problem0", Uniform::U32(first as u32))?;
            program.dispatch([shape.groups(n, rhs, f64, problems) as u32, 1, 1])?;
            first += problems;
            launches += 1;
        }
        Ok(launches)
    }

    /// Reads the outputs back (waits for the GPU) and checks the context.
    pub fn read(&self) -> Result<Outputs> {
        let len = match &self.matrix {
            Some(_) => self.count * self.plan.n * self.plan.n,
            None => 0,
        };
        let mut matrix = crate::memory::with_capacity(len, || {
            format!("the matrices of {} problems", self.count)
        })?;
        let mut out = self.read_into(&mut matrix.spare_capacity_mut()[..len])?;
        // SAFETY: `read_into` wrote all `len` values.
        unsafe { matrix.set_len(len) };
        out.matrix = matrix;
        Ok(out)
    }

    /// Reads the outputs back (waits for the GPU) and checks the context: C or L unpacked into
    /// `matrix` (n x n per problem held, every value written), x and INFO returned.
    pub fn read_into(&self, matrix: &mut [MaybeUninit<f32>]) -> Result<Outputs> {
        self.read_with(matrix, None)
    }

    /// [`Resident::read_into`], x handed to `x_reader` with the problems' INFO (which it may
    /// change) instead of returned, where there is one.
    fn read_with(
        &self,
        matrix: &mut [MaybeUninit<f32>],
        x_reader: Option<(Range<usize>, &mut XReader<'_>)>,
    ) -> Result<Outputs> {
        let n = self.plan.n;
        let mut out = Outputs::default();
        if let Some(info) = &self.info {
            out.info = info.download_range(0, self.count)?;
        }
        if let Some(m) = &self.matrix {
            read_lower(m, n, &out.info, matrix)?;
        }
        if let Some(x) = &self.x {
            match x_reader {
                Some((range, reader)) => reader(range, x, &mut out.info)?,
                None => out.x = x.download_range(0, self.count * n)?,
            }
        }
        self.ctx
            .check(|| format!("running the {}", self.plan.job.name()))?;
        Ok(out)
    }
}

/// What becomes of a chunk's x on its way back (instead of [`Outputs::x`]): the chunk's
/// problems (of the whole batch), its buffer of n values per problem (f64, as the kernels
/// wrote them) and the problems' INFO, which the reader may change.
pub(crate) type XReader<'a> = dyn FnMut(Range<usize>, &Buffer<f64>, &mut [i32]) -> Result<()> + 'a;

/// Runs `plan` on all `count` problems of `inputs`, a chunk of [`Plan::chunk`] problems at a
/// time, and gathers the results.
pub fn run(
    kernels: &BatchedKernels,
    plan: &Plan,
    inputs: &Inputs<'_>,
    count: usize,
    poison: Poison,
) -> Result<Outputs> {
    run_with(kernels, plan, inputs, count, poison, None)
}

/// [`run`], each chunk's x handed to `x_reader` where there is one ([`Outputs::x`] then
/// stays empty).
pub(crate) fn run_with(
    kernels: &BatchedKernels,
    plan: &Plan,
    inputs: &Inputs<'_>,
    count: usize,
    poison: Poison,
    x_reader: Option<&mut XReader<'_>>,
) -> Result<Outputs> {
    let len = matrices(plan, count);
    let mut matrix = crate::memory::with_capacity(len, || {
        format!("the results of {count} problems of the {}", plan.job.name())
    })?;
    let room = &mut matrix.spare_capacity_mut()[..len];
    let mut out = run_into(kernels, plan, inputs, count, poison, x_reader, room)?;
    // SAFETY: `run_into` wrote all `len` values.
    unsafe { matrix.set_len(len) };
    out.matrix = matrix;
    Ok(out)
}

/// The values of the matrices `count` problems of `plan`'s job return (none where the job
/// returns none).
pub(crate) fn matrices(plan: &Plan, count: usize) -> usize {
    match plan.job {
        Job::Assemble | Job::Cholesky => count * plan.n * plan.n,
        _ => 0,
    }
}

/// [`run_with`] with the matrices unpacked into `room` ([`matrices`] values, every one
/// written on success; [`Outputs::matrix`] stays empty): the caller's memory, allocated where
/// its caller lives.
pub(crate) fn run_into(
    kernels: &BatchedKernels,
    plan: &Plan,
    inputs: &Inputs<'_>,
    count: usize,
    poison: Poison,
    mut x_reader: Option<&mut XReader<'_>>,
    room: &mut [MaybeUninit<f32>],
) -> Result<Outputs> {
    if plan.problems_per_group > 1 && plan.storage == WorkStorage::Global {
        return Err(crate::error::DeviceError::Unsupported {
            what: format!("{} problems per work group", plan.problems_per_group),
            why: "several problems share a group only in shared memory, not in the global work \
                  buffer"
                .into(),
        }
        .into());
    }
    assert_eq!(
        room.len(),
        matrices(plan, count),
        "room for every problem's matrix"
    );
    // Debug builds poison the room, so that a value the read-back missed shows.
    #[cfg(debug_assertions)]
    room.fill(MaybeUninit::new(f32::NAN));
    let mut phases = Phases::named(plan.job.name(), Instant::now());
    let chunks = count.div_ceil(plan.chunk.max(1));
    let mut out = reserved(plan, count, chunks > 1, x_reader.is_none())?;
    let size = plan.n * plan.n;
    let mut first = 0;
    while first < count {
        let range = first..(first + plan.chunk).min(count);
        first = range.end;
        let chunk = Resident::upload(kernels, plan, inputs, range.clone(), poison)?;
        phases.mark_finished(kernels.context(), "upload");
        chunk.launch()?;
        phases.mark_finished(kernels.context(), "launches");
        let matrix = room
            .get_mut(range.start * size..range.end * size)
            .unwrap_or_default();
        let reader = x_reader.as_deref_mut().map(|r| (range.clone(), r));
        let part = chunk.read_with(matrix, reader)?;
        phases.mark("read back");
        if chunks == 1 {
            // x and INFO as read back: no copy.
            return Ok(part);
        }
        out.x.extend(part.x);
        out.info.extend(part.info);
        phases.mark("gathered");
    }
    Ok(out)
}

/// Outputs for `count` problems' results of `plan`'s job other than the matrices: with
/// `chunks` room for the chunks' INFO and, with `x`, their x.
fn reserved(plan: &Plan, count: usize, chunks: bool, x: bool) -> Result<Outputs> {
    let n = plan.n;
    let what = || format!("the results of {count} problems of the {}", plan.job.name());
    let mut out = Outputs::default();
    if chunks && x && !matches!(plan.job, Job::Assemble | Job::Cholesky) {
        out.x = crate::memory::with_capacity(count * n, what)?;
    }
    if chunks && plan.job != Job::Assemble {
        out.info = crate::memory::with_capacity(count, what)?;
    }
    Ok(out)
}
