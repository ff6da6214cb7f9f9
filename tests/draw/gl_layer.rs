//! The GL layer on its own: textures in each texel format, render targets of any format,
//! buffers, vertex arrays over a vertex type of the caller's, the ping-pong pair's roles.

use symraster::Gpu;
use symraster::gl::{
    Attribute, Buffer, BufferTarget, BufferUsage, DeviceInfo, Framebuffer, PingPong, Program, R32F,
    RenderTexture, Rgba8, Rgba32F, TexelFormat, Texture, VertexArray, VertexFormat,
};
use symraster::internal::GpuInternals;
use symraster::timing::{Preheat, PreheatLimits};

fn round_trip<F: TexelFormat>(gpu: &Gpu, texels: Vec<F::Texel>, fill: F::Texel)
where
    F::Texel: PartialEq + std::fmt::Debug,
{
    let ctx = gpu.context();
    let t = Texture::<F>::with_texels(ctx, 3, 2, &texels).unwrap();
    assert_eq!((t.width(), t.height(), t.len()), (3, 2, 6));
    assert_eq!(t.download().unwrap(), texels, "{}", F::NAME);
    t.fill(fill).unwrap();
    assert_eq!(t.download().unwrap(), vec![fill; 6], "{}", F::NAME);
}

#[test]
fn textures_round_trip_in_every_format() {
    let gpu = Gpu::new().unwrap();
    round_trip::<R32F>(&gpu, (0..6).map(|i| i as f32 - 2.5).collect(), 7.5);
    round_trip::<Rgba32F>(
        &gpu,
        (0..6).map(|i| [i as f32, -1.0, 1e30, 0.25]).collect(),
        [1.0, 2.0, 3.0, 4.0],
    );
    round_trip::<Rgba8>(
        &gpu,
        (0..6).map(|i| [i, 255, 0, 17]).collect(),
        [9, 8, 7, 6],
    );
    // The R32F shorthand the kernels use.
    let t = Texture::from_data(gpu.context(), 2, 1, &[1.0, 2.0]).unwrap();
    assert_eq!(t.download().unwrap(), [1.0, 2.0]);
}

#[test]
fn buffers_hold_upload_write_and_download() {
    let gpu = Gpu::new().unwrap();
    let ctx = gpu.context();
    let mut b = Buffer::new(
        ctx,
        BufferTarget::Vertices,
        BufferUsage::Dynamic,
        &[[1u32, 2], [3, 4], [5, 6]],
    )
    .unwrap();
    assert_eq!(b.len(), 3);
    b.write(1, &[[7, 8]]).unwrap();
    assert_eq!(b.download().unwrap(), [[1, 2], [7, 8], [5, 6]]);
    b.upload(&[[9, 9]]).unwrap();
    assert_eq!(b.download().unwrap(), [[9, 9]]);
    let z = Buffer::<f32>::zeroed(ctx, BufferTarget::Uniforms, BufferUsage::Static, 4).unwrap();
    assert_eq!(z.download().unwrap(), [0.0; 4]);
}

#[test]
fn ping_pong_says_which_texture_is_the_source() {
    let gpu = Gpu::new().unwrap();
    let mut pair = PingPong::new(gpu.context(), 2, 2).unwrap();
    pair.get(0).texture().fill(0.0).unwrap();
    pair.get(1).texture().fill(1.0).unwrap();
    assert_eq!(pair.source_index(), 0);
    assert_eq!(pair.source().texture().download().unwrap(), [0.0; 4]);
    pair.swap();
    assert_eq!(pair.source_index(), 1);
    assert_eq!(pair.source().texture().download().unwrap(), [1.0; 4]);
    assert_eq!(pair.target().texture().download().unwrap(), [0.0; 4]);
    let blocks = PingPong::<Rgba32F>::allocate(gpu.context(), 3, 1).unwrap();
    assert_eq!((blocks.width(), blocks.height()), (3, 1));
}

/// A vertex type of the caller's own: a position and a colour.
#[derive(Clone, Copy)]
struct Coloured {
    position: [f32; 2],
    colour: [f32; 3],
}

impl VertexFormat for Coloured {
    type Data = [f32; 5];
    const ATTRIBUTES: &'static [Attribute] = &[Attribute::f32s(0, 2, 0), Attribute::f32s(1, 3, 8)];
    fn data(&self) -> [f32; 5] {
        let (p, c) = (self.position, self.colour);
        [p[0], p[1], c[0], c[1], c[2]]
    }
}

