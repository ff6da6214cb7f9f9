//! `symraster batched` end to end: .npy arrays with a leading batch axis in, x (or L, C) and
//! the int32 INFO array out, checked against f64 references per problem; a failing problem
//! fails alone; bad input is one line with exit status 1 and leaves no file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use symraster::{Matrix, io, problems, reference};

fn run(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_symraster"));
    cmd.arg("batched");
    for a in args {
        cmd.arg(a);
    }
    cmd.env_remove("SYMRASTER_EGL_DEVICE")
        .output()
        .expect("the binary runs")
}

fn succeeds(o: Output) -> String {
    assert!(
        o.status.success(),
        "expected success: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Exit status 1, one line on stderr holding `needle`.
fn fails_with(o: Output, needle: &str) {
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{stderr:?}");
    assert!(
        lines[0].starts_with("error: ") && lines[0].contains(needle),
        "{}",
        lines[0]
    );
}

/// The int32 values of a .npy file written by `--info`.
fn read_info(path: &Path) -> Vec<i32> {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
    let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
    assert!(header.contains("'descr': '<i4'"), "{header}");
    bytes[10 + header_len..]
        .chunks(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

struct Files(tempfile::TempDir);

impl Files {
    fn array(&self, name: &str, shape: &[usize], data: &[f64]) -> PathBuf {
        let p = self.0.path().join(name);
        io::write_array(&p, shape, data).unwrap();
        p
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }
    fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.0.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

/// (B, n, 2n) observations with problem 1's A row 0 zero (its C fails at column 0).
fn problem_data(count: usize, n: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let k = 2 * n;
    let mut rng = problems::rng(3);
    let mut a: Vec<f64> = problems::uniform_vector(&mut rng, count * n * k)
        .iter()
        .map(|&v| f64::from(2.0 * v - 1.0))
        .collect();
    a[n * k..n * k + k].fill(0.0);
    let d = problems::uniform_vector(&mut rng, count * k)
        .iter()
        .map(|&v| f64::from(v + 0.5))
        .collect();
    let b = problems::uniform_vector(&mut rng, count * k)
        .iter()
        .map(|&v| f64::from(v))
        .collect();
    (a, d, b)
}

#[test]
fn least_squares_writes_x_and_info_per_problem() {
    let files = Files(tempfile::tempdir().unwrap());
    let (count, n) = (4, 5);
    let k = 2 * n;
    let (a, d, b) = problem_data(count, n);
    let pa = files.array("A.npy", &[count, n, k], &a);
    let pd = files.array("d.npy", &[count, k], &d);
    let pb = files.array("b.npy", &[count, k], &b);
    let (px, pi) = (files.path("x.npy"), files.path("info.npy"));
    let out = succeeds(run(&[
        &"--a", &pa, &"--d", &pd, &"--b", &pb, &"-o", &px, &"--info", &pi,
    ]));
    assert!(out.contains("1 of 4 problems failed"), "{out}");
    assert!(out.contains("problem 1: not positive definite"), "{out}");
    assert_eq!(read_info(&pi), vec![0, 1, 0, 0]);
    let x = io::read_array(&px).unwrap();
    assert_eq!(x.shape, vec![count, n]);
    for p in [0, 2, 3] {
        let am = Matrix::from_row_major(n, k, a[p * n * k..(p + 1) * n * k].to_vec()).unwrap();
        let dp = &d[p * k..(p + 1) * k];
        let bp = &b[p * k..(p + 1) * k];
        let c = reference::assemble(&am, dp);
        let g: Vec<f64> = (0..n)
            .map(|i| (0..k).map(|j| am[(i, j)] * dp[j] * bp[j]).sum())
            .collect();
        let x_ref =
            symraster::least_squares::solve_with_factor(&reference::cholesky(&c).unwrap(), &g);
        for (i, (got, want)) in x.data[p * n..(p + 1) * n].iter().zip(&x_ref).enumerate() {
            assert!((got - want).abs() < 1e-8 * want.abs().max(1.0), "{p} {i}");
        }
    }
    assert!(x.data[n..2 * n].iter().all(|v| v.is_nan()));
}

#[test]
fn cholesky_and_spd_solve_read_only_the_lower_triangles() {
    let files = Files(tempfile::tempdir().unwrap());
    let (count, n) = (3, 4);
    let mut c = Vec::new();
    let mut lower = Vec::new();
    for p in 0..count {
        let mut m = problems::well_conditioned_spd(&mut problems::rng(p as u64), n).to_f64();
        lower.push(m.lower_triangle());
        for i in 0..n {
            for j in i + 1..n {
                m[(i, j)] = f64::NAN;
            }
        }
        c.extend_from_slice(m.as_slice());
    }
    let pc = files.array("C.npy", &[count, n, n], &c);
    let (pl, pi) = (files.path("L.npy"), files.path("info.npy"));
    let out = succeeds(run(&[
        &"--op",
        &"cholesky",
        &"--c",
        &pc,
        &"-o",
        &pl,
        &"--info",
        &pi,
    ]));
    assert!(out.contains("0 of 3 problems failed"), "{out}");
    assert_eq!(read_info(&pi), vec![0; 3]);
    let l = io::read_array(&pl).unwrap();
    assert_eq!(l.shape, vec![count, n, n]);
    for (p, low) in lower.iter().enumerate() {
        let l_ref = reference::cholesky(&low.to_f32().to_f64()).unwrap();
        let got =
            Matrix::from_row_major(n, n, l.data[p * n * n..(p + 1) * n * n].to_vec()).unwrap();
        assert!(symraster::relative_error(&got, &l_ref) < 1e-5);
    }
    let pb = files.array("b.npy", &[count, n], &vec![1.0; count * n]);
    let px = files.path("x.npy");
    succeeds(run(&[
        &"--op",
        &"spd-solve",
        &"--c",
        &pc,
        &"--b",
        &pb,
        &"-o",
        &px,
    ]));
    assert_eq!(io::read_array(&px).unwrap().shape, vec![count, n]);
}

#[test]
fn bad_input_is_one_line_and_leaves_no_file() {
    let files = Files(tempfile::tempdir().unwrap());
    let (a, d, b) = problem_data(2, 3);
    let pa = files.array("A.npy", &[2, 3, 6], &a);
    let pd = files.array("d.npy", &[2, 6], &d);
    let short = files.array("b_short.npy", &[2, 5], &b[..10]);
    let px = files.path("x.npy");
    fails_with(
        run(&[&"--a", &pa, &"--d", &pd, &"--b", &short, &"-o", &px]),
        "shape mismatch: b must be (2, 6) (one observation per column of A), but is (2, 5)",
    );
    fails_with(
        run(&[&"--a", &pa, &"--d", &pd, &"-o", &px]),
        "batched --op least-squares needs --b",
    );
    fails_with(
        run(&[&"--a", &pd, &"--d", &pd, &"--b", &pd, &"-o", &px]),
        "A must be a 3-D array with the batch axis first (B, rows, cols), but the file holds an array of shape 2x6",
    );
    let mut bad = b.clone();
    bad[7] = f64::INFINITY;
    let pinf = files.array("b_inf.npy", &[2, 6], &bad);
    fails_with(
        run(&[&"--a", &pa, &"--d", &pd, &"--b", &pinf, &"-o", &px]),
        "input b (",
    );
    assert!(!files.names().contains(&"x.npy".to_string()));
    assert!(files.names().iter().all(|n| !n.ends_with(".tmp")));
}

/// Every output written or none: an --info that cannot be written (assembly has no INFO; a
/// FIFO; the output's own path) fails the run before any work, and neither the output nor
/// the INFO file is written or replaced.
#[test]
fn an_info_that_cannot_be_written_leaves_no_output() {
    use std::os::unix::fs::FileTypeExt;
    let files = Files(tempfile::tempdir().unwrap());
    let (count, n) = (2, 3);
    let (a, d, _) = problem_data(count, n);
    let pa = files.array("A.npy", &[count, n, 2 * n], &a);
    let pd = files.array("d.npy", &[count, 2 * n], &d);
    let (pc, pi) = (files.path("C.npy"), files.path("info.npy"));
    let assemble_with_info = || {
        run(&[
            &"--op",
            &"assemble",
            &"--a",
            &pa,
            &"--d",
            &pd,
            &"-o",
            &pc,
            &"--info",
            &pi,
        ])
    };
    fails_with(
        assemble_with_info(),
        "assembly has no INFO to write; leave out --info",
    );
    assert_eq!(files.names(), ["A.npy", "d.npy"]);
    // An existing output is left as it was.
    std::fs::write(&pc, b"before").unwrap();
    fails_with(assemble_with_info(), "assembly has no INFO to write");
    assert_eq!(std::fs::read(&pc).unwrap(), b"before");
    std::fs::remove_file(&pc).unwrap();
    // Cholesky's INFO into a FIFO: refused, the FIFO kept, no L.
    let spd: Vec<f64> = (0..count)
        .flat_map(|_| (0..n * n).map(move |i| if i / n == i % n { 2.0 } else { 0.5 }))
        .collect();
    let pcin = files.array("Cin.npy", &[count, n, n], &spd);
    let fifo = files.path("fifo.npy");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let pl = files.path("L.npy");
    fails_with(
        run(&[
            &"--op",
            &"cholesky",
            &"--c",
            &pcin,
            &"-o",
            &pl,
            &"--info",
            &fifo,
        ]),
        "it is a FIFO (named pipe), not a regular file",
    );
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    // INFO over the output itself.
    fails_with(
        run(&[
            &"--op",
            &"cholesky",
            &"--c",
            &pcin,
            &"-o",
            &pl,
            &"--info",
            &pl,
        ]),
        "-o and --info name the same file",
    );
    assert_eq!(files.names(), ["A.npy", "Cin.npy", "d.npy", "fifo.npy"]);
    // Both written when both can be.
    succeeds(run(&[
        &"--op",
        &"cholesky",
        &"--c",
        &pcin,
        &"-o",
        &pl,
        &"--info",
        &pi,
    ]));
    assert_eq!(read_info(&pi), vec![0; count]);
    assert_eq!(
        files.names(),
        ["A.npy", "Cin.npy", "L.npy", "d.npy", "fifo.npy", "info.npy"]
    );
}
