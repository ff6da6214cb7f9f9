//! A small OpenGL layer on glow: RAII types that own GL objects and delete them on Drop.

mod context;
mod framebuffer;
mod headless;
mod ping_pong;
mod program;
mod texture;
mod timer;
mod vertex_array;

pub use context::{Context, DeviceInfo};
pub use framebuffer::Framebuffer;
pub use headless::{DEVICE_ENV, HeadlessContext, MAX_TEXTURE_SIZE_ENV};
pub use ping_pong::{PingPong, RenderTexture};
pub use program::Program;
pub use texture::Texture;
pub use timer::GpuTimer;
pub use vertex_array::VertexArray;
