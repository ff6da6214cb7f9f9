//! The public API as a user calls it: contexts, the refined solves and least squares, numerical hardening, wide inputs, the file readers, and the examples of use.

#[path = "../common/mod.rs"]
mod common;

mod contexts;
mod spd_solve;
mod least_squares;
mod least_squares_parts;
mod numerics;
mod io_props;
mod wide;
mod wide_split;
mod examples;