const VERTEX: &str = "#version 330 core
layout(location = 0) in vec2 position;
layout(location = 1) in vec3 colour;
uniform vec2 viewport;
out vec3 c;
void main() { c = colour; gl_Position = vec4(position / viewport * 2.0 - 1.0, 0.0, 1.0); }
";
const FRAGMENT: &str = "#version 330 core
in vec3 c;
out vec4 o;
void main() { o = vec4(c, 1.0); }
";

#[test]
fn an_rgba8_target_draws_any_vertex_type_and_reads_back() {
    let gpu = Gpu::new().unwrap();
    let ctx = gpu.context();
    let (w, h) = (8, 4);
    let target = RenderTexture::<Rgba8>::allocate(ctx, w, h).unwrap();
    target.framebuffer().bind();
    ctx.set_viewport(w, h);
    ctx.set_plain_raster_state();
    ctx.clear([0.0, 0.0, 1.0, 1.0]);
    // The left half red, as two triangles.
    let red = |x: f32, y: f32| Coloured {
        position: [x, y],
        colour: [1.0, 0.0, 0.0],
    };
    let quad = [
        red(0.0, 0.0),
        red(0.0, 4.0),
        red(4.0, 4.0),
        red(0.0, 0.0),
        red(4.0, 4.0),
        red(4.0, 0.0),
    ];
    let mut vertices = VertexArray::<Coloured>::streaming(ctx).unwrap();
    assert!(vertices.is_empty());
    vertices.upload(&quad).unwrap();
    let program = Program::new(ctx, "coloured", VERTEX, FRAGMENT).unwrap();
    program.bind();
    program.set_viewport(w as f32, h as f32);
    vertices.bind();
    vertices.draw(0, vertices.len());
    ctx.unbind_program_and_vertex_array();
    let pixels = ctx.read_pixels_rgba8(w, h).unwrap();
    for y in 0..h {
        for x in 0..w {
            let want = if x < 4 {
                [255, 0, 0, 255]
            } else {
                [0, 0, 255, 255]
            };
            assert_eq!(pixels[y * w + x], want, "pixel ({x}, {y})");
        }
    }
    // The texture holds the same pixels.
    assert_eq!(target.texture().download().unwrap(), pixels);
    Framebuffer::bind_default(ctx);
}

#[test]
fn device_info_is_the_drivers() {
    let gpu = Gpu::new().unwrap();
    let info = DeviceInfo::query(gpu.context()).unwrap();
    assert_eq!(info.renderer, gpu.info().renderer);
    assert_eq!(info.max_texture_size, gpu.info().max_texture_size);
    // A lowered limit is the tuning's, never the driver's.
    let tuning = symraster::Tuning {
        max_texture_size: Some(64),
        ..symraster::Tuning::default()
    };
    let lowered = Gpu::builder().tuning(tuning).build().unwrap();
    assert_eq!(
        lowered.info().max_texture_size,
        64.min(info.max_texture_size)
    );
    assert_eq!(
        lowered.info().driver_max_texture_size,
        info.max_texture_size
    );
}

/// The busy kernel that brings a GPU's clocks up before timed runs compiles and keeps the
/// device busy for the time asked, its first run at least `first`, later runs held to the rate
/// it saw (on software renderers the timing code skips it; here it is run anyway, so CI
/// compiles the shader the GPUs run).
#[test]
fn preheat_compiles_and_keeps_the_device_busy_for_the_time_asked() {
    let gpu = Gpu::new().unwrap();
    let ctx = gpu.context();
    let forced = Preheat::on_any_device(ctx).unwrap();
    assert_eq!(forced.is_active(), gpu.info().has_compute());
    let ms = std::time::Duration::from_millis;
    let before = symraster::gl::GpuTimestamp::now(ctx).unwrap();
    let limits = PreheatLimits {
        min: ms(30),
        settle: ms(10),
        first: ms(40),
        max: ms(5000),
        top: 1.08,
    };
    let spent = forced.run_with(ctx, limits);
    // GL_TIMESTAMP queries around the busy work see the GPU's time pass.
    let stamped = symraster::gl::GpuTimestamp::now(ctx)
        .unwrap()
        .since(&before)
        .unwrap();
    if forced.is_active() {
        assert!(spent >= ms(40) && spent < ms(5000), "{spent:?}");
        assert!(stamped >= ms(15) && stamped < ms(10_000), "{stamped:?}");
        // A later run is held to the rate the first one saw, not to `first`: with any rate
        // counting as at speed it ends once settled.
        let later = forced.run_with(
            ctx,
            PreheatLimits {
                first: ms(60_000),
                top: f64::INFINITY,
                ..limits
            },
        );
        assert!(later >= ms(30) && later < ms(5000), "{later:?}");
    }
    ctx.check(|| "preheating".into()).unwrap();
    // The timing code's own: idle on software renderers, active on GPUs with compute.
    let own = Preheat::new(ctx).unwrap();
    assert_eq!(
        own.is_active(),
        gpu.info().has_compute() && !gpu.info().software
    );
}

