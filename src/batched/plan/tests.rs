use super::*;

fn limits() -> ComputeLimits {
    ComputeLimits {
        max_storage_block_bytes: 1 << 27,
        max_shared_bytes: 32 << 10,
        max_invocations: 1024,
        max_groups_x: 65535,
        device_memory_bytes: None,
    }
}

/// Fewer invocations than rows or staged columns, or more than the device runs, are
/// refused; an accepted count is kept and the storage chosen for it.
#[test]
fn with_threads_checks_the_count() {
    let l = limits();
    let plan = Plan::fused(Job::LeastSquares, 64, 128, 1, &l).unwrap();
    for bad in [8, 15, 63, 72, 2048] {
        assert!(plan.with_threads(bad, &l).is_err(), "{bad}");
    }
    let p = plan.with_threads(256, &l).unwrap();
    assert_eq!(p.threads, 256);
    assert_eq!(p.storage, storage_for(Job::LeastSquares, 64, p.shape(), &l));
    let small = Plan::fused(Job::Cholesky, 8, 0, 0, &l).unwrap();
    assert!(small.with_threads(8, &l).is_err());
    assert_eq!(small.with_threads(16, &l).unwrap().threads, 16);
    // The group (invocations per problem times problems) within the device's limit.
    let grouped = small.with_problems_per_group(4, &l).unwrap();
    assert!(grouped.with_threads(512, &l).is_err());
    assert_eq!(grouped.with_threads(256, &l).unwrap().threads, 256);
}

/// Every order's default shape is one the plans accept: invocations at least n and a
/// multiple of the staged columns, the group within 1024 invocations.
#[test]
fn default_shapes_cover_every_order() {
    for n in 1..=MAX_ORDER {
        let (t, p) = (threads(n), problems_per_group(n));
        assert!(t >= n && t.is_multiple_of(STAGED_COLUMNS), "n {n}: {t}");
        assert!(
            (1..=MAX_PROBLEMS_PER_GROUP).contains(&p) && t * p <= 1024,
            "n {n}"
        );
    }
    assert_eq!((threads(16), threads(32), threads(128)), (32, 128, 512));
    assert_eq!((problems_per_group(8), problems_per_group(32)), (2, 1));
}

/// Problems per group: 1 to MAX_PROBLEMS_PER_GROUP, the group within the device's
/// invocations, all its problems in shared memory (never the global work buffer); the
/// defaults fall back to one problem where several do not fit.
#[test]
fn with_problems_per_group_checks_the_count() {
    let l = limits();
    // A resident A (about 12 KiB per problem) fits two problems in 32 KiB, not three.
    let resident = Plan::fused(Job::LeastSquares, 32, 64, 1, &l)
        .unwrap()
        .with_residual(Residual::Resident, &l)
        .unwrap();
    let resident = resident.with_threads(64, &l).unwrap();
    assert!(resident.with_problems_per_group(2, &l).is_ok());
    assert!(resident.with_problems_per_group(3, &l).is_err());
    let plan = Plan::fused(Job::LeastSquares, 32, 64, 1, &l)
        .unwrap()
        .with_residual(Residual::Restaged, &l)
        .unwrap();
    assert_eq!(plan.problems_per_group, problems_per_group(32));
    assert_eq!(plan.threads * plan.problems_per_group, 128);
    for bad in [0, MAX_PROBLEMS_PER_GROUP + 1] {
        assert!(plan.with_problems_per_group(bad, &l).is_err(), "{bad}");
    }
    // 32 x 64 invocations pass the device's 1024.
    let wide = plan.with_problems_per_group(1, &l).unwrap();
    let wide = wide.with_threads(64, &l).unwrap();
    assert!(wide.with_problems_per_group(32, &l).is_err());
    let p = wide.with_problems_per_group(4, &l).unwrap();
    assert_eq!((p.problems_per_group, p.storage), (4, WorkStorage::Shared));
    assert!(p.defines().contains("#define P 4\n#define GROUP 256\n"));
    // n = 64: four problems (about 14 KiB each) pass 32 KiB of shared memory.
    let big = Plan::fused(Job::LeastSquares, 64, 128, 1, &l).unwrap();
    assert!(big.with_problems_per_group(4, &l).is_err());
    assert_eq!(
        big.with_problems_per_group(1, &l)
            .unwrap()
            .problems_per_group,
        1
    );
    // n = 129 takes the global work buffer: one problem per group only.
    let global = Plan::fused(Job::Cholesky, 129, 0, 0, &l).unwrap();
    assert_eq!(global.storage, WorkStorage::Global);
    assert!(global.with_problems_per_group(2, &l).is_err());
    // A default that does not fit falls back to one problem per group.
    let tight = ComputeLimits {
        max_shared_bytes: 6 << 10,
        ..l
    };
    let fallback = Plan::fused(Job::LeastSquares, 32, 64, 1, &tight).unwrap();
    assert_eq!(fallback.problems_per_group, 1);
}

