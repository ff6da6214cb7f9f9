//! Timing of GPU runs: the library's timer-query timing and medians.

pub use symraster::timing::{median, time_finish};
