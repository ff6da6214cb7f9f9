//! Helpers shared by the integration tests.
#![allow(dead_code)]

use symraster::Gpu;

/// Unit roundoff of f32.
pub const U32: f64 = 5.960_464_477_539_063e-8; // 2^-24

/// A GL context for this test's thread (one per test: contexts are per thread).
pub fn gpu() -> Gpu {
    match Gpu::new() {
        Ok(g) => g,
        Err(e) => panic!("these tests need an OpenGL device (Mesa's llvmpipe is enough): {e}"),
    }
}

/// The f64 widening of an f32 slice.
pub fn widen(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}
