//! The public API as a user calls it: contexts, the refined solves and least squares, numerical hardening, wide inputs, the file readers, and the examples of use.

#[path = "../common/mod.rs"]
mod common;

mod cholesky_view;
mod contexts;
mod diagnoses;
mod double_factor;
mod examples;
mod io_props;
mod least_squares;
mod least_squares_double;
mod least_squares_parts;
mod least_squares_view;
mod numerics;
mod spd_double;
mod spd_solve;
mod wide;
mod wide_split;
