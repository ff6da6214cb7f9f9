//! Out of memory from the command line: under an address-space limit (`ulimit -v`), an input
//! too large for the memory left is one line, `error: not enough memory …`, and exit status
//! 1, never an abort with a backtrace; and a shape a file declares that the command cannot
//! take is refused before any memory is spent on it.

use std::path::Path;
use std::process::Output;

/// The address-space limit of these runs, in KiB (ulimit -v's unit): 300 MB, room for the
/// program but not for a 10000 x 10000 float32 matrix.
const LIMIT_KIB: u64 = 300_000;

/// Runs the binary with `args` under `ulimit -v LIMIT_KIB` through `sh -c`; None (with a note)
/// where the shell cannot set the limit.
fn run_limited(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Option<Output> {
    // Exit status 97 says the limit could not be set: the test is skipped, not failed.
    let script = format!("ulimit -v {LIMIT_KIB} 2>/dev/null || exit 97; exec \"$0\" \"$@\"");
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_symraster"));
    for a in args {
        cmd.arg(a);
    }
    cmd.env_remove("SYMRASTER_EGL_DEVICE")
        .env_remove("SYMRASTER_MAX_TEXTURE_SIZE")
        .env("RUST_BACKTRACE", "1");
    let out = cmd.output().expect("sh runs");
    if out.status.code() == Some(97) {
        eprintln!("skipped: this shell cannot set ulimit -v");
        return None;
    }
    Some(out)
}

/// Asserts exit status 1 and exactly one line on stderr, `error: …` holding every needle.
fn one_line_error(out: &Output, needles: &[&str]) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(1),
        "expected exit status 1 (not an abort), got {:?}; stderr: {stderr}",
        out.status
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

/// A .npy header of a float32 matrix of the given shape followed by its data as a hole: a
/// file of the full size that takes no disk space.
fn sparse_npy(path: &Path, rows: usize, cols: usize) {
    let header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
    let len = (10 + header.len() + 1).next_multiple_of(64) - 10;
    let padded = format!("{header:<width$}\n", width = len - 1);
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((padded.len() as u16).to_le_bytes());
    bytes.extend(padded.as_bytes());
    std::fs::write(path, &bytes).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.set_len((bytes.len() + rows * cols * 4) as u64)
        .unwrap();
}

#[test]
fn a_matrix_larger_than_the_memory_left_is_one_line_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("l.npy");
    // A 10000 x 10000 float32 C (400 MB) read under a 300 MB limit.
    let c = dir.path().join("c.npy");
    sparse_npy(&c, 10_000, 10_000);
    let Some(o) = run_limited(&[&"factor", &"--c", &c, &"-o", &out]) else {
        return;
    };
    one_line_error(
        &o,
        &[
            "not enough memory for the 10000x10000 matrix (float32) of ",
            "c.npy (0.37 GiB)",
        ],
    );
    // The same from a few kilobytes of Matrix Market coordinates (its diagonal): the dense
    // matrix they declare does not fit.
    let n = 10_000;
    let mut text = format!("%%MatrixMarket matrix coordinate real symmetric\n{n} {n} {n}\n");
    for i in 1..=n {
        text.push_str(&format!("{i} {i} 4\n"));
    }
    let c = dir.path().join("c.mtx");
    std::fs::write(&c, text).unwrap();
    let o = run_limited(&[&"factor", &"--c", &c, &"-o", &out]).expect("ulimit worked above");
    one_line_error(
        &o,
        &["not enough memory for the 10000x10000 matrix", "c.mtx"],
    );
    assert!(!out.exists());
}

#[test]
fn a_declared_shape_the_command_cannot_take_is_refused_before_it_is_allocated() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.npy");
    // A few bytes declaring a 1 x 150,000,000 C (1.2 GB as float64), and a b as long: refused
    // for their shapes under a limit far below what they declare.
    let c = dir.path().join("c.mtx");
    std::fs::write(
        &c,
        "%%MatrixMarket matrix coordinate real general\n1 150000000 1\n1 1 1\n",
    )
    .unwrap();
    let Some(o) = run_limited(&[&"factor", &"--c", &c, &"-o", &out]) else {
        return;
    };
    one_line_error(&o, &["c.mtx) must be square, but is 1x150000000"]);
    let o = run_limited(&[&"spd-solve", &"--c", &c, &"--b", &c, &"-o", &out]).unwrap();
    one_line_error(&o, &["c.mtx) must be square, but is 1x150000000"]);
    let c2 = dir.path().join("c2.mtx");
    std::fs::write(&c2, "%%MatrixMarket matrix array real general\n1 1\n2\n").unwrap();
    let b = dir.path().join("b.mtx");
    std::fs::write(
        &b,
        "%%MatrixMarket matrix coordinate real general\n150000000 1 1\n1 1 1\n",
    )
    .unwrap();
    let o = run_limited(&[&"spd-solve", &"--c", &c2, &"--b", &b, &"-o", &out]).unwrap();
    one_line_error(&o, &["so b needs 1 entries", "b.mtx) has 150000000"]);
    assert!(!out.exists());
}
