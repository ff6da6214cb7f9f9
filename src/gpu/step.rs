//! [`Gpu::step`]: a run prepared pass by pass instead of finished, for the debugger and the
//! timing of single passes; one entry for every operation and drawing method.

use super::{Gpu, Method, Options};
use crate::draw::execution::Execution;
use crate::error::{InputError, Result};
use crate::gl::Rgba32F;
use crate::layout::PackedMatrix;
use crate::matrix::{Element, Matrix};

/// What [`Gpu::step`] runs: the operation and its input, `f32` or `f64` ([`Element`]; f64 is
/// rounded to f32 once, range checked, with no scaling: the passes show the values as given).
#[derive(Clone, Copy, Debug)]
pub enum Operation<'a, T: Element = f32> {
    /// C = A·diag(d)·Aᵀ (Algorithm 3, or the blocked assembly).
    Assembly {
        /// A, m x n.
        a: &'a Matrix<T>,
        /// The n diagonal entries of D².
        d: &'a [T],
    },
    /// C = L·Lᵀ from C's lower triangle (Algorithm 5, or the blocked Cholesky).
    Cholesky(&'a Matrix<T>),
    /// Algorithm 5 on a C already packed (faithful method only): the host never holds the
    /// m x m matrix.
    CholeskyPacked(&'a PackedMatrix),
    /// LU without pivoting (faithful method, full format only).
    Lu(&'a Matrix<T>),
}

/// A prepared run, its passes not yet drawn: [`Run::step`] draws one, [`Run::finish`] the
/// rest, and [`Run::lower`] reads the matrix back as it stands between passes (f32).
pub struct Run<'g>(Passes<'g>);

/// The run: R32F textures for the faithful method, RGBA32F blocks for the blocked one.
enum Passes<'g> {
    Texels(Execution<'g>),
    Blocks(Execution<'g, Rgba32F>),
}

/// The same call on either kind of run.
macro_rules! on_run {
    ($run:expr, $r:ident => $body:expr) => {
        match $run {
            Passes::Texels($r) => $body,
            Passes::Blocks($r) => $body,
        }
    };
}

impl<'g> Run<'g> {
    /// Draws the next pass; `false` when every pass has run already.
    pub fn step(&mut self) -> Result<bool> {
        Ok(on_run!(&mut self.0, r => r.step()?).is_some())
    }

    /// Runs every remaining pass.
    pub fn finish(&mut self) -> Result<()> {
        on_run!(&mut self.0, r => r.finish())
    }

    /// How many passes have run.
    pub fn position(&self) -> usize {
        on_run!(&self.0, r => r.position())
    }

    /// How many passes the run has in all.
    pub fn passes(&self) -> usize {
        on_run!(&self.0, r => r.plan().passes.len())
    }

    /// Whether every pass has run.
    pub fn is_done(&self) -> bool {
        on_run!(&self.0, r => r.is_done())
    }

    /// The m x m lower triangle as it stands after the passes run so far (C for assembly, L
    /// for Cholesky once done), read back in f32; entries no pass has written yet are NaN.
    pub fn lower(&self) -> Result<Matrix<f32>> {
        on_run!(&self.0, r => r.download_lower())
    }

    /// The faithful run, or [`InputError::Unsupported`] for a blocked one (for the debugger).
    #[cfg(feature = "internals")]
    #[doc(hidden)]
    pub fn into_texels(self) -> Result<Execution<'g>> {
        match self.0 {
            Passes::Texels(run) => Ok(run),
            Passes::Blocks(_) => Err(InputError::Unsupported(
                "this run is the blocked method's (RGBA32F blocks), not the faithful one's".into(),
            )
            .into()),
        }
    }

    /// The blocked run, or [`InputError::Unsupported`] for a faithful one (for the debugger).
    #[cfg(feature = "internals")]
    #[doc(hidden)]
    pub fn into_blocks(self) -> Result<Execution<'g, Rgba32F>> {
        match self.0 {
            Passes::Blocks(run) => Ok(run),
            Passes::Texels(_) => Err(InputError::Unsupported(
                "this run is the faithful method's (R32F texels), not the blocked one's".into(),
            )
            .into()),
        }
    }
}

impl Gpu {
    /// Uploads the input of `operation` and prepares its passes without running them, by the
    /// method `options` name among those that draw triangles ([`Method::Auto`] is the faithful
    /// method here; the tiled method has no passes to step:
    /// [`InputError::Unsupported`]). Input may be f32 or f64 (rounded to f32 once, range
    /// checked); the result is in f32, as the finished operation's.
    ///
    /// ```
    /// use symraster::{Gpu, Matrix, Operation, Options};
    /// let gpu = Gpu::new()?;
    /// let c = Matrix::from_row_major(2, 2, vec![4.0f64, 2.0, 2.0, 3.0])?;
    /// let mut run = gpu.step(Operation::Cholesky(&c), Options::default())?;
    /// while run.step()? {} // one pass at a time
    /// assert!(run.is_done() && (run.lower()?[(1, 0)] - 1.0).abs() < 1e-6);
    /// # Ok::<(), symraster::Error>(())
    /// ```
    pub fn step<T: Element>(
        &self,
        operation: Operation<'_, T>,
        options: impl Into<Options>,
    ) -> Result<Run<'_>> {
        let options = options.into();
        let method = self.resolve_raster(options.method)?;
        let blocked = method == Method::Blocked;
        let passes = match operation {
            Operation::Assembly { a, d } => {
                let (a, d) = (T::single("A", a)?, T::single_vec("d", d)?);
                if blocked {
                    Passes::Blocks(self.start_blocked_assembly_as(
                        &a,
                        &d,
                        self.blocks(options, a.rows()),
                    )?)
                } else {
                    Passes::Texels(self.start_assembly(&a, &d, options)?)
                }
            }
            Operation::Cholesky(c) => {
                let c = T::single("C", c)?;
                if blocked {
                    Passes::Blocks(
                        self.start_blocked_cholesky_as(&c, self.blocks(options, c.rows()))?,
                    )
                } else {
                    Passes::Texels(self.start_cholesky(&c, options)?)
                }
            }
            Operation::CholeskyPacked(_) | Operation::Lu(_) if blocked => {
                return Err(InputError::Unsupported(
                    "the blocked method steps assembly and Cholesky only".into(),
                )
                .into());
            }
            Operation::CholeskyPacked(c) => Passes::Texels(self.start_cholesky_packed(c)?),
            Operation::Lu(a) => Passes::Texels(self.start_lu(&*T::single("A", a)?)?),
        };
        Ok(Run(passes))
    }
}
