//! [`Gpu::step`]: a run prepared pass by pass instead of finished, for the debugger and the
//! timing of single passes; one entry for every operation and drawing method.

use super::{Gpu, Method, Options};
use crate::error::{InputError, Result};
use crate::execution::Execution;
use crate::gl::Rgba32F;
use crate::layout::PackedMatrix;
use crate::matrix::Matrix;

/// What [`Gpu::step`] runs: the operation and its input.
#[derive(Clone, Copy, Debug)]
pub enum Operation<'a> {
    /// C = A·diag(d)·Aᵀ (Algorithm 3, or the blocked assembly).
    Assembly {
        /// A, m x n.
        a: &'a Matrix<f32>,
        /// The n diagonal entries of D².
        d: &'a [f32],
    },
    /// C = L·Lᵀ from C's lower triangle (Algorithm 5, or the blocked Cholesky).
    Cholesky(&'a Matrix<f32>),
    /// Algorithm 5 on a C already packed (faithful method only): the host never holds the
    /// m x m matrix.
    CholeskyPacked(&'a PackedMatrix),
    /// LU without pivoting (faithful method, full format only).
    Lu(&'a Matrix<f32>),
}

/// A prepared run: R32F textures for the faithful method, RGBA32F blocks for the blocked one.
/// Step it ([`Execution::step`]) or finish it ([`Execution::finish`]).
pub enum Run<'g> {
    /// The faithful method's run (one value per texel).
    Texels(Execution<'g>),
    /// The blocked method's run (2 x 2 or 4 x 4 blocks per texel).
    Blocks(Execution<'g, Rgba32F>),
}

impl<'g> Run<'g> {
    /// The faithful run, or [`InputError::Unsupported`] for a blocked one.
    pub fn into_texels(self) -> Result<Execution<'g>> {
        match self {
            Run::Texels(run) => Ok(run),
            Run::Blocks(_) => Err(InputError::Unsupported(
                "this run is the blocked method's (RGBA32F blocks), not the faithful one's".into(),
            )
            .into()),
        }
    }

    /// The blocked run, or [`InputError::Unsupported`] for a faithful one.
    pub fn into_blocks(self) -> Result<Execution<'g, Rgba32F>> {
        match self {
            Run::Blocks(run) => Ok(run),
            Run::Texels(_) => Err(InputError::Unsupported(
                "this run is the faithful method's (R32F texels), not the blocked one's".into(),
            )
            .into()),
        }
    }

    /// Runs every remaining pass.
    pub fn finish(&mut self) -> Result<()> {
        match self {
            Run::Texels(run) => run.finish(),
            Run::Blocks(run) => run.finish(),
        }
    }
}

impl Gpu {
    /// Uploads the input of `operation` and prepares its passes without running them, by the
    /// method `options` name among those that draw triangles ([`Method::Auto`] is the faithful
    /// method here; the tiled method has no passes to step:
    /// [`InputError::Unsupported`]). The result is in f32, as the finished operation's.
    pub fn step(&self, operation: Operation<'_>, options: impl Into<Options>) -> Result<Run<'_>> {
        let options = options.into();
        let method = self.resolve_raster(options.method)?;
        let blocked = method == Method::Blocked;
        match operation {
            Operation::Assembly { a, d } if blocked => Ok(Run::Blocks(
                self.start_blocked_assembly_as(a, d, self.blocks(options, a.rows()))?,
            )),
            Operation::Assembly { a, d } => Ok(Run::Texels(self.start_assembly(a, d, options)?)),
            Operation::Cholesky(c) if blocked => Ok(Run::Blocks(
                self.start_blocked_cholesky_as(c, self.blocks(options, c.rows()))?,
            )),
            Operation::Cholesky(c) => Ok(Run::Texels(self.start_cholesky(c, options)?)),
            Operation::CholeskyPacked(_) | Operation::Lu(_) if blocked => {
                Err(InputError::Unsupported(
                    "the blocked method steps assembly and Cholesky only".into(),
                )
                .into())
            }
            Operation::CholeskyPacked(c) => Ok(Run::Texels(self.start_cholesky_packed(c)?)),
            Operation::Lu(a) => Ok(Run::Texels(self.start_lu(a)?)),
        }
    }
}
