//! The blocked method refuses textures beyond the device's limit before allocating, naming
//! the largest m, with GL_MAX_TEXTURE_SIZE lowered through the tuning.

use symraster::{
    BlockColumn, Blocking, Error, Format, Gpu, InputError, Matrix, Method, Options, Tuning,
    problems,
};

fn refused(e: &Error, says: &str) -> bool {
    matches!(e, Error::Input(InputError::Unsupported(_))) && e.to_string().contains(says)
}

/// For each block column (the padding and the packed fold follow it: 16 columns are the
/// software renderers' default, 32 the GPUs', so both are named here) and blocking, the
/// largest m in each format factors and the next one is refused naming it; A one column
/// wider than its texture is assembled in column blocks.
#[test]
fn blocked_sizes_beyond_the_texture_limit_are_refused() {
    let tuning = Tuning {
        max_texture_size: Some(32),
        ..Tuning::default()
    };
    let gpu = Gpu::builder()
        .tuning(tuning)
        .build()
        .expect("an OpenGL device (llvmpipe is enough)");
    // (blocking, largest m full, largest m packed, most columns of A), with 32 texels a side.
    // Block columns of 16:
    // - 2 x 2: full T = m/2 ≤ 32; packed T + 4 ≤ 32 leaves T = 24 (whole block columns of 8
    //   texels), m ≤ 48; A's texels hold two columns, 64 after padding to 32.
    // - 4 x 4: full T = m/4 ≤ 32; packed T = 28 (block columns of 4 texels), m ≤ 112; A's
    //   texel rows hold one column, 32.
    // Block columns of 32 (A's texture does not depend on them):
    // - 2 x 2: full T = 32, m ≤ 64; packed T + 4 ≤ 32 leaves T = 16 (whole block columns of
    //   16 texels), m ≤ 32.
    // - 4 x 4: full T = 32, m ≤ 128; packed T = 24 (block columns of 8 texels), m ≤ 96.
    for (column, sizes) in [
        (
            BlockColumn::Sixteen,
            [(Blocking::Two, 64, 48, 64), (Blocking::Four, 128, 112, 32)],
        ),
        (
            BlockColumn::ThirtyTwo,
            [(Blocking::Two, 64, 32, 64), (Blocking::Four, 128, 96, 32)],
        ),
    ] {
        for (blocking, full_m, packed_m, columns) in sizes {
            for (format, largest) in [(Format::Full, full_m), (Format::Packed, packed_m)] {
                let options = Options::new(format)
                    .method(Method::Blocked)
                    .blocking(blocking)
                    .block_column(column);
                let what = format!("{blocking} {format}, block columns of {column}");
                let c = problems::well_conditioned_spd(&mut problems::rng(2), largest);
                let factored = gpu.cholesky(&c, options);
                assert!(factored.is_ok(), "{what}: {:?}", factored.err());
                let c = Matrix::<f32>::filled(largest + 1, largest + 1, 1.0);
                let e = gpu.cholesky(&c, options).unwrap_err();
                assert!(
                    refused(&e, &format!("largest m is {largest}")),
                    "{what}: {e}"
                );
            }
            let blocked = Options::new(Format::Full)
                .method(Method::Blocked)
                .blocking(blocking)
                .block_column(column);
            // One more column than A's texture holds: assembled in two column blocks.
            let a = Matrix::<f32>::filled(4, columns + 1, 1.0);
            let c = gpu.assemble(&a, &vec![1.0; columns + 1], blocked).unwrap();
            assert_eq!(c[(3, 0)], (columns + 1) as f32);
            let a = Matrix::<f32>::filled(4, columns, 1.0);
            assert!(gpu.assemble(&a, &vec![1.0; columns], blocked).is_ok());
            // C as blocks: m = 64 fits where the faithful full format stops at 32.
            let a = Matrix::<f32>::filled(64, 4, 1.0);
            assert!(gpu.assemble(&a, &[1.0; 4], blocked).is_ok());
        }
    }
    let a = Matrix::<f32>::filled(64, 4, 1.0);
    let faithful = Options::new(Format::Full).method(Method::Faithful);
    assert!(gpu.assemble(&a, &[1.0; 4], faithful).is_err());
}
