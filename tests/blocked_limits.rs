//! The blocked method refuses textures beyond the device's limit before allocating, naming
//! the largest m. One test in its own binary: it lowers GL_MAX_TEXTURE_SIZE through the
//! environment, which no other test may see.

use symraster::{Error, Format, Gpu, InputError, Matrix, Method, Options, problems};

#[test]
fn blocked_sizes_beyond_the_texture_limit_are_refused() {
    // SAFETY: the only test of this binary, set before any thread reads the environment.
    unsafe { std::env::set_var(symraster::gl::MAX_TEXTURE_SIZE_ENV, "16") };
    let gpu = Gpu::new().expect("an OpenGL device (llvmpipe is enough)");
    let blocked = Options::new(Format::Full).method(Method::Blocked);
    // 16 texels of 2x2 blocks: m up to 32 (two block columns of 16).
    let c = problems::well_conditioned_spd(&mut problems::rng(2), 32);
    assert!(gpu.cholesky(&c, blocked).is_ok());
    let c = Matrix::<f32>::filled(33, 33, 1.0);
    let e = gpu.cholesky(&c, blocked).unwrap_err();
    assert!(
        matches!(e, Error::Input(InputError::Unsupported(_)))
            && e.to_string().contains("largest m is 32"),
        "{e}"
    );
    // Packed: W x (T+1) texels, so T + 1 ≤ 16 leaves T = 8 (one block column), m ≤ 16.
    let packed = Options::new(Format::Packed).method(Method::Blocked);
    let c = problems::well_conditioned_spd(&mut problems::rng(2), 16);
    assert!(gpu.cholesky(&c, packed).is_ok());
    let c = problems::well_conditioned_spd(&mut problems::rng(2), 17);
    let e = gpu.cholesky(&c, packed).unwrap_err();
    assert!(
        matches!(e, Error::Input(InputError::Unsupported(_)))
            && e.to_string().contains("largest m is 16"),
        "{e}"
    );
    // A's columns: 32 fit (16 texels of two), 33 need 64 after padding.
    let a = Matrix::<f32>::filled(4, 33, 1.0);
    let e = gpu.assemble(&a, &[1.0; 33], blocked).unwrap_err();
    assert!(
        matches!(e, Error::Input(InputError::Unsupported(_)))
            && e.to_string().contains("at most 32 columns"),
        "{e}"
    );
    let a = Matrix::<f32>::filled(4, 32, 1.0);
    assert!(gpu.assemble(&a, &[1.0; 32], blocked).is_ok());
    // C as blocks: m = 32 fits where the faithful full format stops at 16.
    let a = Matrix::<f32>::filled(32, 4, 1.0);
    assert!(gpu.assemble(&a, &[1.0; 4], blocked).is_ok());
    let faithful = Options::new(Format::Full).method(Method::Faithful);
    assert!(gpu.assemble(&a, &[1.0; 4], faithful).is_err());
}
