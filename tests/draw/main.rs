//! The fragment-shader methods drawn as triangles: the paper's faithful passes (Algorithms 3 and 5, full and packed), the blocked method, LU, the draw geometry soft-rasterized, and the GL layer under them.

#[path = "../common/mod.rs"]
mod common;

mod blocked;
mod blocked_limits;
mod blocked_packed;
mod full_format;
mod geometry;
mod gl_layer;
mod lu;
mod packed;
mod packed_geometry;
