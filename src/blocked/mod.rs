//! The blocked method (after the Brook+ blocked Cholesky sample): fragment passes over RGBA32F
//! textures whose texels hold 2 x 2 or 4 x 4 blocks, each fragment applying a rank-K update.
//! Its block layout (padding to whole block columns, packing of A, d and C) is `layout::blocked`,
//! [`geometry`] its passes' triangles as plain data; the `Gpu` operations that run them are in
//! `src/gpu/blocked.rs`, its kernels in `glsl/blocked/` (2 x 2) and `glsl/blocked4/` (4 x 4).

pub mod geometry;
