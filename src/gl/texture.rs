//! 2-D textures over texel formats: R32F (every matrix and vector of the paper's kernels),
//! RGBA32F (a 2 x 2 block, or one column of a 4 x 4 block, per texel) and RGBA8 (images, such as the debugger's heatmaps).

use super::context::Context;
use super::pod::{self, Pod};
use crate::error::{DeviceError, Error, Result};
use glow::HasContext;
use std::marker::PhantomData;

mod sealed {
    pub trait Sealed {}
}

/// A texel format: what one texel holds on the GPU and, as [`TexelFormat::Texel`], on the
/// host. Every format here is colour-renderable, so a [`RenderTexture`](super::RenderTexture)
/// can have any of them.
pub trait TexelFormat: sealed::Sealed + 'static {
    /// One texel on the host: `f32`, `[f32; 4]` or `[u8; 4]`.
    type Texel: Pod;
    /// The name in messages, as GL spells the internal format: "R32F".
    const NAME: &'static str;
    /// The sized internal format (GL_R32F, ...).
    const INTERNAL_FORMAT: u32;
    /// The pixel format of uploads and downloads (GL_RED, GL_RGBA).
    const FORMAT: u32;
    /// The component type of uploads and downloads (GL_FLOAT, GL_UNSIGNED_BYTE).
    const TYPE: u32;
}

/// One 32-bit float per texel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct R32F;

/// Four 32-bit floats per texel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rgba32F;

/// Four 8-bit unsigned normalized channels per texel (red, green, blue, alpha).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rgba8;

impl sealed::Sealed for R32F {}
impl sealed::Sealed for Rgba32F {}
impl sealed::Sealed for Rgba8 {}

impl TexelFormat for R32F {
    type Texel = f32;
    const NAME: &'static str = "R32F";
    const INTERNAL_FORMAT: u32 = glow::R32F;
    const FORMAT: u32 = glow::RED;
    const TYPE: u32 = glow::FLOAT;
}

impl TexelFormat for Rgba32F {
    type Texel = [f32; 4];
    const NAME: &'static str = "RGBA32F";
    const INTERNAL_FORMAT: u32 = glow::RGBA32F;
    const FORMAT: u32 = glow::RGBA;
    const TYPE: u32 = glow::FLOAT;
}

impl TexelFormat for Rgba8 {
    type Texel = [u8; 4];
    const NAME: &'static str = "RGBA8";
    const INTERNAL_FORMAT: u32 = glow::RGBA8;
    const FORMAT: u32 = glow::RGBA;
    const TYPE: u32 = glow::UNSIGNED_BYTE;
}

/// A `width` x `height` texture of format `F` (R32F unless named); texel (x, y) is value
/// `y * width + x` of uploads and downloads. Nearest filtering, clamped to the edge, one
/// mipmap level: a texel is always fetched as it is.
pub struct Texture<F: TexelFormat = R32F> {
    ctx: Context,
    raw: glow::Texture,
    width: u32,
    height: u32,
    _format: PhantomData<F>,
}

impl Texture<R32F> {
    /// Allocates an R32F texture; its contents are undefined until written.
    pub fn new(ctx: &Context, width: usize, height: usize) -> Result<Self> {
        Self::allocate(ctx, width, height)
    }

    /// Allocates an R32F texture and fills it with `data` (row y = `data[y*width..]`).
    pub fn from_data(ctx: &Context, width: usize, height: usize, data: &[f32]) -> Result<Self> {
        Self::with_texels(ctx, width, height, data)
    }
}

