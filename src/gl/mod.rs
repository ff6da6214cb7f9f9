//! A small OpenGL layer on glow: RAII types that own GL objects and delete them on Drop.
//!
//! Every GL call of symraster is made here. Textures, render targets and ping-pong pairs are
//! generic over a [`TexelFormat`] (R32F unless named), buffers over any [`Pod`] value, and
//! vertex arrays over any [`VertexFormat`]; compute programs dispatch over storage buffers; a new kind of GL object gets its own file here.

mod buffer;
mod buffer_texture;
mod compute;
mod context;
mod framebuffer;
mod headless;
mod lazy_program;
mod ping_pong;
mod pod;
mod program;
mod render_texture;
mod texture;
mod timer;
mod vertex_array;

pub use buffer::{Buffer, BufferTarget, BufferUsage, read_backs};
pub use buffer_texture::{BufferTexture, TexelWidth};
pub use compute::{
    ComputeKernel, ComputeLimits, ComputeProgram, LOOP_BUDGET, LOOP_LIMIT, PIVOT_GLSL, Uniform,
    dispatches, max_group_size,
};
pub use context::{Context, DeviceInfo};
pub use framebuffer::Framebuffer;
pub use headless::HeadlessContext;
pub use lazy_program::LazyProgram;
pub use ping_pong::PingPong;
pub use pod::Pod;
pub use program::Program;
pub use render_texture::RenderTexture;
pub use texture::{R32F, Rgba8, Rgba32F, TexelFormat, Texture};
pub use timer::{GpuTimer, GpuTimestamp};
pub use vertex_array::{Attribute, VertexArray, VertexFormat};