/// Rows per solve block: 1 to MAX_SOLVE_BLOCK, named in the defines.
#[test]
fn with_solve_block_checks_the_rows() {
    let plan = Plan::fused(Job::SpdSolve, 40, 0, 2, &limits()).unwrap();
    assert_eq!(plan.solve_block, solve_block(40));
    for bad in [0, MAX_SOLVE_BLOCK + 1] {
        assert!(plan.with_solve_block(bad).is_err(), "{bad}");
    }
    let p = plan.with_solve_block(16).unwrap();
    assert!(p.defines().contains("#define SB 16\n"));
}

/// The assembly's rows per invocation: pairs past n = 64 by default, named in the defines
/// of the jobs that assemble.
#[test]
fn assembly_rows_are_named_in_the_defines() {
    let l = limits();
    let small = Plan::fused(Job::LeastSquares, 64, 128, 1, &l).unwrap();
    assert_eq!(small.assembly_rows, AssemblyRows::Single);
    assert!(!small.defines().contains("PAIR_ROWS"));
    let paired = small.with_assembly_rows(AssemblyRows::Pair);
    assert!(paired.defines().contains("#define PAIR_ROWS\n"));
    let large = Plan::fused(Job::Assemble, 65, 130, 0, &l).unwrap();
    assert_eq!(large.assembly_rows, AssemblyRows::Pair);
    assert!(large.defines().contains("#define PAIR_ROWS\n"));
    let factor = Plan::fused(Job::Cholesky, 65, 0, 0, &l).unwrap();
    assert!(!factor.defines().contains("PAIR_ROWS"));
}

