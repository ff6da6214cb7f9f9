//! The benchmarks' shared parts. Each benchmark is a binary of this crate (`src/bin/`), run by
//! `scripts/bench` from the experiments of `bench/experiments.tsv`.

pub mod panel_flags;

/// The orders given as the program's arguments, or `default` where none is.
pub fn sizes_or(default: &[usize]) -> Result<Vec<usize>, std::num::ParseIntError> {
    let sizes = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<Vec<usize>, _>>()?;
    Ok(if sizes.is_empty() {
        default.to_vec()
    } else {
        sizes
    })
}