impl<F: TexelFormat> Texture<F> {
    /// Allocates a texture of format `F`; its contents are undefined until written.
    pub fn allocate(ctx: &Context, width: usize, height: usize) -> Result<Self> {
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
            _format: PhantomData,
        };
        unsafe {
            gl.bind_texture(glow::TEXTURE_2D, Some(raw));
            for (parameter, value) in [
                (glow::TEXTURE_MIN_FILTER, glow::NEAREST),
                (glow::TEXTURE_MAG_FILTER, glow::NEAREST),
                (glow::TEXTURE_WRAP_S, glow::CLAMP_TO_EDGE),
                (glow::TEXTURE_WRAP_T, glow::CLAMP_TO_EDGE),
            ] {
                gl.tex_parameter_i32(glow::TEXTURE_2D, parameter, value as i32);
            }
            gl.tex_parameter_i32(glow::TEXTURE_2D, glow::TEXTURE_MAX_LEVEL, 0);
            gl.tex_image_2d(
                glow::TEXTURE_2D,
                0,
                F::INTERNAL_FORMAT as i32,
                tex.width as i32,
                tex.height as i32,
                0,
                F::FORMAT,
                F::TYPE,
                glow::PixelUnpackData::Slice(None),
            );
        }
        let bytes = crate::memory::bytes_of::<F::Texel>(width.saturating_mul(height));
        ctx.check_allocation(bytes, || format!("a {width}x{height} {} texture", F::NAME))?;
        Ok(tex)
    }

    /// Allocates a texture and fills it with `texels` (row y = `texels[y*width..]`).
    pub fn with_texels(
        ctx: &Context,
        width: usize,
        height: usize,
        texels: &[F::Texel],
    ) -> Result<Self> {
        let tex = Self::allocate(ctx, width, height)?;
        tex.upload(texels)?;
        Ok(tex)
    }

    /// Replaces the whole contents.
    pub fn upload(&self, texels: &[F::Texel]) -> Result<()> {
        assert_eq!(
            texels.len(),
            self.len(),
            "upload: data does not match the texture size"
        );
        let gl = self.ctx.gl();
        unsafe {
            gl.bind_texture(glow::TEXTURE_2D, Some(self.raw));
            // Every texel is a multiple of 4 bytes, so rows are 4-aligned.
            gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 4);
            gl.tex_sub_image_2d(
                glow::TEXTURE_2D,
                0,
                0,
                0,
                self.width as i32,
                self.height as i32,
                F::FORMAT,
                F::TYPE,
                glow::PixelUnpackData::Slice(Some(pod::bytes(texels))),
            );
        }
        self.ctx.check(|| {
            format!(
                "uploading a {}x{} {} texture",
                self.width,
                self.height,
                F::NAME
            )
        })
    }

    /// Fills every texel with `value` (NaN included: used to poison render targets).
    pub fn fill(&self, value: F::Texel) -> Result<()> {
        let texels = crate::memory::filled(self.len(), value, || {
            format!(
                "filling a {}x{} {} texture",
                self.width,
                self.height,
                F::NAME
            )
        })?;
        self.upload(&texels)
    }

    /// Reads the whole contents back (waits for the GPU).
    pub fn download(&self) -> Result<Vec<F::Texel>> {
        let mut out = pod::zeroed::<F::Texel>(self.len(), || {
            format!(
                "reading back a {}x{} {} texture",
                self.width,
                self.height,
                F::NAME
            )
        })?;
        let gl = self.ctx.gl();
        unsafe {
            gl.bind_texture(glow::TEXTURE_2D, Some(self.raw));
            gl.pixel_store_i32(glow::PACK_ALIGNMENT, 4);
            gl.get_tex_image(
                glow::TEXTURE_2D,
                0,
                F::FORMAT,
                F::TYPE,
                glow::PixelPackData::Slice(Some(pod::bytes_mut(&mut out))),
            );
        }
        self.ctx.check(|| {
            format!(
                "reading back a {}x{} {} texture",
                self.width,
                self.height,
                F::NAME
            )
        })?;
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

    /// The raw GL name, for the other GL objects of this module.
    pub(crate) fn raw(&self) -> glow::Texture {
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

impl<F: TexelFormat> Drop for Texture<F> {
    fn drop(&mut self) {
        unsafe { self.ctx.gl().delete_texture(self.raw) }
    }
}