/// The register tiles' split: the staged columns shared by up to MAX_TILE_SPLIT
/// invocations where the tiles are fewer than the invocations, else several tiles each;
/// the defines name them for the jobs that assemble, and too many tiles per invocation
/// are refused.
#[test]
fn tilings_are_dealt_out_and_named_in_the_defines() {
    let l = limits();
    assert_eq!(tile_split(32, 4, 128), (3, 1));
    assert_eq!(tile_split(32, 4, 144), (4, 1));
    assert_eq!(tile_split(32, 2, 128), (1, 2));
    assert_eq!(tile_split(128, 4, 512), (1, 2));
    assert_eq!(tile_split(128, 4, 528), (1, 1));
    assert_eq!(tile_split(1, 4, 16), (MAX_TILE_SPLIT, 1));
    let plan = Plan::fused(Job::LeastSquares, 32, 64, 1, &l).unwrap();
    assert_eq!(plan.assembly_tiling, assembly_tiling(32));
    let tiled = plan.with_assembly_tiling(AssemblyTiling::Tiles4).unwrap();
    let defines = tiled.defines();
    assert!(
        defines.contains(
            "#define ASSEMBLY_TILES\n#define TILE 4\n#define TSPLIT 3\n#define TPL 1\n"
        )
    );
    assert!(
        !plan
            .with_assembly_tiling(AssemblyTiling::Rows)
            .unwrap()
            .defines()
            .contains("TILE")
    );
    // The factor assembles nothing: no tiles in its defines.
    let factor = Plan::fused(Job::Cholesky, 32, 0, 0, &l).unwrap();
    let factor = factor.with_assembly_tiling(AssemblyTiling::Tiles4).unwrap();
    assert!(!factor.defines().contains("TILE"));
    // n = 256 on 1,024 invocations: 2 x 2 tiles 9 each (36 sums), 4 x 4 tiles 3 each (48
    // sums): both refused; n = 129: 2 x 2 tiles 3 each, 4 x 4 one each.
    let big = Plan::fused(Job::Assemble, 256, 16, 0, &l).unwrap();
    assert_eq!(
        big.with_assembly_tiling(AssemblyTiling::Tiles2)
            .unwrap_err()
            .to_string(),
        "invalid option: batched assembly at order n = 256 cannot assemble by Tiles2 with \
         1024 invocations per problem (at most 32 tile sums per invocation, within the loop \
         budget)"
    );
    assert!(big.with_assembly_tiling(AssemblyTiling::Tiles4).is_err());
    let edge = Plan::fused(Job::Assemble, 129, 16, 0, &l).unwrap();
    assert!(edge.with_assembly_tiling(AssemblyTiling::Tiles2).is_ok());
    assert!(edge.with_assembly_tiling(AssemblyTiling::Tiles4).is_ok());
    // Fewer invocations that would hold too many sums are refused: n = 64 in 4 x 4 tiles
    // (136) on 64 invocations, 3 each.
    let small = Plan::fused(Job::LeastSquares, 64, 128, 1, &l)
        .unwrap()
        .with_assembly_tiling(AssemblyTiling::Tiles4)
        .unwrap();
    assert!(small.with_threads(64, &l).is_err());
    assert_eq!(small.with_threads(80, &l).unwrap().threads, 80);
}

/// Staged columns: one of the choices, dividing the invocations, the problems in the
/// storage they had and everything left in shared memory within the device's; named KC.
#[test]
fn with_staged_columns_checks_the_fit() {
    let l = limits();
    let plan = Plan::fused(Job::LeastSquares, 32, 64, 1, &l).unwrap();
    assert_eq!(plan.staged_columns, STAGED_COLUMNS);
    for bad in [0, 8, 48, 128] {
        assert!(plan.with_staged_columns(bad, &l).is_err(), "{bad}");
    }
    let wide = plan.with_staged_columns(64, &l).unwrap();
    assert!(wide.defines().contains("#define KC 64\n"));
    assert_eq!(wide.storage, WorkStorage::Shared);
    // 32 invocations do not divide into 64 columns (n = 8).
    let eight = Plan::fused(Job::LeastSquares, 8, 16, 1, &l).unwrap();
    assert_eq!(
        eight.with_staged_columns(64, &l).unwrap_err().to_string(),
        "invalid option: batched least squares at order n = 8 cannot stage 64 observations \
         per step with 32 invocations per problem and 2 per work group (one of [16, 32, \
         64], dividing the invocations, the problems still in Shared storage, within the \
         loop budget)"
    );
    assert_eq!(
        eight.with_staged_columns(32, &l).unwrap().staged_columns,
        32
    );
    // Threads then must stay a multiple of the columns.
    assert!(wide.with_threads(96, &l).is_err());
    // n = 129 in the work buffer: 64 staged columns of 129 rows are past 32 KiB.
    let global = Plan::fused(Job::LeastSquares, 129, 258, 1, &l).unwrap();
    assert_eq!(global.storage, WorkStorage::Global);
    assert!(global.with_staged_columns(64, &l).is_err());
    assert!(global.with_staged_columns(32, &l).is_ok());
    // n = 64 fits with 64 columns (about 27 KiB); n = 80's triangle would be pushed out
    // to the work buffer: refused.
    let fits = Plan::fused(Job::LeastSquares, 64, 128, 1, &l).unwrap();
    let fits = fits.with_staged_columns(64, &l).unwrap();
    assert_eq!(fits.storage, WorkStorage::Shared);
    let mid = Plan::fused(Job::LeastSquares, 80, 160, 1, &l).unwrap();
    assert_eq!(mid.storage, WorkStorage::Shared);
    assert!(mid.with_staged_columns(64, &l).is_err());
    assert!(mid.with_staged_columns(32, &l).is_ok());
}

