//! Single-channel 32-bit float textures (R32F), the storage of every matrix and vector.

use super::context::Context;
use crate::error::{DeviceError, Error, Result};
use glow::HasContext;

/// An R32F texture of `width` x `height` texels; texel (x, y) is value `y * width + x`.
pub struct Texture {
    ctx: Context,
    raw: glow::Texture,
    width: u32,
    height: u32,
}

impl Texture {
    /// Allocates a texture; its contents are undefined until written.
    pub fn new(ctx: &Context, width: usize, height: usize) -> Result<Self> {
        let gl = ctx.gl();
        let raw = unsafe { gl.create_texture() }.map_err(|message| {
            Error::from(DeviceError::GlCreate {
                what: "texture",
                message,
            })
        })?;
        let tex = Self {
            ctx: ctx.clone(),
            raw,
            width: width as u32,
            height: height as u32,
        };
        unsafe {
            gl.bind_texture(glow::TEXTURE_2D, Some(raw));
            gl.tex_parameter_i32(
                glow::TEXTURE_2D,
                glow::TEXTURE_MIN_FILTER,
                glow::NEAREST as i32,
            );
            gl.tex_parameter_i32(
                glow::TEXTURE_2D,
                glow::TEXTURE_MAG_FILTER,
                glow::NEAREST as i32,
            );
            gl.tex_parameter_i32(
                glow::TEXTURE_2D,
                glow::TEXTURE_WRAP_S,
                glow::CLAMP_TO_EDGE as i32,
            );
            gl.tex_parameter_i32(
                glow::TEXTURE_2D,
                glow::TEXTURE_WRAP_T,
                glow::CLAMP_TO_EDGE as i32,
            );
            gl.tex_parameter_i32(glow::TEXTURE_2D, glow::TEXTURE_MAX_LEVEL, 0);
            gl.tex_image_2d(
                glow::TEXTURE_2D,
                0,
                glow::R32F as i32,
                tex.width as i32,
                tex.height as i32,
                0,
                glow::RED,
                glow::FLOAT,
                glow::PixelUnpackData::Slice(None),
            );
        }
        ctx.check(|| format!("allocating a {width}x{height} R32F texture"))?;
        Ok(tex)
    }

    /// Allocates a texture and fills it with `data` (row y = `data[y*width..]`).
    pub fn from_data(ctx: &Context, width: usize, height: usize, data: &[f32]) -> Result<Self> {
        let tex = Self::new(ctx, width, height)?;
        tex.upload(data)?;
        Ok(tex)
    }

    /// Replaces the whole contents.
    pub fn upload(&self, data: &[f32]) -> Result<()> {
        assert_eq!(
            data.len(),
            self.len(),
            "upload: data does not match the texture size"
        );
        let gl = self.ctx.gl();
        unsafe {
            gl.bind_texture(glow::TEXTURE_2D, Some(self.raw));
            gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 4);
            gl.tex_sub_image_2d(
                glow::TEXTURE_2D,
                0,
                0,
                0,
                self.width as i32,
                self.height as i32,
                glow::RED,
                glow::FLOAT,
                glow::PixelUnpackData::Slice(Some(as_bytes(data))),
            );
        }
        self.ctx
            .check(|| format!("uploading a {}x{} texture", self.width, self.height))
    }

    /// Fills every texel with `value` (NaN included: used to poison render targets).
    pub fn fill(&self, value: f32) -> Result<()> {
        self.upload(&vec![value; self.len()])
    }

    /// Reads the whole contents back (waits for the GPU).
    pub fn download(&self) -> Result<Vec<f32>> {
        let mut out = vec![0f32; self.len()];
        let gl = self.ctx.gl();
        unsafe {
            gl.bind_texture(glow::TEXTURE_2D, Some(self.raw));
            gl.pixel_store_i32(glow::PACK_ALIGNMENT, 4);
            gl.get_tex_image(
                glow::TEXTURE_2D,
                0,
                glow::RED,
                glow::FLOAT,
                glow::PixelPackData::Slice(Some(as_bytes_mut(&mut out))),
            );
        }
        self.ctx
            .check(|| format!("reading back a {}x{} texture", self.width, self.height))?;
        Ok(out)
    }

    /// Width in texels.
    pub fn width(&self) -> usize {
        self.width as usize
    }

    /// Height in texels.
    pub fn height(&self) -> usize {
        self.height as usize
    }

    /// Number of texels.
    pub fn len(&self) -> usize {
        self.width() * self.height()
    }

    /// True for a texture with no texels.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The raw GL name.
    pub fn raw(&self) -> glow::Texture {
        self.raw
    }

    /// Binds to texture unit `unit`.
    pub fn bind(&self, unit: u32) {
        let gl = self.ctx.gl();
        unsafe {
            gl.active_texture(glow::TEXTURE0 + unit);
            gl.bind_texture(glow::TEXTURE_2D, Some(self.raw));
        }
    }
}

impl Drop for Texture {
    fn drop(&mut self) {
        unsafe { self.ctx.gl().delete_texture(self.raw) }
    }
}

fn as_bytes(data: &[f32]) -> &[u8] {
    // SAFETY: f32 has no padding and any byte pattern is a valid u8.
    unsafe { std::slice::from_raw_parts(data.as_ptr().cast(), std::mem::size_of_val(data)) }
}

fn as_bytes_mut(data: &mut [f32]) -> &mut [u8] {
    // SAFETY: every byte pattern is a valid f32, and the lengths match.
    unsafe { std::slice::from_raw_parts_mut(data.as_mut_ptr().cast(), std::mem::size_of_val(data)) }
}
