//! What the refined solves (least squares, the SPD solve, their f64 fallback) share once
//! refinement has run: when to hand over to the f64 factor, and the [`Solution`] built from a
//! [`Refinement`].

use super::{Fallback, Refinement, Solution, SolveOptions, Stop, Timings};
use crate::error::{Error, NumericalError, Result};
use std::time::Duration;

/// The failing column where `e` says the f32 factor failed (not positive definite, a pivot at
/// rounding level, a non-finite entry): C may still be SPD in f64, as LAPACK's dsposv assumes.
pub(crate) fn single_factor_failure(e: &Error) -> Option<usize> {
    match e {
        Error::Numerical(
            NumericalError::NotPositiveDefinite { column, .. }
            | NumericalError::NumericallySingular { column, .. }
            | NumericalError::NonFiniteResult { col: column, .. },
        ) => Some(*column),
        _ => None,
    }
}

impl Fallback {
    /// Why refinement that stopped with `stop` hands over to the f64 factor, if it does
    /// (`enabled`: the options' fallback).
    pub(crate) fn after(stop: Stop, enabled: bool) -> Option<Self> {
        match stop {
            Stop::Converged => None,
            _ if !enabled => None,
            Stop::Stagnated { iteration } => Some(Fallback::Stagnated { iteration }),
            Stop::IterationLimit => Some(Fallback::IterationLimit),
        }
    }
}

impl Solution {
    /// The solution refinement reached, converged where its test held. A backward error or
    /// condition estimate that is not finite is [`NumericalError::RefinementDiverged`], never a
    /// result.
    pub(crate) fn refined(
        refinement: Refinement,
        x0: Vec<f64>,
        options: &SolveOptions,
        tolerance: f64,
        condition: f64,
        fallback: Option<Fallback>,
        timings: Timings,
    ) -> Result<Self> {
        if !refinement.backward_error.is_finite() || !condition.is_finite() {
            return Err(NumericalError::RefinementDiverged {
                iteration: refinement.iterations,
                residual: refinement.backward_error,
            }
            .into());
        }
        Ok(Solution {
            converged: refinement.stop == Stop::Converged,
            x: refinement.x,
            x0,
            iterations: refinement.iterations,
            residuals: refinement.residuals,
            criteria: refinement.criteria,
            criterion: options.criterion,
            tolerance,
            backward_error: refinement.backward_error,
            condition,
            forward_error_estimate: condition * refinement.backward_error,
            fallback,
            timings,
        })
    }

    /// The f64 fallback's solution with the history of the f32 refinement before it: x⁰ and
    /// the steps taken on the f32 factor, and their times (x, its backward error and the
    /// condition estimate stay the f64 factor's).
    pub(crate) fn after_single(
        mut self,
        x0: Vec<f64>,
        refinement: Refinement,
        (x0_time, refine_time): (Duration, Duration),
    ) -> Self {
        self.x0 = x0;
        self.iterations = refinement.iterations;
        self.residuals = refinement.residuals;
        self.criteria = refinement.criteria;
        self.timings.x0 = x0_time;
        self.timings.refine = refine_time;
        self
    }
}