/// Both staged loads are accepted where the problems fit, named in the defines, and
/// refused where the larger layout would no longer fit the group's shared memory.
#[test]
fn with_staged_loads_checks_the_fit() {
    let l = limits();
    let plan = Plan::fused(Job::LeastSquares, 16, 32, 1, &l).unwrap();
    assert_eq!(plan.staged_loads, DEFAULT_STAGED_LOADS);
    let v = plan.with_staged_loads(StagedLoads::Vector, &l).unwrap();
    assert!(v.defines().contains("#define VEC4_STAGE"));
    let s = plan.with_staged_loads(StagedLoads::Scalar, &l).unwrap();
    assert!(!s.defines().contains("VEC4_STAGE"));
    // Problems per group chosen to fill shared memory with vector loads exactly; the
    // scalar layout's padding then overflows it.
    let shape = GroupShape {
        threads: 32,
        problems: 2,
        loads: StagedLoads::Vector,
        columns: STAGED_COLUMNS,
        resident: None,
        // The default solves' vector W (L⁻¹ itself then in the work buffer).
        inverse: triangular_solves(16) == TriangularSolves::Inverse,
        separate: false,
        normal: false,
    };
    let bytes = 2 * shared_bytes(Job::LeastSquares, 16, shape, WorkStorage::Shared);
    let exact = ComputeLimits {
        max_shared_bytes: bytes as u64,
        ..l
    };
    let fits = Plan::fused(Job::LeastSquares, 16, 32, 1, &exact)
        .unwrap()
        .with_staged_loads(StagedLoads::Vector, &exact)
        .unwrap()
        .with_problems_per_group(2, &exact)
        .unwrap();
    assert!(fits.with_staged_loads(StagedLoads::Scalar, &exact).is_err());
}

/// The residual's sources: resident by default where the staged A is small, direct past
/// it; the resident columns (KR) and the direct lanes (RL) named in the defines; a
/// resident A that passes shared memory refused; reshaping keeps the source.
#[test]
fn residuals_are_chosen_and_named_in_the_defines() {
    let l = limits();
    for n in [1, 8] {
        assert_eq!(residual(n, 2 * n), Residual::Resident, "n {n}");
    }
    for n in [16, 32, 33, 64, 128, 256] {
        assert_eq!(residual(n, 2 * n), Residual::Direct, "n {n}");
    }
    assert_eq!(resident_columns(67, 16), 80);
    assert_eq!(resident_columns(0, 16), 16);
    assert_eq!(residual_lanes(128, 512), 4);
    assert_eq!(residual_lanes(33, 128), 3);
    assert_eq!(residual_lanes(1, 32), 8);
    // 67 observations take 80 resident columns: 10 KiB of A, past the default's 8 KiB.
    assert_eq!(residual(32, 67), Residual::Direct);
    let plan = Plan::fused(Job::LeastSquares, 32, 67, 1, &l).unwrap();
    assert_eq!(plan.residual, Residual::Direct);
    let plan = plan.with_residual(Residual::Resident, &l).unwrap();
    assert_eq!(plan.residual, Residual::Resident);
    assert!(plan.defines().contains("#define RESIDENT\n#define KR 80\n"));
    let wide = plan.with_staged_columns(32, &l).unwrap();
    assert_eq!(wide.residual, Residual::Resident);
    assert!(wide.defines().contains("#define KR 96\n"));
    // Resident takes more shared memory than restaged, and the threads keep the source.
    let shape = plan.shape();
    let restaged = GroupShape {
        resident: None,
        ..shape
    };
    assert!(
        shared_bytes(Job::LeastSquares, 32, shape, WorkStorage::Shared)
            > shared_bytes(Job::LeastSquares, 32, restaged, WorkStorage::Shared)
    );
    assert_eq!(
        plan.with_threads(64, &l).unwrap().residual,
        Residual::Resident
    );
    // Direct survives reshaping too, and is named with its lanes.
    let direct = plan.with_residual(Residual::Direct, &l).unwrap();
    assert!(
        direct
            .defines()
            .contains("#define DIRECT_RESIDUAL\n#define RL 4\n")
    );
    let direct = direct.with_threads(64, &l).unwrap();
    assert_eq!(direct.residual, Residual::Direct);
    assert!(direct.defines().contains("#define RL 2\n"));
    // The rows' sums read runs of 4 observations as vec4 only where every run is
    // aligned (67 observations: scalars).
    assert!(!direct.defines().contains("RUN_VEC4"));
    let aligned = Plan::fused(Job::LeastSquares, 32, 64, 1, &l)
        .unwrap()
        .with_residual(Residual::Direct, &l)
        .unwrap();
    assert!(aligned.defines().contains("#define RUN_VEC4\n"));
    // n = 64 with 128 observations: A alone is 32 KiB, past the device's shared memory.
    let big = Plan::fused(Job::LeastSquares, 64, 128, 1, &l).unwrap();
    assert_eq!(big.residual, Residual::Direct);
    let e = big.with_residual(Residual::Resident, &l).unwrap_err();
    assert!(e.to_string().contains("cannot keep A resident"), "{e}");
    assert_eq!(
        big.with_residual(Residual::Restaged, &l).unwrap().residual,
        Residual::Restaged
    );
}

