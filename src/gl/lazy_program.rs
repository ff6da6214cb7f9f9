//! A compute program compiled on first use: opening a set of kernels then costs only the ones
//! an operation reaches, since the driver's compilation is most of a first call's time. An
//! operation that knows which programs it will reach starts them together first, so that a
//! driver compiling in its own threads compiles them side by side.

use super::compute::{ComputeKernel, ComputeProgram, PendingCompute};
use super::context::Context;
use crate::error::Result;
use std::cell::{OnceCell, RefCell};

/// A compute program's source, compiled and linked (and checked against its kernel's
/// declaration) the first time [`LazyProgram::get`] is called, or handed to the driver early
/// by [`LazyProgram::start`].
pub struct LazyProgram {
    ctx: Context,
    kernel: &'static ComputeKernel,
    variant: String,
    source: String,
    pending: RefCell<Option<PendingCompute>>,
    program: OnceCell<ComputeProgram>,
}

impl LazyProgram {
    /// `source` for `kernel` (its `variant` names it in errors and logs), not yet compiled.
    pub fn new(ctx: &Context, kernel: &'static ComputeKernel, variant: &str, source: String) -> Self {
        Self {
            ctx: ctx.clone(),
            kernel,
            variant: variant.to_string(),
            source,
            pending: RefCell::new(None),
            program: OnceCell::new(),
        }
    }

    /// Hands the program to the driver to compile without waiting, where the driver offers
    /// parallel compilation and it is neither compiled nor started yet; elsewhere nothing (it
    /// then compiles on first use, as it would). A failure to start is left for
    /// [`LazyProgram::get`] to meet and report.
    pub fn start(&self) {
        if !self.ctx.compiles_in_parallel()
            || self.program.get().is_some()
            || self.pending.borrow().is_some()
        {
            return;
        }
        if let Ok(p) = ComputeProgram::start(&self.ctx, self.kernel, &self.variant, &self.source) {
            *self.pending.borrow_mut() = Some(p);
        }
    }

    /// The program, compiled and linked now (or its started compile waited for) if it was not
    /// yet; a failure is returned each time it is asked for, never cached.
    pub fn get(&self) -> Result<&ComputeProgram> {
        if let Some(p) = self.program.get() {
            return Ok(p);
        }
        let pending = self.pending.borrow_mut().take();
        let p = match pending {
            Some(started) => started.finish()?,
            None => ComputeProgram::new(&self.ctx, self.kernel, &self.variant, &self.source)?,
        };
        Ok(self.program.get_or_init(|| p))
    }

    /// The program where it has been compiled (nothing is compiled here).
    pub fn compiled(&self) -> Option<&ComputeProgram> {
        self.program.get()
    }

    /// Whether the program has been compiled.
    pub fn is_compiled(&self) -> bool {
        self.program.get().is_some()
    }
}
