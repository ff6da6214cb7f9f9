//! The visual debugger's engine, with no window: step a run of assembly or Cholesky pass by
//! pass ([`Session`]), read every texture back ([`Snapshot`]) and compose a frame of heatmaps
//! with the pass's triangles outlined ([`Renderer`]), on screen or into PNG files
//! ([`record`]). The window itself (winit) lives in the binary, so nothing here makes an
//! event loop.

pub mod colormap;
mod record;
mod render;
mod session;
#[cfg(test)]
mod tests;

pub use record::{Recording, record};
pub use render::{FrameLayout, Renderer, Selection, ViewState, read_pixels};
pub use session::{Operation, Problem, Session, Snapshot, other_format};