/// The solves substitute by default; L⁻¹ where asked for (shared memory where it fits
/// beside everything else, else the work buffer after the factor's triangle), named in
/// the defines; the jobs without solves refuse it.
#[test]
fn inverse_solves_are_chosen_and_placed() {
    let l = limits();
    let small = Plan::fused(Job::LeastSquares, 8, 16, 1, &l).unwrap();
    assert_eq!(small.solves, TriangularSolves::Substitution);
    assert!(!small.defines().contains("INVERSE"));
    assert_eq!(
        Plan::fused(Job::LeastSquares, 32, 64, 1, &l)
            .unwrap()
            .solves,
        TriangularSolves::Substitution
    );
    let inverse = |p: Plan| p.with_solves(TriangularSolves::Inverse, &l).unwrap();
    let mid = inverse(Plan::fused(Job::LeastSquares, 32, 64, 1, &l).unwrap());
    assert_eq!(
        (mid.solves, mid.inverse_storage),
        (TriangularSolves::Inverse, WorkStorage::Shared)
    );
    assert!(mid.defines().contains("#define INVERSE_SOLVE\n"));
    assert!(!mid.defines().contains("INVERSE_GLOBAL"));
    assert_eq!(mid.work_floats(), 0);
    // n = 128: the factor's triangle already in the work buffer on 32 KiB, L⁻¹ after it.
    let big = inverse(Plan::fused(Job::SpdSolve, 128, 0, 1, &l).unwrap());
    assert_eq!(big.storage, WorkStorage::Global);
    assert_eq!(big.inverse_storage, WorkStorage::Global);
    assert_eq!(big.work_floats(), 2 * packed(128));
    assert!(big.defines().contains("#define INVERSE_GLOBAL\n"));
    // Substitution back: no L⁻¹, the factor's triangle alone in the work buffer.
    let back = big.with_solves(TriangularSolves::Substitution, &l).unwrap();
    assert_eq!(back.work_floats(), packed(128));
    assert!(!back.defines().contains("INVERSE"));
    // L⁻¹ costs shared memory: n = 64 with four problems per group puts it in the buffer.
    let four = inverse(Plan::fused(Job::SpdSolve, 64, 0, 1, &l).unwrap())
        .with_problems_per_group(2, &l)
        .unwrap();
    assert_eq!(four.solves, TriangularSolves::Inverse);
    assert_eq!(four.inverse_storage, WorkStorage::Global);
    let factor = Plan::fused(Job::Cholesky, 32, 0, 0, &l).unwrap();
    assert!(factor.with_solves(TriangularSolves::Inverse, &l).is_err());
    assert!(!factor.defines().contains("INVERSE"));
}

