//! The tuning variables through the program, which maps them onto the library's `Tuning`:
//! every value checked by one rule before any work (src/tuning.rs), a bad one a one-line error with exit status 1 — never a hang, a panic, a
//! wrong result or a page of shader log — and a valid tuning that differs from the device's
//! default checked against the f64 reference before it is used.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `symraster demo -m 40 --method tiled` with one tuning variable set, within a minute.
fn demo_with(name: &str, value: &str) -> Output {
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_symraster"))
        .args(["demo", "-m", "40", "--method", "tiled"])
        .env_remove("SYMRASTER_EGL_DEVICE")
        .env_remove("SYMRASTER_MAX_TEXTURE_SIZE")
        .env(name, value)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(120) {
            child.kill().unwrap();
            panic!("{name}={value} hangs");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn one_line_error(o: &Output, needle: &str) {
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "stderr: {stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].starts_with("error: ") && lines[0].contains(needle),
        "{stderr}"
    );
}

#[test]
fn bad_tuning_values_are_one_line_errors() {
    let max = "18446744073709551615";
    for (name, value) in [
        ("SYMRASTER_TILED_OUTER", max),
        ("SYMRASTER_TILED_OUTER", "0"),
        ("SYMRASTER_TILED_LD_PAD", max),
        ("SYMRASTER_TILED_DIAG", "24"),
        ("SYMRASTER_TILED_SPLIT", "-3"),
        ("SYMRASTER_TILED_MAX_BUFFER_BYTES", "2"),
        ("SYMRASTER_MAPPED_UPLOAD", "yes"),
        ("SYMRASTER_TILED_CONFIG", "8,4,1024,4,4,2,32"),
        ("SYMRASTER_TILED_CONFIG", "16,16,8,8,16,1"),
        ("SYMRASTER_TILED_CONFIG", "4096,4096,8,8,16,1,32"),
        // Misspelt or retired: an error, not a setting silently ignored.
        ("SYMRASTER_TILED_OUTR", "512"),
    ] {
        one_line_error(&demo_with(name, value), name);
    }
}

#[test]
fn a_valid_tuning_other_than_the_default_is_checked_and_used() {
    // Register-only tiles, diagonal blocks of 64, outer block columns of 100.
    for (name, value) in [
        ("SYMRASTER_TILED_CONFIG", "4,4,4,4,1,0,32"),
        ("SYMRASTER_TILED_DIAG", "64"),
        ("SYMRASTER_TILED_OUTER", "100"),
        ("SYMRASTER_TILED_SPLIT", "20"),
    ] {
        let o = demo_with(name, value);
        assert!(
            o.status.success(),
            "{name}={value}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
