//! The fragment-shader methods drawn as triangles: the paper's faithful passes (Algorithms 3 and 5, full and packed), the blocked method, LU, the draw geometry soft-rasterized, and the GL layer under them.

#[path = "../common/mod.rs"]
mod common;

mod geometry;
mod packed_geometry;
mod full_format;
mod packed;
mod lu;
mod blocked;
mod blocked_packed;
mod blocked_limits;
mod gl_layer;
