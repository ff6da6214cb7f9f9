//! The paper's own method (sections 3-4): the draw geometry of every pass of Algorithms 3 and
//! 5 and of LU, full and packed (Figs 2, 4-7), as plain data made by pure functions, run by
//! the fragment-pass machinery of [`crate::draw`].
//!
//! A [`Plan`](crate::draw::Plan) is the whole run of an algorithm: its vertices (uploaded
//! once) and the list of [`Pass`](crate::draw::Pass)es that draw ranges of them with a
//! [`Kernel`](crate::draw::Kernel). Coordinates are in texels, (x, y) =
//! (column, row), as in the paper's figures; entry (i, j) of a full-format matrix is texel
//! (j, i). `docs/geometry.md` holds the figures' vertex tables these functions reproduce.

pub mod assembly;
pub mod cholesky;
pub mod lu;
pub mod packed;
