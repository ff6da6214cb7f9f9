//! End-to-end tests of the `symraster` binary on small files: each command's output against
//! the CPU reference, and each kind of bad input's exit status, one-line message, and that no
//! file is left behind and an existing output is untouched.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use symraster::{Matrix, io, problems, reference, relative_error};

const EPS32: f64 = 1.0 / (1u64 << 24) as f64;

/// Runs the binary with `args` and extra environment variables.
fn run(args: &[&dyn AsRef<std::ffi::OsStr>], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_symraster"));
    for a in args {
        cmd.arg(a);
    }
    // Keep the device choice and the size limit under the tests' control.
    cmd.env_remove("SYMRASTER_EGL_DEVICE")
        .env_remove("SYMRASTER_MAX_TEXTURE_SIZE");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("the binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Asserts success and gives stdout.
fn succeeds(o: Output) -> String {
    assert!(
        o.status.success(),
        "expected success, got {:?}\nstderr: {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    stdout(&o)
}

/// Asserts failure with exit status 1 and exactly one line on stderr, starting "error: " and
/// holding every one of `needles`; gives that line.
fn fails_with(o: Output, needles: &[&str]) -> String {
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(
        o.status.code(),
        Some(1),
        "expected exit status 1, got {:?}\nstdout: {}\nstderr: {stderr}",
        o.status,
        stdout(&o)
    );
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines.len(),
        1,
        "expected one line on stderr, got {stderr:?}"
    );
    let line = lines[0];
    assert!(line.starts_with("error: "), "{line}");
    for needle in needles {
        assert!(line.contains(needle), "expected {needle:?} in {line:?}");
    }
    line.to_string()
}

/// The names of the files in `dir`, sorted.
fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A temporary folder holding the given inputs.
struct Workspace {
    dir: tempfile::TempDir,
}

impl Workspace {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn matrix<T: io::Element>(&self, name: &str, m: &Matrix<T>) -> PathBuf {
        let p = self.path(name);
        io::write_matrix(&p, m).unwrap();
        p
    }

    fn vector<T: io::Element>(&self, name: &str, v: &[T]) -> PathBuf {
        let p = self.path(name);
        io::write_vector(&p, v).unwrap();
        p
    }

    fn bytes(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    fn files(&self) -> Vec<String> {
        files_in(self.dir.path())
    }
}

/// A .npy file of float64 values in Fortran (column-major) order, as numpy writes for
/// `np.asfortranarray(c)`.
fn fortran_npy(m: &Matrix<f64>) -> Vec<u8> {
    let header = format!(
        "{{'descr': '<f8', 'fortran_order': True, 'shape': ({}, {}), }}",
        m.rows(),
        m.cols()
    );
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    // numpy pads with spaces and a newline so that the data starts 64-byte aligned.
    let len = (10 + header.len() + 1).next_multiple_of(64) - 10;
    let padded = format!("{header:<width$}\n", width = len - 1);
    out.extend((padded.len() as u16).to_le_bytes());
    out.extend(padded.as_bytes());
    for x in m.to_col_major() {
        out.extend(x.to_le_bytes());
    }
    out
}

/// The dtype string in a .npy file's header.
fn npy_descr(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    let header = String::from_utf8_lossy(&bytes[10..bytes.len().min(128)]).into_owned();
    let start = header.find("'descr': '").unwrap() + 10;
    header[start..start + 3].to_string()
}

fn random_problem(seed: u64, m: usize, n: usize) -> (Matrix<f32>, Vec<f32>) {
    let mut rng = problems::rng(seed);
    (
        problems::uniform_matrix(&mut rng, m, n),
        problems::uniform_vector(&mut rng, n),
    )
}

fn widen(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| f64::from(x)).collect()
}

// ---------------------------------------------------------------- correct results

#[test]
fn assemble_matches_the_cpu_reference_in_npy_and_mtx() {
    let w = Workspace::new();
    let (m, n) = (6, 11);
    let (a, d) = random_problem(7, m, n);
    let c_ref = reference::assemble(&a.to_f64(), &widen(&d));

    // float32 .npy in, .npy out.
    let a_npy = w.matrix("a.npy", &a);
    let d_npy = w.vector("d.npy", &d);
    let out = w.path("c.npy");
    let text = succeeds(run(
        &[&"assemble", &"--a", &a_npy, &"--d", &d_npy, &"-o", &out],
        &[],
    ));
    assert!(text.contains("6x6"), "{text}");
    assert_eq!(npy_descr(&out), "<f4", "assemble writes float32");
    let c = io::read_matrix(&out, "C").unwrap();
    assert_eq!(c.shape(), (m, m));
    for i in 0..m {
        for j in i + 1..m {
            assert_eq!(c[(i, j)], 0.0, "upper triangle must be zero at ({i}, {j})");
        }
    }
    let err = relative_error(&c, &c_ref);
    assert!(err <= 4.0 * n as f64 * EPS32, "relative error {err:e}");

    // float64 Matrix Market in (d as a 1 x n row), Matrix Market out.
    let a_mtx = w.matrix("a.mtx", &a.to_f64());
    let d_row = w.matrix(
        "d_row.mtx",
        &Matrix::from_row_major(1, n, widen(&d)).unwrap(),
    );
    let out = w.path("c.mtx");
    succeeds(run(
        &[&"assemble", &"--a", &a_mtx, &"--d", &d_row, &"-o", &out],
        &[],
    ));
    let c2 = io::read_matrix(&out, "C").unwrap();
    assert!(std::fs::read_to_string(&out).unwrap().contains("float32"));
    let err = relative_error(&c2, &c_ref);
    assert!(err <= 4.0 * n as f64 * EPS32, "relative error {err:e}");
}

#[test]
fn factor_matches_the_cpu_reference_and_reads_only_the_lower_triangle() {
    let w = Workspace::new();
    let m = 9;
    let c = problems::well_conditioned_spd(&mut problems::rng(3), m).to_f64();
    // Garbage above the diagonal: a reader that transposed the Fortran data would see it.
    let mut c_in = c.clone();
    for i in 0..m {
        for j in i + 1..m {
            c_in[(i, j)] = f64::NAN;
        }
    }
    let c_path = w.bytes("c.npy", &fortran_npy(&c_in));
    let out = w.path("l.npy");
    succeeds(run(&[&"factor", &"--c", &c_path, &"-o", &out], &[]));
    assert_eq!(npy_descr(&out), "<f4", "factor writes float32");
    let l = io::read_matrix(&out, "L").unwrap();
    let l_ref = reference::cholesky(&c.to_f32().to_f64()).unwrap();
    let err = relative_error(&l, &l_ref);
    assert!(err <= 10.0 * m as f64 * EPS32, "relative error {err:e}");
    let backward = relative_error(&reference::multiply_lower_by_transpose(&l), &c);
    assert!(
        backward <= 10.0 * m as f64 * EPS32,
        "backward error {backward:e}"
    );
    for i in 0..m {
        for j in i + 1..m {
            assert_eq!(l[(i, j)], 0.0);
        }
    }

    // A symmetric Matrix Market input gives the same factor.
    let mut mtx = format!("%%MatrixMarket matrix array real symmetric\n{m} {m}\n");
    for j in 0..m {
        for i in j..m {
            mtx.push_str(&format!("{:e}\n", c[(i, j)]));
        }
    }
    let c_mtx = w.bytes("c.mtx", mtx.as_bytes());
    let out2 = w.path("l2.mtx");
    succeeds(run(&[&"factor", &"--c", &c_mtx, &"-o", &out2], &[]));
    // The .mtx text holds each float32 in its shortest form: equal once rounded to float32.
    assert_eq!(io::read_matrix(&out2, "L").unwrap().to_f32(), l.to_f32());
}

#[test]
fn a_successful_run_replaces_an_existing_output() {
    let w = Workspace::new();
    let c = problems::well_conditioned_spd(&mut problems::rng(4), 4);
    let c_path = w.matrix("c.npy", &c);
    let out = w.bytes("l.npy", b"old contents");
    succeeds(run(&[&"factor", &"--c", &c_path, &"-o", &out], &[]));
    assert_eq!(io::read_matrix(&out, "L").unwrap().shape(), (4, 4));
    assert_eq!(w.files(), vec!["c.npy", "l.npy"]);
}

#[test]
fn info_reports_device_limits_and_cpu() {
    let text = succeeds(run(&[&"info"], &[]));
    for needle in [
        "GL_RENDERER",
        "GL_VERSION",
        "GL_MAX_TEXTURE_SIZE",
        "largest m",
        "CPU threads",
    ] {
        assert!(text.contains(needle), "{needle} missing in {text}");
    }
    let text = succeeds(run(&[&"info"], &[("SYMRASTER_MAX_TEXTURE_SIZE", "64")]));
    assert!(text.contains("64 (lowered"), "{text}");
    assert!(text.contains("64 (full), 63 (packed)"), "{text}");
}

// ------------------------------------------------ solve and --rfp (library calls from other branches)

/// The RFP array of a lower-triangular matrix, TRANSR='N', UPLO='L', transcribed from LAPACK's
/// dtrttf loops (0-based).
fn rfp_lower(l: &Matrix<f64>) -> Vec<f64> {
    let n = l.rows();
    let mut arf = Vec::with_capacity(n * (n + 1) / 2);
    if n.is_multiple_of(2) {
        let k = n / 2;
        for j in 0..k {
            for i in k..=k + j {
                arf.push(l[(k + j, i)]);
            }
            for i in j..n {
                arf.push(l[(i, j)]);
            }
        }
    } else {
        let n2 = n / 2;
        let n1 = n - n2;
        for j in 0..=n2 {
            for i in n1..=n2 + j {
                arf.push(l[(n2 + j, i)]);
            }
            for i in j..n {
                arf.push(l[(i, j)]);
            }
        }
    }
    arf
}

#[test]
fn rfp_reference_places_every_entry_once() {
    for n in 1..8 {
        let l = Matrix::from_fn(n, n, |i, j| if j <= i { (i * n + j) as f64 } else { -1.0 });
        let mut arf = rfp_lower(&l);
        assert_eq!(arf.len(), n * (n + 1) / 2);
        arf.sort_by(f64::total_cmp);
        let mut want: Vec<f64> = (0..n)
            .flat_map(|i| (0..=i).map(move |j| (i * n + j) as f64))
            .collect();
        want.sort_by(f64::total_cmp);
        assert_eq!(arf, want);
    }
}

#[test]
fn factor_rfp_matches_lapack_layout() {
    let w = Workspace::new();
    for m in [6, 7] {
        let c = problems::well_conditioned_spd(&mut problems::rng(m as u64), m);
        let c_path = w.matrix(&format!("c{m}.npy"), &c);
        let full = w.path(&format!("l{m}.npy"));
        let rfp = w.path(&format!("l{m}_rfp.npy"));
        succeeds(run(&[&"factor", &"--c", &c_path, &"-o", &full], &[]));
        succeeds(run(
            &[&"factor", &"--c", &c_path, &"--rfp", &"-o", &rfp],
            &[],
        ));
        let l = io::read_matrix(&full, "L").unwrap();
        let got = io::read_vector(&rfp, "RFP").unwrap();
        assert_eq!(npy_descr(&rfp), "<f4");
        assert_eq!(got, rfp_lower(&l), "m = {m}");
    }
}

#[test]
fn solve_matches_the_cpu_reference() {
    let w = Workspace::new();
    let (m, n) = (5, 10);
    let mut rng = problems::rng(11);
    let a = problems::uniform_matrix(&mut rng, m, n).map(|x| 2.0 * f64::from(x) - 1.0);
    let d = widen(&problems::uniform_vector(&mut rng, n));
    let b = widen(&problems::uniform_vector(&mut rng, n));
    // x from the normal equations in f64: C x = A·diag(d)·b, C = L·Lᵀ.
    let l = reference::cholesky(&reference::assemble(&a, &d)).unwrap();
    let rhs: Vec<f64> = (0..m)
        .map(|i| (0..n).map(|k| a[(i, k)] * d[k] * b[k]).sum())
        .collect();
    let mut y = vec![0.0; m];
    for i in 0..m {
        y[i] = (rhs[i] - (0..i).map(|k| l[(i, k)] * y[k]).sum::<f64>()) / l[(i, i)];
    }
    let mut x_ref = vec![0.0; m];
    for i in (0..m).rev() {
        x_ref[i] = (y[i] - (i + 1..m).map(|k| l[(k, i)] * x_ref[k]).sum::<f64>()) / l[(i, i)];
    }

    let a_path = w.matrix("a.npy", &a);
    let d_path = w.vector("d.npy", &d);
    let b_path = w.vector("b.mtx", &b);
    let out = w.path("x.npy");
    let text = succeeds(run(
        &[
            &"solve", &"--a", &a_path, &"--d", &d_path, &"--b", &b_path, &"--tol", &"1e-10", &"-o",
            &out,
        ],
        &[],
    ));
    assert!(text.contains("iterations: "), "{text}");
    assert!(text.contains("final residual: "), "{text}");
    assert_eq!(npy_descr(&out), "<f8", "solve writes float64");
    let x = io::read_vector(&out, "x").unwrap();
    let err = relative_error(
        &Matrix::from_row_major(m, 1, x).unwrap(),
        &Matrix::from_row_major(m, 1, x_ref).unwrap(),
    );
    assert!(err <= 1e-6, "relative error {err:e}");
}

// ---------------------------------------------------------------- bad input

#[test]
fn not_positive_definite_names_the_first_failing_column() {
    let w = Workspace::new();
    let mut c = Matrix::from_fn(8, 8, |i, j| if i == j { 2.0f32 } else { 0.0 });
    c[(5, 5)] = -1.0;
    c[(7, 7)] = -1.0;
    let c_path = w.matrix("c.npy", &c);
    let out = w.bytes("l.npy", b"keep me");
    fails_with(
        run(&[&"factor", &"--c", &c_path, &"-o", &out], &[]),
        &["not positive definite", "column 5 (0-based)"],
    );
    assert_eq!(std::fs::read(&out).unwrap(), b"keep me");
    assert_eq!(w.files(), vec!["c.npy", "l.npy"]);
}

#[test]
fn non_finite_inputs_name_the_input_and_first_position() {
    let w = Workspace::new();
    let (mut a, mut d) = random_problem(2, 3, 5);
    let a_ok = w.matrix("a_ok.npy", &a);
    let d_ok = w.vector("d_ok.npy", &d);
    a[(1, 2)] = f32::NAN;
    a[(2, 0)] = f32::NAN;
    let a_nan = w.matrix("a_nan.npy", &a);
    d[3] = f32::INFINITY;
    let d_inf = w.vector("d_inf.mtx", &d);
    let out = w.path("c.npy");
    fails_with(
        run(
            &[&"assemble", &"--a", &a_nan, &"--d", &d_ok, &"-o", &out],
            &[],
        ),
        &[
            "input A (",
            "a_nan.npy)",
            "(NaN) at row 1, column 2 (0-based)",
        ],
    );
    fails_with(
        run(
            &[&"assemble", &"--a", &a_ok, &"--d", &d_inf, &"-o", &out],
            &[],
        ),
        &["input d (", "d_inf.mtx)", "(inf) at index 3 (0-based)"],
    );
    // C: NaN in the lower triangle is named; Matrix Market spells it "nan".
    let c_nan = w.bytes(
        "c_nan.mtx",
        b"%%MatrixMarket matrix array real general\n2 2\n1\nnan\n0\n1\n",
    );
    fails_with(
        run(&[&"factor", &"--c", &c_nan, &"-o", &out], &[]),
        &[
            "input C (",
            "c_nan.mtx)",
            "(NaN) at row 1, column 0 (0-based)",
        ],
    );
    // solve: b with -inf.
    let b_inf = w.vector("b.npy", &[1.0, 2.0, f64::NEG_INFINITY, 4.0, 5.0]);
    fails_with(
        run(
            &[
                &"solve", &"--a", &a_ok, &"--d", &d_ok, &"--b", &b_inf, &"-o", &out,
            ],
            &[],
        ),
        &["input b (", "(-inf) at index 2 (0-based)"],
    );
    // Beyond float32's range is not infinite in the file, but would be on the GPU.
    let a_big = w.matrix(
        "a_big.npy",
        &Matrix::from_fn(3, 5, |i, j| if (i, j) == (0, 4) { 1e300 } else { 1.0f64 }),
    );
    fails_with(
        run(
            &[&"assemble", &"--a", &a_big, &"--d", &d_ok, &"-o", &out],
            &[],
        ),
        &["1e300 at row 0, column 4", "beyond single precision"],
    );
    assert!(!out.exists());
}

#[test]
fn shape_mismatches_give_the_shapes() {
    let w = Workspace::new();
    let (a, d) = random_problem(2, 3, 4);
    let a_path = w.matrix("a.npy", &a);
    let d3 = w.vector("d3.npy", &d[..3]);
    let d4 = w.vector("d4.npy", &d);
    let b5 = w.vector("b5.npy", &[1.0f64; 5]);
    let out = w.path("out.npy");
    fails_with(
        run(
            &[&"assemble", &"--a", &a_path, &"--d", &d3, &"-o", &out],
            &[],
        ),
        &[
            "shape mismatch",
            "a.npy) is 3x4",
            "d needs 4 entries",
            "d3.npy) has 3",
        ],
    );
    fails_with(
        run(
            &[
                &"solve", &"--a", &a_path, &"--d", &d4, &"--b", &b5, &"-o", &out,
            ],
            &[],
        ),
        &[
            "a.npy) is 3x4",
            "d and b need 4 entries each",
            "d4.npy) has 4",
            "b5.npy) has 5",
        ],
    );
    fails_with(
        run(&[&"factor", &"--c", &a_path, &"-o", &out], &[]),
        &["C (", "a.npy) must be square, but is 3x4"],
    );
    // A vector where a matrix is needed, and a matrix where a vector is needed.
    fails_with(
        run(&[&"assemble", &"--a", &d4, &"--d", &d4, &"-o", &out], &[]),
        &["d4.npy: A must be a 2-D array (a matrix), but the file holds an array of shape 4"],
    );
    fails_with(
        run(
            &[&"assemble", &"--a", &a_path, &"--d", &a_path, &"-o", &out],
            &[],
        ),
        &["a.npy: d must be a vector", "shape 3x4"],
    );
    assert!(!out.exists());
}

#[test]
fn too_large_for_the_textures_gives_the_limit_and_largest_m() {
    let w = Workspace::new();
    let (a, d) = random_problem(1, 9, 9);
    let a_path = w.matrix("a.npy", &a);
    let d_path = w.vector("d.npy", &d);
    let out = w.path("out.npy");
    let limit = [("SYMRASTER_MAX_TEXTURE_SIZE", "8")];
    // The texture limit binds the methods that draw triangles (the tiled method, which keeps
    // matrices in storage buffers, goes past it).
    if succeeds(run(&[&"info"], &[])).contains("tiled") {
        succeeds(run(
            &[
                &"assemble",
                &"--a",
                &a_path,
                &"--d",
                &d_path,
                &"--method",
                &"tiled",
                &"-o",
                &out,
            ],
            &limit,
        ));
    }
    fails_with(
        run(
            &[
                &"assemble",
                &"--a",
                &a_path,
                &"--d",
                &d_path,
                &"--method",
                &"faithful",
                &"-o",
                &out,
            ],
            &limit,
        ),
        &[
            "m = 9 needs a 9x9 texture in full format",
            "GL_MAX_TEXTURE_SIZE is 8",
            "the largest m that fits is 8 in full format and 7 in packed format",
        ],
    );
    // Packed: m = 8 needs a 4x9 texture, one row too many.
    let c = problems::well_conditioned_spd(&mut problems::rng(1), 8);
    let c_path = w.matrix("c.npy", &c);
    fails_with(
        run(
            &[
                &"factor",
                &"--c",
                &c_path,
                &"--format",
                &"packed",
                &"--method",
                &"faithful",
                &"-o",
                &out,
            ],
            &limit,
        ),
        &[
            "m = 8 needs a 4x9 texture in packed format",
            "7 in packed format",
        ],
    );
    fails_with(
        run(
            &[
                &"solve",
                &"--a",
                &a_path,
                &"--d",
                &d_path,
                &"--b",
                &d_path,
                &"--method",
                &"faithful",
                &"-o",
                &out,
            ],
            &limit,
        ),
        &["m = 9 needs a 9x9 texture"],
    );
    // The variable can only lower the limit: a huge value changes nothing at m = 8.
    succeeds(run(
        &[&"factor", &"--c", &c_path, &"-o", &out],
        &[("SYMRASTER_MAX_TEXTURE_SIZE", "1000000000")],
    ));
    fails_with(
        run(&[&"info"], &[("SYMRASTER_MAX_TEXTURE_SIZE", "big")]),
        &[
            "SYMRASTER_MAX_TEXTURE_SIZE must be a positive texture size",
            "\"big\"",
        ],
    );
}

#[test]
fn malformed_files_and_unsupported_types_name_the_file_and_the_fault() {
    let w = Workspace::new();
    let d_path = w.vector("d.npy", &[1.0f32; 2]);
    let out = w.path("c.npy");
    let good = {
        let mut buf = Vec::new();
        io::npy::write(&mut buf, &[2, 2], &[1.0f64, 0.0, 0.0, 1.0]).unwrap();
        buf
    };
    // The same file with another type string in its header.
    let header = |descr: &[u8; 3]| {
        let mut buf = good.clone();
        let at = buf.windows(3).position(|w| w == b"<f8").unwrap();
        buf[at..at + 3].copy_from_slice(descr);
        buf
    };
    let int_header = header(b"<i8");
    let complex_header = header(b"<c8");
    let bool_header = header(b"|b1");
    let cases: Vec<(&str, Vec<u8>, Vec<&str>)> = vec![
        (
            "truncated.npy",
            good[..good.len() - 5].to_vec(),
            vec![
                "not a valid .npy file",
                "truncated",
                "needs 32 bytes",
                "only 27",
            ],
        ),
        (
            "notnpy.npy",
            b"hello".to_vec(),
            vec!["not a valid .npy file", "magic"],
        ),
        (
            "int.npy",
            int_header,
            vec![
                "dtype '<i8' (integer) is not supported",
                "float32 or float64",
            ],
        ),
        (
            "bool.npy",
            bool_header,
            vec!["dtype '|b1' (boolean) is not supported"],
        ),
        (
            "complex.npy",
            complex_header[..complex_header.len() - 16].to_vec(),
            vec!["dtype '<c8' (complex) is not supported"],
        ),
        (
            "short.mtx",
            b"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n".to_vec(),
            vec![
                "not a valid Matrix Market file",
                "holds 4 values, more than the 7 bytes after its size line can hold",
            ],
        ),
        (
            "complex.mtx",
            b"%%MatrixMarket matrix array complex general\n1 1\n1 0\n".to_vec(),
            vec!["field 'complex' is not supported"],
        ),
        (
            "sparse.mtx",
            b"%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n".to_vec(),
            vec!["line 3: row index \"3\" is not in 1..=2"],
        ),
        (
            "word.mtx",
            b"%%MatrixMarket matrix array real general\n1 2\n1.5\nhello\n".to_vec(),
            vec!["line 4: \"hello\" is not a real number"],
        ),
    ];
    for (name, bytes, needles) in cases {
        let a_path = w.bytes(name, &bytes);
        let mut all = vec![name];
        all.extend(needles);
        fails_with(
            run(
                &[&"assemble", &"--a", &a_path, &"--d", &d_path, &"-o", &out],
                &[],
            ),
            &all,
        );
    }
    fails_with(
        run(
            &[
                &"assemble",
                &"--a",
                &w.path("missing.npy"),
                &"--d",
                &d_path,
                &"-o",
                &out,
            ],
            &[],
        ),
        &["cannot read ", "missing.npy"],
    );
    fails_with(
        run(
            &[
                &"assemble",
                &"--a",
                &w.path("a.csv"),
                &"--d",
                &d_path,
                &"-o",
                &out,
            ],
            &[],
        ),
        &["a.csv: unknown file type", ".npy", ".mtx"],
    );
    assert!(!out.exists());
}

#[test]
fn empty_matrices_are_an_error_not_a_panic() {
    let w = Workspace::new();
    let a0 = w.matrix("a0.npy", &Matrix::<f32>::zeros(0, 3));
    let a1 = w.matrix("a1.mtx", &Matrix::<f64>::zeros(3, 0));
    let d3 = w.vector("d3.npy", &[1.0f32; 3]);
    let d0 = w.vector("d0.npy", &[] as &[f32]);
    let c0 = w.matrix("c0.npy", &Matrix::<f32>::zeros(0, 0));
    let out = w.path("out.npy");
    fails_with(
        run(&[&"assemble", &"--a", &a0, &"--d", &d3, &"-o", &out], &[]),
        &[
            "input A (",
            "a0.npy) is empty (0x3)",
            "at least one row and one column",
        ],
    );
    fails_with(
        run(
            &[&"solve", &"--a", &a1, &"--d", &d0, &"--b", &d0, &"-o", &out],
            &[],
        ),
        &["a1.mtx) is empty (3x0)"],
    );
    fails_with(
        run(&[&"factor", &"--c", &c0, &"-o", &out], &[]),
        &["c0.npy) is empty (0x0)"],
    );
    assert!(!out.exists());
}

#[test]
fn no_opengl_device_says_what_to_install() {
    let w = Workspace::new();
    let c_path = w.matrix(
        "c.npy",
        &Matrix::from_fn(2, 2, |i, j| if i == j { 1.0f32 } else { 0.0 }),
    );
    let out = w.bytes("l.npy", b"keep me");
    fails_with(
        run(
            &[&"factor", &"--c", &c_path, &"-o", &out],
            &[("SYMRASTER_EGL_DEVICE", "99")],
        ),
        &["EGL device index 99 asked for"],
    );
    // EGL pointed at no vendor driver at all.
    fails_with(
        run(
            &[&"factor", &"--c", &c_path, &"-o", &out],
            &[("__EGL_VENDOR_LIBRARY_FILENAMES", "/nonexistent.json")],
        ),
        &["no usable OpenGL device", "apt-get install libegl1"],
    );
    fails_with(
        run(&[&"info"], &[("SYMRASTER_EGL_DEVICE", "first")]),
        &["SYMRASTER_EGL_DEVICE must be a device index"],
    );
    assert_eq!(std::fs::read(&out).unwrap(), b"keep me");
    assert_eq!(w.files(), vec!["c.npy", "l.npy"]);
}

#[test]
fn unwritable_outputs_name_the_path_and_leave_nothing() {
    let w = Workspace::new();
    let c_path = w.matrix(
        "c.npy",
        &Matrix::from_fn(2, 2, |i, j| if i == j { 4.0f32 } else { 1.0 }),
    );
    let nowhere = w.path("no/such/folder/l.npy");
    fails_with(
        run(&[&"factor", &"--c", &c_path, &"-o", &nowhere], &[]),
        &["cannot write ", "no/such/folder/l.npy", "does not exist"],
    );
    fails_with(
        run(&[&"factor", &"--c", &c_path, &"-o", &w.dir.path()], &[]),
        &["cannot write ", "is a directory"],
    );
    fails_with(
        run(&[&"factor", &"--c", &c_path, &"-o", &w.path("l.txt")], &[]),
        &["l.txt: unknown file type"],
    );
    // A folder that exists but takes no files (even for root): the failure comes after the
    // computation, when the temporary file is created.
    if Path::new("/proc/self").exists() {
        fails_with(
            run(&[&"factor", &"--c", &c_path, &"-o", &"/proc/l.npy"], &[]),
            &["cannot write /proc/l.npy"],
        );
    }
    assert_eq!(w.files(), vec!["c.npy"]);
}

#[test]
fn bad_options_are_refused_by_the_parser() {
    let o = run(
        &[
            &"solve", &"--a", &"a.npy", &"--d", &"d.npy", &"--b", &"b.npy", &"--tol", &"0", &"-o",
            &"x.npy",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a positive number"));
    let o = run(
        &[
            &"factor",
            &"--c",
            &"c.npy",
            &"--format",
            &"diagonal",
            &"-o",
            &"l.npy",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
}

// ------------------------------------------------ --method, --criterion, limits before allocation

/// The methods `info` says this device runs.
fn device_methods() -> Vec<String> {
    let text = succeeds(run(&[&"info"], &[]));
    let line = text
        .lines()
        .find(|l| l.starts_with("methods"))
        .unwrap_or_else(|| panic!("no methods line in {text}"));
    let list = line["methods".len()..].split('(').next().unwrap();
    list.split(',').map(|m| m.trim().to_string()).collect()
}

#[test]
fn method_option_runs_each_method_the_device_has_and_refuses_the_others() {
    let methods = device_methods();
    assert!(methods.contains(&"faithful".to_string()), "{methods:?}");
    let w = Workspace::new();
    let m = 9;
    let c = problems::well_conditioned_spd(&mut problems::rng(3), m);
    let c_path = w.matrix("c.npy", &c);
    let l_ref = reference::cholesky(&c.to_f64()).unwrap();
    for method in ["faithful", "blocked", "tiled", "auto"] {
        let out = w.path(&format!("l_{method}.npy"));
        let o = run(
            &[
                &"factor",
                &"--c",
                &c_path,
                &"--method",
                &method,
                &"-o",
                &out,
            ],
            &[],
        );
        if method == "auto" || methods.iter().any(|m| m == method) {
            let text = succeeds(o);
            assert!(text.contains(" method on "), "{text}");
            let l = io::read_matrix(&out, "L").unwrap();
            let err = relative_error(&l, &l_ref);
            assert!(err < 1e-5, "{method}: relative error {err:e}");
        } else {
            fails_with(o, &[&format!("cannot run the {method} method")]);
            assert!(!out.exists());
        }
    }
    let o = run(
        &[
            &"factor",
            &"--c",
            &c_path,
            &"--method",
            &"fastest",
            &"-o",
            &"l.npy",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "clap refuses an unknown method");
}

#[test]
fn solve_reports_backward_error_and_fallback_and_takes_the_paper_rule() {
    let w = Workspace::new();
    let (m, n) = (6, 12);
    let mut rng = problems::rng(21);
    let a = problems::uniform_matrix(&mut rng, m, n).to_f64();
    let d = widen(&problems::uniform_vector(&mut rng, n));
    let b = widen(&problems::uniform_vector(&mut rng, n));
    let (a_path, d_path, b_path) = (
        w.matrix("a.npy", &a),
        w.vector("d.npy", &d),
        w.vector("b.npy", &b),
    );
    for criterion in ["backward", "paper"] {
        let out = w.path(&format!("x_{criterion}.npy"));
        let text = succeeds(run(
            &[
                &"solve",
                &"--a",
                &a_path,
                &"--d",
                &d_path,
                &"--b",
                &b_path,
                &"--criterion",
                &criterion,
                &"-o",
                &out,
            ],
            &[],
        ));
        for needle in [
            "iterations: ",
            "backward error: ",
            "forward error estimate: ",
            "f64 CPU fallback: ",
        ] {
            assert!(
                text.contains(needle),
                "{criterion}: {needle} missing in {text}"
            );
        }
        assert!(text.contains(criterion), "{text}");
        assert_eq!(io::read_vector(&out, "x").unwrap().len(), m);
    }
    let o = run(
        &[
            &"solve",
            &"--a",
            &a_path,
            &"--d",
            &d_path,
            &"--b",
            &b_path,
            &"--max-iter",
            &"10001",
            &"-o",
            &"x.npy",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("above the limit of 10000"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn sizes_beyond_the_device_are_refused_before_allocating() {
    let limit = [("SYMRASTER_MAX_TEXTURE_SIZE", "64")];
    // m = 10⁹ would need gigabytes on the host: refused at once, by the texture limit.
    fails_with(
        run(
            &[&"demo", &"-m", &"1000000000", &"--method", &"faithful"],
            &limit,
        ),
        &["m = 1000000000", "64"],
    );
    // The tiled method is bounded by storage buffers, not textures.
    if succeeds(run(&[&"info"], &[])).contains("tiled") {
        fails_with(
            run(
                &[&"demo", &"-m", &"1000000000", &"--method", &"tiled"],
                &limit,
            ),
            &["m = 1000000000", "storage buffer"],
        );
    }
    // A wider than its texture (96 columns, 64 texels) is assembled in column blocks.
    succeeds(run(
        &[&"demo", &"-m", &"48", &"--method", &"faithful"],
        &limit,
    ));
    let w = Workspace::new();
    let out = w.path("tables");
    fails_with(
        run(
            &[&"tables", &"--sizes", &"16,100000000", &"--out", &out],
            &limit,
        ),
        &["m = 100000000"],
    );
    assert!(!out.exists(), "nothing is written when a size is refused");
}

#[test]
fn info_says_lowered_only_below_the_driver_limit() {
    let text = succeeds(run(
        &[&"info"],
        &[("SYMRASTER_MAX_TEXTURE_SIZE", "1000000000")],
    ));
    assert!(!text.contains("lowered"), "{text}");
}

/// SIGTERM, SIGINT, SIGHUP and SIGQUIT end the program with 128 + the signal, after removing
/// the temporary file of any write under way (the removal itself is tested in the library's io
/// module, and for SIGQUIT during a write below).
#[test]
fn signals_end_the_program_with_the_shell_status() {
    for (signal, status) in [("TERM", 143), ("INT", 130), ("HUP", 129), ("QUIT", 131)] {
        let w = Workspace::new();
        // A demo large enough to be running when the signal comes.
        let mut child = Command::new(env!("CARGO_BIN_EXE_symraster"))
            .args(["demo", "-m", "1500", "--method", "faithful"])
            .current_dir(w.path(""))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(700));
        let sent = Command::new("kill")
            .args([format!("-{signal}"), child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let code = child.wait().unwrap().code();
        assert_eq!(code, Some(status), "SIG{signal}");
        let left: Vec<_> = std::fs::read_dir(w.path("")).unwrap().collect();
        assert!(left.is_empty(), "nothing is left behind");
    }
}

/// SIGQUIT (Ctrl-\\) while an output is being written: the program exits with 131 (not a core
/// dump) and its temporary file is gone. A large .mtx output (text) is slow to write; the
/// signal is sent once its temporary file holds bytes, and a run that finishes before the
/// signal lands is tried again, larger.
#[test]
fn sigquit_during_a_write_leaves_no_temporary_file() {
    let w = Workspace::new();
    for m in [1500, 2500, 4000] {
        let (a, d) = random_problem(5, m, 1);
        let pa = w.matrix("a.npy", &a);
        let pd = w.vector("d.npy", &d);
        let out = w.path("c.mtx");
        let mut child = Command::new(env!("CARGO_BIN_EXE_symraster"))
            .arg("assemble")
            .args([
                &"--a" as &dyn AsRef<std::ffi::OsStr>,
                &pa,
                &"--d",
                &pd,
                &"-o",
                &out,
            ])
            .env_remove("SYMRASTER_EGL_DEVICE")
            .env_remove("SYMRASTER_MAX_TEXTURE_SIZE")
            .current_dir(w.path(""))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Until a temporary file with data in it appears, or the run ends.
        let writing = loop {
            if child.try_wait().unwrap().is_some() {
                break false;
            }
            let partial = std::fs::read_dir(w.path("")).unwrap().any(|e| {
                let e = e.unwrap();
                e.file_name().to_string_lossy().ends_with(".tmp")
                    && e.metadata().is_ok_and(|m| m.len() > 0)
            });
            if partial {
                break true;
            }
            std::thread::yield_now();
        };
        if writing {
            let sent = Command::new("kill")
                .args(["-QUIT", &child.id().to_string()])
                .status()
                .unwrap();
            assert!(sent.success());
        }
        let status = child.wait().unwrap();
        let left = w.files();
        assert!(
            left.iter()
                .all(|n| !n.ends_with(".tmp") && !n.starts_with("core")),
            "left behind: {left:?}"
        );
        if status.code() == Some(131) {
            assert!(!out.exists(), "an interrupted write leaves no output");
            return;
        }
        // The write ended first: the output is whole.
        assert!(status.success(), "{status:?}");
        std::fs::remove_file(&out).unwrap();
    }
    panic!("every run finished before SIGQUIT arrived");
}

/// An output that is a FIFO or a character device is refused before any work (one line, exit
/// status 1) and left as it is: a run would otherwise replace it by a regular file.
#[test]
fn fifo_and_device_outputs_are_refused_and_left_alone() {
    let w = Workspace::new();
    let (a, d) = random_problem(6, 4, 6);
    let pa = w.matrix("a.npy", &a);
    let pd = w.vector("d.npy", &d);
    let fifo = w.path("fifo.npy");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let null = w.path("null.npy");
    std::os::unix::fs::symlink("/dev/null", &null).unwrap();
    use std::os::unix::fs::FileTypeExt;
    for (out, kind) in [
        (&fifo, "a FIFO (named pipe)"),
        (&null, "a character device"),
    ] {
        let line = fails_with(
            run(&[&"assemble", &"--a", &pa, &"--d", &pd, &"-o", out], &[]),
            &["cannot write", kind, "not a regular file"],
        );
        assert!(line.contains(&*out.to_string_lossy()), "{line}");
    }
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(
        std::fs::symlink_metadata(&null)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_link(&null).unwrap(), Path::new("/dev/null"));
    assert_eq!(w.files(), ["a.npy", "d.npy", "fifo.npy", "null.npy"]);
}

/// `invert` of Hilbert(8) (κ ≈ 1.5e10; its f32 inverse is wrong in every digit): an error
/// without refinement; with it, by Gauss-Jordan the f64 CPU fallback (said on stdout), by the
/// default (`auto`: Cholesky in f64 on the GPU) f64's inverse; an indefinite matrix under
/// `--kind spd --method lu` is refused at its column, as by gje and cholesky.
#[test]
fn invert_never_writes_a_wrong_inverse() {
    let w = Workspace::new();
    if !succeeds(run(&[&"info"], &[])).contains("tiled") {
        eprintln!("skipped: no compute shaders");
        return;
    }
    let h = w.matrix(
        "h8.npy",
        &Matrix::from_fn(8, 8, |i, j| 1.0 / (i + j + 1) as f64),
    );
    let out = w.path("inv.npy");
    let spd = [&"--kind" as &dyn AsRef<std::ffi::OsStr>, &"spd"];
    let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&"invert", &"--a", &h, &"-o", &out];
    args.extend(spd);
    let mut no_refine = args.clone();
    no_refine.extend([&"--refine" as &dyn AsRef<std::ffi::OsStr>, &"0"]);
    fails_with(
        run(&no_refine, &[]),
        &["too ill-conditioned for single precision"],
    );
    assert!(!out.exists(), "no output after an error");
    let mut gje = args.clone();
    gje.extend([&"--method" as &dyn AsRef<std::ffi::OsStr>, &"gje"]);
    for (args, fallback) in [(gje, true), (args, false)] {
        let said = succeeds(run(&args, &[]));
        assert_eq!(said.contains("f64 CPU fallback"), fallback, "{said}");
        let x = io::read_matrix(&out, "X").unwrap();
        assert!(
            (x[(0, 0)] - 64.0).abs() < 1e-3 * 64.0,
            "H8⁻¹(0,0) = {}",
            x[(0, 0)]
        );
    }
    let mut m = Matrix::from_fn(5, 5, |i, j| if i == j { 4.0 } else { 0.5 });
    m[(2, 2)] = -1.0;
    let m_path = w.matrix("indef.npy", &m);
    for method in ["gje", "cholesky", "lu"] {
        fails_with(
            run(
                &[
                    &"invert",
                    &"--a",
                    &m_path,
                    &"--kind",
                    &"spd",
                    &"--method",
                    &method,
                    &"-o",
                    &out,
                ],
                &[],
            ),
            &["not positive definite", "column 2"],
        );
    }
}

/// `invert`, `sign` and `lyap` against what they promise: M·M⁻¹ = I, sign(A)² = I with the
/// eigenvalues' signs, the Lyapunov residual; and the errors (singular, unstable, wrong method).
#[test]
fn invert_sign_and_lyap() {
    let w = Workspace::new();
    if !succeeds(run(&[&"info"], &[])).contains("tiled") {
        eprintln!("skipped: no compute shaders");
        return;
    }
    let m = Matrix::from_fn(3, 3, |i, j| {
        if i == j {
            4.0
        } else {
            1.0 / (1 + i + j) as f64
        }
    });
    let m_path = w.matrix("m.npy", &m);
    let out = w.path("inv.npy");
    for args in [
        vec!["--kind", "general", "--method", "gje"],
        vec!["--kind", "general", "--method", "lu"],
        vec!["--kind", "spd", "--method", "gje"],
        vec!["--kind", "spd", "--method", "cholesky"],
        vec![
            "--kind", "spd", "--method", "cholesky", "--format", "packed",
        ],
    ] {
        let mut all: Vec<&dyn AsRef<std::ffi::OsStr>> =
            vec![&"invert", &"--a", &m_path, &"-o", &out];
        all.extend(args.iter().map(|a| a as &dyn AsRef<std::ffi::OsStr>));
        succeeds(run(&all, &[]));
        let x = io::read_matrix(&out, "X").unwrap();
        for i in 0..3 {
            for j in 0..3 {
                let mx: f64 = (0..3).map(|k| m[(i, k)] * x[(k, j)]).sum();
                let id = if i == j { 1.0 } else { 0.0 };
                assert!((mx - id).abs() < 1e-12, "{args:?}: (M·X)({i},{j}) = {mx}");
            }
        }
    }
    // The SPD inverse as LAPACK's RFP array; RFP storage only for the Cholesky route.
    let arf_path = w.path("inv_rfp.npy");
    succeeds(run(
        &[
            &"invert",
            &"--a",
            &m_path,
            &"--kind",
            &"spd",
            &"--method",
            &"cholesky",
            &"--format",
            &"packed",
            &"--rfp",
            &"-o",
            &arf_path,
        ],
        &[],
    ));
    let arf = io::read_vector(&arf_path, "X").unwrap();
    let x = io::read_matrix(&out, "X").unwrap();
    assert_eq!(arf.len(), 6);
    for i in 0..3 {
        for j in 0..=i {
            let got = arf[symraster::rfp::index(3, i, j)];
            assert!((got - x[(i, j)]).abs() < 1e-12, "RFP ({i},{j}) = {got}");
        }
    }
    fails_with(
        run(
            &[
                &"invert",
                &"--a",
                &m_path,
                &"--kind",
                &"spd",
                &"--method",
                &"gje",
                &"--format",
                &"packed",
                &"-o",
                &out,
            ],
            &[],
        ),
        &["RFP"],
    );
    // The default method for an SPD matrix is Cholesky, which runs in RFP, refined on the GPU.
    let said = succeeds(run(
        &[
            &"invert",
            &"--a",
            &m_path,
            &"--kind",
            &"spd",
            &"--format",
            &"packed",
            &"-o",
            &out,
        ],
        &[],
    ));
    assert!(
        said.contains("cholesky (auto)") && !said.contains("fallback"),
        "{said}"
    );
    let singular = w.matrix(
        "s.npy",
        &Matrix::from_fn(2, 2, |i, j| ((i + 1) * (j + 1)) as f64),
    );
    fails_with(
        run(&[&"invert", &"--a", &singular, &"-o", &out], &[]),
        &["singular", "column 1"],
    );
    fails_with(
        run(
            &[
                &"invert",
                &"--a",
                &m_path,
                &"--method",
                &"cholesky",
                &"-o",
                &out,
            ],
            &[],
        ),
        &["SPD"],
    );
    // A stable, non-normal A: sign(A) = −I and the Lyapunov residual vanishes.
    let a = Matrix::from_fn(2, 2, |i, j| match (i, j) {
        (0, 0) => -1.0,
        (0, 1) => 1.0,
        (1, 1) => -2.0,
        _ => 0.0,
    });
    let a_path = w.matrix("a.npy", &a);
    let s_path = w.path("sign.npy");
    succeeds(run(&[&"sign", &"--a", &a_path, &"-o", &s_path], &[]));
    let s = io::read_matrix(&s_path, "S").unwrap();
    for i in 0..2 {
        for j in 0..2 {
            let want = if i == j { -1.0 } else { 0.0 };
            assert!(
                (s[(i, j)] - want).abs() < 1e-10,
                "sign(A)({i},{j}) = {}",
                s[(i, j)]
            );
        }
    }
    let q = Matrix::from_fn(2, 2, |i, j| if i == j { 1.0 } else { 0.5 });
    let q_path = w.matrix("q.npy", &q);
    let x_path = w.path("x.npy");
    succeeds(run(
        &[&"lyap", &"--a", &a_path, &"--q", &q_path, &"-o", &x_path],
        &[],
    ));
    let x = io::read_matrix(&x_path, "X").unwrap();
    for i in 0..2 {
        for j in 0..2 {
            let r: f64 = (0..2)
                .map(|k| a[(i, k)] * x[(k, j)] + x[(i, k)] * a[(j, k)])
                .sum::<f64>()
                - q[(i, j)];
            assert!(r.abs() < 1e-10, "residual ({i},{j}) = {r}");
        }
    }
    // An unstable A is refused, and so is a Q of another order.
    fails_with(
        run(
            &[&"lyap", &"--a", &q_path, &"--q", &q_path, &"-o", &x_path],
            &[],
        ),
        &["not stable"],
    );
    fails_with(
        run(
            &[&"lyap", &"--a", &a_path, &"--q", &m_path, &"-o", &x_path],
            &[],
        ),
        &["must be 2x2"],
    );
}

// ---------------------------------------------------------------- hardening round 2

/// A SuiteSparse-style coordinate file (symmetric, lower triangle, entries in any order, one
/// split into two duplicates) gives the same factor as the dense matrix it lists.
#[test]
fn factor_reads_a_coordinate_matrix_market_file() {
    let w = Workspace::new();
    let m = 12;
    let c = problems::well_conditioned_spd(&mut problems::rng(5), m).to_f64();
    let mut entries = Vec::new();
    for j in 0..m {
        for i in j..m {
            if i == j {
                // A duplicate pair summing to the diagonal entry.
                entries.push(format!("{} {} {:e}", i + 1, j + 1, c[(i, j)] / 2.0));
                entries.push(format!("{} {} {:e}", i + 1, j + 1, c[(i, j)] / 2.0));
            } else {
                entries.push(format!("{} {} {:e}", i + 1, j + 1, c[(i, j)]));
            }
        }
    }
    entries.reverse();
    let text = format!(
        "%%MatrixMarket matrix coordinate real symmetric\n% SuiteSparse-like\n{m} {m} {}\n{}\n",
        entries.len(),
        entries.join("\n")
    );
    let c_path = w.bytes("c.mtx", text.as_bytes());
    let out = w.path("l.npy");
    succeeds(run(&[&"factor", &"--c", &c_path, &"-o", &out], &[]));
    let l = io::read_matrix(&out, "L").unwrap();
    let backward = relative_error(&reference::multiply_lower_by_transpose(&l), &c);
    assert!(
        backward <= 10.0 * m as f64 * EPS32,
        "backward error {backward:e}"
    );
}

/// A program whose stdout is full (`> /dev/full`) or closed (`| true`) does not panic: a
/// closed pipe is ignored (exit 0), a full stdout is one line on stderr (exit 1), and in both
/// cases the output file is in place.
#[test]
fn a_full_or_closed_stdout_is_not_a_panic() {
    let w = Workspace::new();
    let c = problems::well_conditioned_spd(&mut problems::rng(6), 5);
    let c_path = w.matrix("c.npy", &c);
    if let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") {
        let out = w.path("l_full.npy");
        let o = Command::new(env!("CARGO_BIN_EXE_symraster"))
            .args([
                &"factor" as &dyn AsRef<std::ffi::OsStr>,
                &"--c",
                &c_path,
                &"-o",
                &out,
            ])
            .stdout(full)
            .env_remove("RUST_LOG")
            .output()
            .unwrap();
        fails_with(o, &["cannot write to standard output", "No space left"]);
        assert_eq!(io::read_matrix(&out, "L").unwrap().shape(), (5, 5));
    }
    for args in [
        vec!["info"],
        vec!["factor", "--c", "c.npy", "-o", "l_pipe.npy"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_symraster"))
            .args(&args)
            .current_dir(w.dir.path())
            .env_remove("RUST_LOG")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Close the reading end before the program prints anything (it opens the GPU first).
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{args:?}: {:?} {stderr}", o.status);
        assert!(stderr.trim().is_empty(), "{args:?}: {stderr}");
    }
    assert_eq!(
        io::read_matrix(&w.path("l_pipe.npy"), "L").unwrap().shape(),
        (5, 5)
    );
}

/// An output name as long as the file system takes works (the temporary name is short); a
/// longer one is refused with one line before any computation (here the computation would
/// fail: C is not positive definite).
#[test]
fn long_output_names_are_checked_before_computing() {
    let w = Workspace::new();
    let c = problems::well_conditioned_spd(&mut problems::rng(7), 4);
    let c_path = w.matrix("c.npy", &c);
    let long = format!("{}.npy", "a".repeat(232));
    assert_eq!(long.len(), 236);
    succeeds(run(
        &[&"factor", &"--c", &c_path, &"-o", &w.path(&long)],
        &[],
    ));
    assert_eq!(w.files(), vec![long.clone(), "c.npy".to_string()]);

    let not_spd = w.matrix(
        "bad.npy",
        &Matrix::from_row_major(2, 2, vec![1.0f32, 2.0, 2.0, 1.0]).unwrap(),
    );
    let too_long = format!("{}.npy", "b".repeat(296));
    fails_with(
        run(
            &[&"factor", &"--c", &not_spd, &"-o", &w.path(&too_long)],
            &[],
        ),
        &[
            "cannot write",
            "its name (300 bytes) is too long for the file system",
        ],
    );
    assert_eq!(
        w.files(),
        vec![long, "bad.npy".to_string(), "c.npy".to_string()]
    );
}

/// A replaced output keeps its permission bits; a new one gets the umask's, as any new file.
#[cfg(unix)]
#[test]
fn a_replaced_output_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let w = Workspace::new();
    let c = problems::well_conditioned_spd(&mut problems::rng(8), 3);
    let c_path = w.matrix("c.npy", &c);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    let out = w.bytes("l.npy", b"old");
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o600)).unwrap();
    succeeds(run(&[&"factor", &"--c", &c_path, &"-o", &out], &[]));
    assert_eq!(io::read_matrix(&out, "L").unwrap().shape(), (3, 3));
    assert_eq!(mode(&out), 0o600);

    let fresh = w.path("fresh.npy");
    succeeds(run(&[&"factor", &"--c", &c_path, &"-o", &fresh], &[]));
    let plain = w.bytes("plain.txt", b"x");
    assert_eq!(
        mode(&fresh),
        mode(&plain),
        "a new output has the umask's mode"
    );
}

/// Failing commands print exactly one line on stderr, and a successful one that notes
/// something on the way (the solver's f64 fallback) prints nothing there at default verbosity.
#[test]
fn errors_are_one_line_and_no_log_line_comes_before_them() {
    let w = Workspace::new();
    let bin = env!("CARGO_BIN_EXE_symraster");
    // `view` without a display.
    let o = Command::new(bin)
        .arg("view")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    fails_with(
        o,
        &["cannot open the viewer window", "--record", "xvfb-run"],
    );
    // `reproduce --out FILE`: refused before any progress line.
    let file = w.bytes("not_a_folder", b"x");
    let o = run(&[&"reproduce", &"--sizes", &"8", &"--out", &file], &[]);
    assert!(o.stdout.is_empty());
    fails_with(o, &["not_a_folder", "it is not a folder"]);
    // A solve that falls back to the f64 CPU solve (one refinement step allowed from the f32
    // factor, which packed storage takes: the f64 factor's x⁰ needs none): the report says so,
    // stderr stays empty.
    let a = w.matrix(
        "a.npy",
        &Matrix::from_row_major(2, 4, vec![1.0f64, 0.2, 0.7, 0.5, 0.3, 1.0, 0.1, 0.9]).unwrap(),
    );
    let d = w.vector("d.npy", &[1.0f64, 1e3, 1e-3, 3.0]);
    let b = w.vector("b.npy", &[1.0f64, 2.0, 3.0, 4.0]);
    let o = Command::new(bin)
        .args([
            &"solve" as &dyn AsRef<std::ffi::OsStr>,
            &"--a",
            &a,
            &"--d",
            &d,
            &"--b",
            &b,
        ])
        .args([
            &"--max-iter" as &dyn AsRef<std::ffi::OsStr>,
            &"1",
            &"--format",
            &"packed",
            &"-o",
            &w.path("x.npy"),
        ])
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(succeeds(o).contains("f64 CPU fallback: yes"));
    assert!(stderr.is_empty(), "{stderr}");
}

/// A float64 input value beyond float32's range is named with its value, not as "inf".
#[test]
fn values_beyond_single_precision_are_named_as_such() {
    let w = Workspace::new();
    let a = w.matrix(
        "a.npy",
        &Matrix::from_row_major(2, 2, vec![1.0f64, 0.0, 1e39, 1.0]).unwrap(),
    );
    let d = w.vector("d.npy", &[1.0f64, 1.0]);
    let out = w.path("out.npy");
    let line = fails_with(
        run(&[&"assemble", &"--a", &a, &"--d", &d, &"-o", &out], &[]),
        &[
            "a.npy",
            "holds 1e39 at row 1, column 0",
            "beyond single precision's range",
        ],
    );
    assert!(!line.contains("inf"), "{line}");
    assert!(!out.exists());
    // Inversion takes any scale (A scaled by a power of two first): this A's inverse,
    // [[1, 0], [-1e39, 1]], is computed in f64 and written.
    succeeds(run(&[&"invert", &"--a", &a, &"-o", &out], &[]));
    let x = io::read_matrix(&out, "X").unwrap();
    assert_eq!(x.as_slice(), &[1.0, 0.0, -1e39, 1.0]);
}

/// Numerics on the command line (issue 23): a tiny SPD C factors (scaled in f64 before
/// rounding), an L beyond f32 is the range error, b beyond f32 solves, and too few non-zero
/// weights is the singular-product error.
#[test]
fn numerics_tiny_factors_huge_right_sides_and_singular_products() {
    let w = Workspace::new();
    let tiny = Matrix::from_fn(5, 5, |i, j| if i == j { 1e-50f64 } else { 0.0 });
    let c_path = w.matrix("c_tiny.npy", &tiny);
    let out = w.path("l.npy");
    succeeds(run(&[&"factor", &"--c", &c_path, &"-o", &out], &[]));
    let l = io::read_matrix(&out, "L").unwrap();
    for j in 0..5 {
        assert!(
            (l[(j, j)] / 1e-25 - 1.0).abs() < 1e-6,
            "L({j},{j}) = {}",
            l[(j, j)]
        );
    }
    let vanishing = w.matrix("c_1e-90.npy", &tiny.map(|v| v * 1e-40));
    let out2 = w.path("l2.npy");
    fails_with(
        run(&[&"factor", &"--c", &vanishing, &"-o", &out2], &[]),
        &["L (C = L·Lᵀ) leaves single precision's range"],
    );
    assert!(!out2.exists());

    let (m, n) = (4, 8);
    let mut rng = problems::rng(23);
    let a = problems::uniform_matrix(&mut rng, m, n).to_f64();
    let d = widen(&problems::uniform_vector(&mut rng, n));
    let b = widen(&problems::uniform_vector(&mut rng, n));
    let big: Vec<f64> = b.iter().map(|v| v * 1e39).collect();
    let (a_path, d_path, b_path, big_path) = (
        w.matrix("a.npy", &a),
        w.vector("d.npy", &d),
        w.vector("b.npy", &b),
        w.vector("b_big.npy", &big),
    );
    let (x_out, big_out) = (w.path("x.npy"), w.path("x_big.npy"));
    for (b, out) in [(&b_path, &x_out), (&big_path, &big_out)] {
        succeeds(run(
            &[
                &"solve", &"--a", &a_path, &"--d", &d_path, &"--b", b, &"-o", out,
            ],
            &[],
        ));
    }
    let x = io::read_vector(&x_out, "x").unwrap();
    let x_big = io::read_vector(&big_out, "x").unwrap();
    for (x, x_big) in x.iter().zip(&x_big) {
        assert!(
            x_big.is_finite() && (x_big / (x * 1e39) - 1.0).abs() < 1e-12,
            "{x_big}"
        );
    }
    let mut sparse = d.clone();
    for v in sparse.iter_mut().skip(3) {
        *v = 0.0;
    }
    let sparse_path = w.vector("d_sparse.npy", &sparse);
    let out3 = w.path("x3.npy");
    fails_with(
        run(
            &[
                &"solve",
                &"--a",
                &a_path,
                &"--d",
                &sparse_path,
                &"--b",
                &b_path,
                &"-o",
                &out3,
            ],
            &[],
        ),
        &["AD²Aᵀ is singular: only 3 of d's 8 entries are non-zero, fewer than m = 4"],
    );
    assert!(!out3.exists());
}

#[test]
fn spd_solve_matches_the_cpu_reference_and_names_a_bad_b() {
    let w = Workspace::new();
    let m = 9;
    let c = problems::well_conditioned_spd(&mut problems::rng(31), m).to_f64();
    let b = widen(&problems::uniform_vector(&mut problems::rng(32), m));
    let l = reference::cholesky(&c).unwrap();
    let x_ref = symraster::least_squares::solve_with_factor(&l, &b);
    // Garbage above the diagonal: only the lower triangle is read.
    let mut stored = c.clone();
    stored[(0, m - 1)] = 1e30;
    let (c_path, b_path, out) = (
        w.matrix("c.npy", &stored),
        w.vector("b.npy", &b),
        w.path("x.npy"),
    );
    let text = succeeds(run(
        &[&"spd-solve", &"--c", &c_path, &"--b", &b_path, &"-o", &out],
        &[],
    ));
    assert!(text.contains("iterations: "), "{text}");
    assert!(text.contains("backward error: "), "{text}");
    assert!(text.contains("f64 CPU fallback: no"), "{text}");
    assert_eq!(npy_descr(&out), "<f8", "spd-solve writes float64");
    let x = io::read_vector(&out, "x").unwrap();
    let err = symraster::least_squares::relative_error_vec(&x, &x_ref);
    assert!(err <= 1e-12, "relative error {err:e}");
    let b_short = w.vector("b_short.npy", &b[..m - 1]);
    let out2 = w.path("x2.npy");
    fails_with(
        run(
            &[
                &"spd-solve",
                &"--c",
                &c_path,
                &"--b",
                &b_short,
                &"-o",
                &out2,
            ],
            &[],
        ),
        &["b needs 9 entries", "b_short.npy"],
    );
    assert!(!out2.exists(), "nothing written on failure");
}
