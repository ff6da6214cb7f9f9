//! GL_TIME_ELAPSED and GL_TIMESTAMP queries: GPU time of a stretch of commands.

use super::context::Context;
use crate::error::{DeviceError, Error, Result};
use glow::HasContext;
use std::time::Duration;

/// One GL_TIME_ELAPSED query, started and stopped around the commands to time.
pub struct GpuTimer {
    ctx: Context,
    raw: glow::Query,
}

impl GpuTimer {
    /// Creates the query object.
    pub fn new(ctx: &Context) -> Result<Self> {
        let raw = unsafe { ctx.gl().create_query() }.map_err(|message| {
            Error::from(DeviceError::GlCreate {
                what: "timer query",
                message,
            })
        })?;
        Ok(Self {
            ctx: ctx.clone(),
            raw,
        })
    }

    /// Starts timing.
    pub fn begin(&self) {
        unsafe { self.ctx.gl().begin_query(glow::TIME_ELAPSED, self.raw) }
    }

    /// Stops timing.
    pub fn end(&self) {
        unsafe { self.ctx.gl().end_query(glow::TIME_ELAPSED) }
    }

    /// Waits for the result and returns the GPU time between `begin` and `end`.
    pub fn elapsed(&self) -> Result<Duration> {
        let ns = unsafe {
            self.ctx
                .gl()
                .get_query_parameter_u64(self.raw, glow::QUERY_RESULT)
        };
        self.ctx
            .check(|| "reading a GL_TIME_ELAPSED query".into())?;
        Ok(Duration::from_nanos(ns))
    }
}

impl Drop for GpuTimer {
    fn drop(&mut self) {
        unsafe { self.ctx.gl().delete_query(self.raw) }
    }
}

/// One GL_TIMESTAMP query: the GPU's clock once the commands queued before it have run. Two
/// of them time a stretch of commands where a [`GpuTimer`] cannot (GL_TIME_ELAPSED queries do
/// not nest).
pub struct GpuTimestamp {
    ctx: Context,
    raw: glow::Query,
}

impl GpuTimestamp {
    /// Records the GPU's time after the commands queued so far.
    pub fn now(ctx: &Context) -> Result<Self> {
        let raw = unsafe { ctx.gl().create_query() }.map_err(|message| {
            Error::from(DeviceError::GlCreate {
                what: "timestamp query",
                message,
            })
        })?;
        unsafe { ctx.gl().query_counter(raw, glow::TIMESTAMP) };
        Ok(Self {
            ctx: ctx.clone(),
            raw,
        })
    }

    /// Waits for the result and returns the GPU time from `earlier` to this one.
    pub fn since(&self, earlier: &GpuTimestamp) -> Result<Duration> {
        let gl = self.ctx.gl();
        let (t0, t1) = unsafe {
            (
                gl.get_query_parameter_u64(earlier.raw, glow::QUERY_RESULT),
                gl.get_query_parameter_u64(self.raw, glow::QUERY_RESULT),
            )
        };
        self.ctx.check(|| "reading GL_TIMESTAMP queries".into())?;
        Ok(Duration::from_nanos(t1.saturating_sub(t0)))
    }
}

impl Drop for GpuTimestamp {
    fn drop(&mut self) {
        unsafe { self.ctx.gl().delete_query(self.raw) }
    }
}
