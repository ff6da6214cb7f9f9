//! Debug-level timing of an operation's phases (`RUST_LOG=symraster=debug`): where the time
//! goes, and how many reads from the GPU (round trips) each phase waits on.

use crate::gl::{Context, read_backs};
use std::time::Instant;

/// Debug-level timing of an operation's phases (`RUST_LOG=symraster=debug`): where the time goes.
pub(crate) struct Phases {
    last: Instant,
    /// [`read_backs`] at the last mark.
    reads: u64,
    what: &'static str,
}

impl Phases {
    pub(crate) fn new(start: Instant) -> Self {
        Self::named("least squares", start)
    }

    /// Phases of the operation `what`.
    pub(crate) fn named(what: &'static str, start: Instant) -> Self {
        Self {
            last: start,
            reads: read_backs(),
            what,
        }
    }

    /// Logs the time since the last mark under `name`.
    /// [`Phases::mark`] once the GPU has finished the phase's work (a glFinish, only when
    /// the debug log is on: the phases' GPU share, not only the time to issue it).
    pub(crate) fn mark_finished(&mut self, ctx: &Context, name: &str) {
        if log::log_enabled!(log::Level::Debug) {
            ctx.finish();
            self.mark(name);
        }
    }

    pub(crate) fn mark(&mut self, name: &str) {
        let (now, reads) = (Instant::now(), read_backs());
        log::debug!(
            "{}: {name}: {:.2} ms, {} reads from the GPU",
            self.what,
            (now - self.last).as_secs_f64() * 1e3,
            reads - self.reads
        );
        (self.last, self.reads) = (now, reads);
    }
}