/// The least squares take the separate assembly by default from n = 9 to 128 (the
/// normal equations' residual where [`separate_default`] says, one problem per group of
/// its invocations), the fused one at n = 8 and past 128 and for the other jobs; where
/// the shape does not fit (llvmpipe's loop budget, say) the fused plan stays.
#[test]
fn the_separate_assembly_is_the_default_between_orders_9_and_128() {
    let l = limits();
    for (n, tile, staged, normal, threads) in [
        (12, 2, false, true, 32),
        (16, 4, false, false, 32),
        (24, 4, false, false, 32),
        (31, 4, false, false, 32),
        (32, 4, true, false, 32),
        (33, 4, true, false, 128),
        (64, 4, true, false, 128),
        (65, 4, true, false, 512),
        (128, 4, true, false, 512),
    ] {
        let plan = Plan::new(Job::LeastSquares, n, 2 * n, 1, &l).unwrap();
        let shape = plan.gram_shape().unwrap_or_else(|| panic!("n {n}"));
        assert_eq!(
            (shape.tile, shape.lanes, shape.staged),
            (tile, 1, staged),
            "n {n}"
        );
        assert_eq!(plan.residual == Residual::Normal, normal, "n {n}");
        assert_eq!(plan.gram_f64(), normal, "n {n}");
        assert_eq!(
            (plan.threads, plan.problems_per_group),
            (threads, 1),
            "n {n}"
        );
        assert!(plan.defines().contains("#define GRAM\n"));
        // The fused plan is still there to be had.
        let fused = Plan::fused(Job::LeastSquares, n, 2 * n, 1, &l).unwrap();
        assert_eq!(fused.assembly_pass, AssemblyPass::Fused);
        assert!(!fused.defines().contains("GRAM"));
    }
    for n in [1, 8, 129, 256] {
        let plan = Plan::new(Job::LeastSquares, n, 2 * n, 1, &l).unwrap();
        assert_eq!(
            plan,
            Plan::fused(Job::LeastSquares, n, 2 * n, 1, &l).unwrap()
        );
    }
    for job in [Job::Assemble, Job::Cholesky, Job::SpdSolve] {
        let k = if job == Job::Assemble { 64 } else { 0 };
        let plan = Plan::new(job, 32, k, 1, &l).unwrap();
        assert_eq!(plan.assembly_pass, AssemblyPass::Fused, "{job:?}");
    }
    // Tiles of 8 never form f64 sums: Normal refused with them, and the residual goes
    // back to A when a Normal plan takes them.
    let plan = Plan::new(Job::LeastSquares, 32, 64, 1, &l).unwrap();
    let eight = GramShape::new(8, 1).unwrap();
    let wide = plan
        .with_assembly_pass(AssemblyPass::Separate(eight), &l)
        .unwrap();
    assert_eq!(wide.residual, Residual::Direct);
    assert!(wide.with_residual(Residual::Normal, &l).is_err());
    // The staged shape holds a problem's tiles in one group: refused past it (n = 200:
    // 1,326 tiles of 4), not cut.
    let big = Plan::new(Job::LeastSquares, 200, 400, 1, &l).unwrap();
    let e = big
        .with_assembly_pass(AssemblyPass::Separate(GramShape::STAGED), &l)
        .unwrap_err();
    assert!(e.to_string().contains("launch of its own"), "{e}");
    // The fused assembly takes the residual back from the normal equations.
    let fused = plan.with_assembly_pass(AssemblyPass::Fused, &l).unwrap();
    assert_eq!(fused.residual, Residual::Direct);
    assert!(fused.with_residual(Residual::Normal, &l).is_err());
}
