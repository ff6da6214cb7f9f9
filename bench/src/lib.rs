//! The benchmarks' shared parts. Each benchmark is a binary of this crate (`src/bin/`), run by
//! `scripts/bench` from the experiments of `bench/experiments.tsv`.

pub mod panel_flags;