/// A kernel that declares `count` (and optionally `scale`) and binds `Out` at 0, for the
/// interface checks below.
static COUNTER: symraster::gl::ComputeKernel = symraster::gl::ComputeKernel {
    name: "test/counter",
    source: "layout(local_size_x = 1) in;\n\
             layout(std430, binding = 0) buffer Out { uint out_[]; };\n\
             uniform uint count;\n\
             void main() { out_[0] = count; }\n",
    buffers: &[("Out", 0)],
    uniforms: &["count"],
    optional: &["scale"],
};

fn counter(gpu: &Gpu, source: &str) -> symraster::Result<symraster::gl::ComputeProgram> {
    symraster::gl::ComputeProgram::new(
        gpu.context(),
        &COUNTER,
        "",
        &format!("#version 430\n{source}"),
    )
}

#[test]
fn a_misspelt_uniform_is_an_error_when_linked_and_when_set() {
    let gpu = Gpu::new().unwrap();
    if !gpu.info().has_compute() {
        return;
    }
    // As declared: links; declared names set (the optional one inactive: skipped); a
    // misspelt name is an error naming kernel and uniform.
    let p = counter(&gpu, COUNTER.source).unwrap();
    p.set("count", symraster::gl::Uniform::U32(3)).unwrap();
    p.set("scale", symraster::gl::Uniform::U32(1)).unwrap();
    for e in [
        p.set("cuont", symraster::gl::Uniform::U32(3)).unwrap_err(),
        p.set_all(&[
            ("count", symraster::gl::Uniform::U32(3)),
            ("cuont", symraster::gl::Uniform::U32(3)),
        ])
        .unwrap_err(),
    ] {
        let m = e.to_string();
        assert!(m.contains("test/counter") && m.contains("cuont"), "{m}");
        assert!(!m.contains('\n'), "{m}");
    }
    // The shader misspells it: active but undeclared, and the declared one missing.
    let e = counter(&gpu, &COUNTER.source.replace("count", "cuont"))
        .err()
        .expect("a misspelt uniform links");
    let m = e.to_string();
    assert!(m.contains("test/counter") && m.contains("cuont"), "{m}");
    assert!(matches!(
        e,
        symraster::Error::Device(symraster::error::DeviceError::KernelInterface { .. })
    ));
    // A declared uniform the shader does not use.
    let e = counter(
        &gpu,
        &COUNTER.source.replace("out_[0] = count;", "out_[0] = 1u;"),
    )
    .err()
    .expect("an unused declared uniform links");
    assert!(e.to_string().contains("count"), "{e}");
    // A block at another binding than declared is bound where the table says.
    let p = counter(&gpu, &COUNTER.source.replace("binding = 0", "binding = 2")).unwrap();
    let out = Buffer::new(
        gpu.context(),
        BufferTarget::Storage,
        BufferUsage::Dynamic,
        &[0u32],
    )
    .unwrap();
    out.bind_base(0);
    p.set("count", symraster::gl::Uniform::U32(7)).unwrap();
    p.dispatch([1, 1, 1]).unwrap();
    assert_eq!(out.download().unwrap(), [7]);
}

/// A launch without the barrier after it (`dispatch_unfenced`) writes what it should, seen
/// once the context's storage barrier is issued; launches count on the thread that issues
/// them only (another thread's context does not add to this thread's count).
#[test]
fn an_unfenced_launch_is_seen_after_the_barrier_and_counted_on_its_thread() {
    let gpu = Gpu::new().unwrap();
    if !gpu.info().has_compute() {
        return;
    }
    let p = counter(&gpu, COUNTER.source).unwrap();
    let out = |v: u32| {
        Buffer::new(
            gpu.context(),
            BufferTarget::Storage,
            BufferUsage::Dynamic,
            &[v],
        )
        .unwrap()
    };
    let (first, second) = (out(0), out(0));
    let before = symraster::gl::dispatches();
    first.bind_base(0);
    p.set("count", symraster::gl::Uniform::U32(7)).unwrap();
    p.dispatch_unfenced([1, 1, 1]).unwrap();
    second.bind_base(0);
    p.set("count", symraster::gl::Uniform::U32(9)).unwrap();
    p.dispatch_unfenced([1, 1, 1]).unwrap();
    gpu.context().storage_barrier();
    assert_eq!(first.download().unwrap(), [7]);
    assert_eq!(second.download().unwrap(), [9]);
    assert_eq!(symraster::gl::dispatches() - before, 2);
    let mid = symraster::gl::dispatches();
    std::thread::spawn(|| {
        let other = Gpu::new().unwrap();
        let p = counter(&other, COUNTER.source).unwrap();
        let sink = Buffer::new(
            other.context(),
            BufferTarget::Storage,
            BufferUsage::Dynamic,
            &[0u32],
        )
        .unwrap();
        sink.bind_base(0);
        p.set("count", symraster::gl::Uniform::U32(5)).unwrap();
        let before = symraster::gl::dispatches();
        p.dispatch([1, 1, 1]).unwrap();
        assert_eq!(symraster::gl::dispatches() - before, 1);
        assert_eq!(sink.download().unwrap(), [5]);
    })
    .join()
    .unwrap();
    assert_eq!(symraster::gl::dispatches(), mid);
}

