//! Inversion, the sign function and Lyapunov equations: the inverses' kernels and options, the f64 product and conversions, the hardening against silent wrong answers.

#[path = "../common/mod.rs"]
mod common;

mod dgemm;
mod inverse;
mod inverse_convert;
mod inverse_hardening;
mod inverse_latency;
mod inverse_look_ahead;
mod inverse_panel;
mod inverse_prefetch;
mod inverse_rank;
mod inverse_rfp;
mod inverse_tournament;
