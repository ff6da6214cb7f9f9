//! Full storage factored with RFP's split (a tall block column of m/2 columns, one rank-m/2
//! product, the trailing half's factorization), which large orders take: the split order
//! lowered through the tuning so that small matrices take it, in one buffer and over several; L against the f64 reference and against the
//! unsplit RFP factor, the first failing column in either half equal to the reference's.

use crate::common;

use crate::common::widen;
use symraster::internal::GpuInternals;
use symraster::tiled::{
    DeviceProduct, KernelConfig, Storage, TiledKernels, TiledMatrix, assembly, cholesky,
};
use symraster::{Error, NumericalError, Tuning, problems, reference, relative_error};

const MAX: u64 = i32::MAX as u64;

#[test]
fn full_storage_split_as_rfp_matches_the_reference() {
    let gpu = common::gpu();
    if !gpu.info().has_compute() {
        eprintln!("skipped: no compute shaders on {}", gpu.info().renderer);
        return;
    }
    let split_at = |order| Tuning {
        split_order: Some(order),
        ..Tuning::default()
    };
    let k = TiledKernels::tuned(gpu.context(), KernelConfig::GPU, &split_at(65)).unwrap();
    let unsplit_k =
        TiledKernels::tuned(gpu.context(), KernelConfig::GPU, &split_at(1_000_000)).unwrap();
    let mut differs = false;
    for (m, part_bytes) in [
        (65, MAX),
        (97, MAX),
        (130, MAX),
        (257, MAX),
        (257, 64 << 10),
    ] {
        let mut rng = problems::rng(m as u64);
        let a = problems::uniform_matrix(&mut rng, m, m + 7);
        let d: Vec<f32> = (0..m + 7).map(|j| 0.5 + (j % 3) as f32).collect();
        let want = reference::assemble(&a.to_f64(), &widen(&d));
        let l_ref = reference::cholesky(&want).unwrap();
        let p = DeviceProduct::upload(&k, &a, &d, MAX).unwrap();
        let mut factors = Vec::new();
        for storage in [Storage::Full, Storage::Rfp] {
            let mut c = TiledMatrix::uninitialized(gpu.context(), m, storage, part_bytes).unwrap();
            c.fill(f32::NAN).unwrap();
            assembly::assemble(&k, &p, &mut c).unwrap();
            cholesky::factor(&k, &mut c).unwrap();
            let l = c.download_lower().unwrap().to_f64();
            let e = relative_error(&l, &l_ref);
            assert!(
                e < 1e-3,
                "{storage:?} m {m} parts {}: error {e}",
                c.part_count()
            );
            factors.push(l);
        }
        // The split is taken: its launches differ from the right-looking factor's (below one
        // outer block column of 512 the counts can coincide; over several buffers they do not).
        let launches = |k: &TiledKernels| {
            let mut c =
                TiledMatrix::uninitialized(gpu.context(), m, Storage::Full, part_bytes).unwrap();
            assembly::assemble(k, &p, &mut c).unwrap();
            let before = k.launches();
            cholesky::factor(k, &mut c).unwrap();
            k.launches() - before
        };
        let (unsplit, split) = (launches(&unsplit_k), launches(&k));
        differs |= unsplit != split;
        let e = relative_error(&factors[0], &factors[1]);
        assert!(e < 1e-5, "m {m}: split full against RFP {e}");
        // A failing pivot in the first half (the tall block column) and in the second.
        for bad in [m / 4, m - 2] {
            let mut c = want.lower_triangle().map(|v| v as f32);
            c[(bad, bad)] = -1.0;
            let expected = match reference::cholesky(&c.to_f64()) {
                Err(Error::Numerical(NumericalError::NotPositiveDefinite { column, .. })) => column,
                other => panic!("the reference factored a matrix with C(j,j) < 0: {other:?}"),
            };
            let mut t =
                TiledMatrix::from_lower(gpu.context(), &c, Storage::Full, part_bytes).unwrap();
            match cholesky::factor(&k, &mut t) {
                Err(Error::Numerical(NumericalError::NotPositiveDefinite { column, .. })) => {
                    assert_eq!(column, expected, "m {m}: failing column")
                }
                other => panic!("m {m}, C({bad},{bad}) < 0: {other:?}"),
            }
        }
    }
    assert!(
        differs,
        "the split order changed no factorization's launches"
    );
}