/// Every kernel of the compute-kernel table links with its declared uniforms and bindings,
/// in the tiled configurations llvmpipe runs (texel) and the GPU's (which compiles here too).
#[test]
fn every_compute_kernel_links_as_declared() {
    use symraster::tiled::{KernelConfig, TiledKernels};
    let gpu = Gpu::new().unwrap();
    if !gpu.info().has_compute() {
        return;
    }
    let ctx = gpu.context();
    for config in [KernelConfig::TEXEL, KernelConfig::GPU] {
        TiledKernels::new(ctx, config).unwrap_or_else(|e| panic!("{config:?}: {e}"));
        symraster::inverse::Inverter::with_config(ctx, config)
            .unwrap_or_else(|e| panic!("{config:?}: {e}"));
    }
    // The f64 product's tiles, compiled on first use.
    {
        use symraster::inverse::kernels::double::{DoubleProduct, DoubleSquare, DoubleTile};
        let inv = symraster::inverse::Inverter::new(&gpu).unwrap();
        let x = DoubleSquare::upload(&inv, "x", &symraster::Matrix::filled(1, 1, 2.0)).unwrap();
        let c = DoubleSquare::new(&inv, "c", 1).unwrap();
        for tile in DoubleTile::ALL {
            let p = DoubleProduct::new(c.op(false), x.op(false), x.op(false));
            let sum = inv
                .dgemm_with(p, true, tile)
                .unwrap_or_else(|e| panic!("{tile:?}: {e}"));
            assert_eq!(sum, 16.0, "{tile:?}");
        }
        // The f64 ↔ f32 conversions, also compiled on first use.
        inv.symmetrize(&x).unwrap();
        assert_eq!(x.download().unwrap()[(0, 0)], 2.0);
    }
    let a = symraster::Matrix::from_fn(2, 3, |i, j| (i + j) as f64 + 1.0);
    gpu.device_residual(&a, &[1.0; 3], &[1.0; 3]).unwrap();
    Preheat::on_any_device(ctx).unwrap();
    let names: std::collections::HashSet<_> = symraster::compute_kernels::ALL
        .iter()
        .map(|k| k.name)
        .collect();
    assert_eq!(names.len(), symraster::compute_kernels::ALL.len());
}

/// Writes and reads of 8 MiB or more go through a kept staging buffer: they land whole at
/// their offset, whatever the sizes before them (a larger staging buffer serves a smaller
/// transfer, a smaller one is replaced), and the rest of the buffer is untouched.
#[test]
fn large_writes_and_reads_through_staging_land_whole() {
    use symraster::gl::{Buffer, BufferTarget, BufferUsage};
    let gpu = Gpu::new().unwrap();
    let ctx = gpu.context();
    let len = (40 << 20) / 4;
    let b = Buffer::<f32>::new(
        ctx,
        BufferTarget::Storage,
        BufferUsage::Static,
        &vec![-1.0f32; len],
    )
    .unwrap();
    let mut want = vec![-1.0f32; len];
    for (round, (offset, count)) in [(0, 3 << 20), (5, 9 << 20), (7 << 20, 2 << 20), (3, len - 3)]
        .into_iter()
        .enumerate()
    {
        let data: Vec<f32> = (0..count)
            .map(|i| (i % 4093) as f32 + round as f32)
            .collect();
        b.write(offset, &data).unwrap();
        want[offset..offset + count].copy_from_slice(&data);
        assert!(b.download().unwrap() == want, "round {round}: whole buffer");
        let part = b.download_range(offset + 1, count - 1).unwrap();
        assert!(
            part == want[offset + 1..offset + count],
            "round {round}: range"
        );
    }
}

/// Large freed buffers are kept and handed to the next uninitialized buffer of their size and
/// usage: it works as a fresh one (written and read whole), and a zeroed buffer of the same
/// size never takes a kept one's contents.
#[test]
fn freed_large_buffers_are_reused_and_zeroed_ones_are_zero() {
    use symraster::gl::{Buffer, BufferTarget, BufferUsage};
    let gpu = Gpu::new().unwrap();
    let ctx = gpu.context();
    let len = (16 << 20) / 4;
    let pattern: Vec<f32> = (0..len).map(|i| (i % 1000) as f32 + 0.5).collect();
    for round in 0..3 {
        let b = Buffer::<f32>::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Static, len)
            .unwrap();
        b.write(0, &pattern).unwrap();
        assert_eq!(b.download().unwrap(), pattern, "round {round}");
    }
    let z = Buffer::<f32>::zeroed(ctx, BufferTarget::Storage, BufferUsage::Static, len).unwrap();
    assert!(z.download().unwrap().iter().all(|&v| v == 0.0));
    // Many at once, more than are kept: each holds its own values.
    let many: Vec<_> = (0..10)
        .map(|k| {
            let b =
                Buffer::<f32>::uninitialized(ctx, BufferTarget::Storage, BufferUsage::Static, len)
                    .unwrap();
            b.write(0, &vec![k as f32; len]).unwrap();
            b
        })
        .collect();
    for (k, b) in many.iter().enumerate() {
        assert!(
            b.download_range(len - 3, 3)
                .unwrap()
                .iter()
                .all(|&v| v == k as f32)
        );
    }
}

/// The fragment kernels compile on first use; every one of them links on this device.
#[test]
fn every_fragment_kernel_links() {
    let gpu = crate::common::gpu();
    let kernels = symraster::draw::kernels::Kernels::new(gpu.context()).unwrap();
    kernels.compile_all().unwrap();
}

/// Programs handed to the driver together (compiling side by side where it compiles in its own
/// threads) finish as the same programs compiled one by one, and a shader that does not
/// compile is the same error either way, met where the program is asked for.
#[test]
fn programs_started_together_finish_as_compiled_alone() {
    use symraster::gl::{ComputeProgram, LazyProgram, Uniform};
    let gpu = Gpu::new().unwrap();
    if !gpu.info().has_compute() {
        return;
    }
    let ctx = gpu.context();
    let source = |s: &str| format!("#version 430\n{s}");
    let good = source(COUNTER.source);
    let bad = source(
        &COUNTER
            .source
            .replace("out_[0] = count;", "out_[0] = count +;"),
    );
    let started: Vec<_> = (0..3)
        .map(|_| ComputeProgram::start(ctx, &COUNTER, "", &good).unwrap())
        .collect();
    let out = Buffer::new(ctx, BufferTarget::Storage, BufferUsage::Dynamic, &[0u32]).unwrap();
    out.bind_base(0);
    for (i, p) in started.into_iter().enumerate() {
        let p = p.finish().unwrap();
        p.set("count", Uniform::U32(10 + i as u32)).unwrap();
        p.dispatch([1, 1, 1]).unwrap();
        assert_eq!(out.download().unwrap(), [10 + i as u32]);
    }
    let alone = counter(
        &gpu,
        &COUNTER
            .source
            .replace("out_[0] = count;", "out_[0] = count +;"),
    )
    .err()
    .expect("a syntax error compiles");
    let together = ComputeProgram::start(ctx, &COUNTER, "", &bad)
        .unwrap()
        .finish()
        .err()
        .expect("a syntax error compiles when started");
    for e in [&alone, &together] {
        assert!(
            matches!(
                e,
                symraster::Error::Device(symraster::error::DeviceError::ShaderCompile { .. })
            ),
            "{e}"
        );
        assert!(e.to_string().contains("test/counter"), "{e}");
    }
    assert_eq!(alone.to_string(), together.to_string());
    // A lazy program started (where the driver compiles in parallel) or not: the same
    // program on first use, and the same error each time for a bad one.
    let lazy = LazyProgram::new(ctx, &COUNTER, "", good);
    lazy.start();
    assert!(!lazy.is_compiled());
    let p = lazy.get().unwrap();
    p.set("count", Uniform::U32(42)).unwrap();
    p.dispatch([1, 1, 1]).unwrap();
    assert_eq!(out.download().unwrap(), [42]);
    let broken = LazyProgram::new(ctx, &COUNTER, "", bad);
    broken.start();
    for _ in 0..2 {
        let e = broken.get().err().expect("a syntax error compiles lazily");
        assert_eq!(e.to_string(), alone.to_string());
    }
    ctx.check(|| "the started programs".into()).unwrap();
}
