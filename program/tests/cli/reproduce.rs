//! `symraster reproduce` at tiny sizes: the files exist and are well formed. Timings are only
//! checked to be positive numbers, never compared.

use std::path::Path;
use std::process::Command;

fn reproduce(out: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_symraster"))
        .args([
            "reproduce",
            "--sizes",
            "16,32",
            "--repetitions",
            "1",
            "--quiet",
            "--out",
        ])
        .arg(out)
        .args(extra)
        .output()
        .expect("the binary runs")
}

/// The CSV's header and rows, each row with as many cells as the header.
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .expect("a header")
        .split(',')
        .map(String::from)
        .collect();
    let rows: Vec<Vec<String>> = lines
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    for r in &rows {
        assert_eq!(
            r.len(),
            header.len(),
            "{}: row {r:?} against header {header:?}",
            path.display()
        );
    }
    (header, rows)
}

fn assert_positive(rows: &[Vec<String>], header: &[String], column: &str) {
    let c = header
        .iter()
        .position(|h| h == column)
        .unwrap_or_else(|| panic!("no column {column}"));
    for r in rows {
        let t: f64 = r[c]
            .parse()
            .unwrap_or_else(|_| panic!("{column}: {:?} is not a number", r[c]));
        assert!(t > 0.0 && t.is_finite(), "{column}: {t}");
    }
}

fn assert_svg_and_png(stem: &Path, legend: &[&str]) {
    let svg = std::fs::read_to_string(stem.with_extension("svg")).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
        "not an SVG document"
    );
    for l in legend {
        assert!(
            svg.contains(l),
            "legend {l:?} missing from {}",
            stem.display()
        );
    }
    let png = std::fs::read(stem.with_extension("png")).unwrap();
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000,
        "not a PNG plot"
    );
}

#[test]
fn figures_are_written_with_the_expected_columns() {
    let dir = tempfile::tempdir().unwrap();
    let out = reproduce(dir.path(), &["--only", "fig8"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (h, rows) = read_csv(&dir.path().join("fig8_assembly.csv"));
    assert_eq!(
        h,
        [
            "m",
            "n",
            "gpu_full_s",
            "gpu_full_wall_s",
            "gpu_packed_s",
            "gpu_packed_wall_s",
            "gpu_blocked_full_s",
            "gpu_blocked_packed_s",
            "gpu_tiled_full_s",
            "gpu_tiled_rfp_s",
            "cpu_faer_f32_s",
            "vendor_s",
        ]
    );
    assert_eq!(
        rows.iter().map(|r| r[0].as_str()).collect::<Vec<_>>(),
        ["16", "32"]
    );
    // Every timing column but the vendor's (no torch here).
    for c in &h[2..h.len() - 1] {
        assert_positive(&rows, &h, c);
    }
    assert_svg_and_png(
        &dir.path().join("fig8_assembly"),
        &[
            "GPU packed",
            "GPU full",
            "GPU blocked",
            "GPU tiled",
            "CPU faer",
        ],
    );
    assert!(
        !dir.path().join("fig9_cholesky.csv").exists(),
        "--only fig8 ran fig 9 too"
    );
    let device = std::fs::read_to_string(dir.path().join("device.txt")).unwrap();
    assert!(
        device.contains("GL_RENDERER")
            && device.contains("CPU threads")
            && device.contains("16,32")
    );
    // No temporary files left behind.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.contains("partial")), "{names:?}");
}

#[test]
fn fig9_adds_lu_and_the_vendor_line_when_present() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("vendor.csv"),
        "op,m,seconds,label\ncholesky,16,1.5e-5,torch test\nlu,16,2.5e-5,torch test\ncholesky,32,2e-5,torch test\n",
    )
    .unwrap();
    let out = reproduce(dir.path(), &["--only", "fig9"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (h, rows) = read_csv(&dir.path().join("fig9_cholesky.csv"));
    assert_eq!(
        h,
        [
            "m",
            "gpu_full_s",
            "gpu_full_wall_s",
            "gpu_packed_s",
            "gpu_packed_wall_s",
            "gpu_blocked_full_s",
            "gpu_blocked_packed_s",
            "gpu_tiled_full_s",
            "gpu_tiled_rfp_s",
            "cpu_faer_f32_s",
            "gpu_lu_s",
            "gpu_lu_wall_s",
            "vendor_s",
            "vendor_lu_s",
        ]
    );
    for c in [
        "gpu_full_s",
        "gpu_packed_s",
        "cpu_faer_f32_s",
        "gpu_lu_s",
        "gpu_lu_wall_s",
    ] {
        assert_positive(&rows, &h, c);
    }
    let vendor = h.iter().position(|c| c == "vendor_s").unwrap();
    assert_eq!(rows[0][vendor], "1.500000e-5");
    assert_eq!(
        rows[1][h.iter().position(|c| c == "vendor_lu_s").unwrap()],
        "",
        "no LU time at m=32"
    );
    assert_svg_and_png(
        &dir.path().join("fig9_cholesky"),
        &["GPU LU", "vendor library", "torch test"],
    );
}

#[test]
fn bad_sizes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_symraster"))
        .args(["reproduce", "--sizes", "16,0", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("comma-separated list of positive integers")
    );
}

#[test]
fn tables_are_written_as_csv_and_markdown() {
    let dir = tempfile::tempdir().unwrap();
    let out = reproduce(dir.path(), &["--only", "tables"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for t in ["table1", "table2"] {
        let (h, rows) = read_csv(&dir.path().join(format!("{t}.csv")));
        // One row per size and method: faithful, and tiled where compute shaders exist.
        let methods: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(methods, ["faithful", "tiled", "faithful", "tiled"], "{t}");
        assert!(h.len() >= 8 && h[0] == "method", "{t}: {h:?}");
        let md = std::fs::read_to_string(dir.path().join(format!("{t}.md"))).unwrap();
        assert!(
            md.contains("| 16 ") && md.contains("| 32 "),
            "{t}.md lacks the sizes:\n{md}"
        );
    }
    assert!(!dir.path().join("fig8_assembly.csv").exists());
}

#[test]
fn tables_is_reproduce_only_tables_under_its_own_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_symraster"))
        .args(["tables", "--sizes", "16", "--out"])
        .arg(dir.path())
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    for t in ["table1", "table2"] {
        let (_, rows) = read_csv(&dir.path().join(format!("{t}.csv")));
        assert_eq!(rows.len(), 2, "{t}: one row per size and method");
        let md = std::fs::read_to_string(dir.path().join(format!("{t}.md"))).unwrap();
        assert!(
            stdout.contains(md.trim()),
            "tables prints {t}.md:\n{stdout}"
        );
    }
    assert!(!dir.path().join("fig8_assembly.csv").exists());
    // One size parser: `tables` and `reproduce` refuse the same lists the same way.
    let bad = Command::new(env!("CARGO_BIN_EXE_symraster"))
        .args(["tables", "--sizes", "16,x", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("comma-separated list of positive integers")
    );
}

/// The figures past the paper: throughput (GFLOP/s of every method against m) and inversion
/// (GJE against factorization-based inversion), with the vendor's lines when present.
#[test]
fn throughput_and_inversion_figures() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("vendor.csv"),
        "op,m,seconds,label\nassembly,16,1e-5,torch test\ncholesky,32,2e-5,torch test\n\
         inverse_general,16,1e-5,torch test\ninverse_spd,32,1e-5,torch test\n\
         syrk,16,2e-5,cupy test\n",
    )
    .unwrap();
    for only in ["throughput", "inversion"] {
        let out = reproduce(dir.path(), &["--only", only]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for (stem, columns) in [
        (
            "throughput_assembly",
            &[
                "faithful_gflops",
                "blocked_gflops",
                "tiled_full_gflops",
                "tiled_rfp_gflops",
                "cpu_faer_f32_gflops",
            ][..],
        ),
        (
            "throughput_cholesky",
            &[
                "faithful_gflops",
                "tiled_full_gflops",
                "cpu_faer_f32_gflops",
            ][..],
        ),
        (
            "inversion",
            &[
                "spd_gje_gflops",
                "spd_cholesky_gflops",
                "spd_cholesky_rfp_gflops",
                "general_gje_gflops",
                "general_lu_gflops",
                "cpu_general_gflops",
            ][..],
        ),
    ] {
        let (h, rows) = read_csv(&dir.path().join(format!("{stem}.csv")));
        assert_eq!(rows.len(), 2, "{stem}");
        for c in columns {
            assert_positive(&rows, &h, c);
        }
        assert_svg_and_png(&dir.path().join(stem), &["GPU", "vendor library"]);
    }
    let (h, rows) = read_csv(&dir.path().join("throughput_assembly.csv"));
    let vendor = h.iter().position(|c| c == "vendor_gflops").unwrap();
    // 16·17·32 flops in 1e-5 s.
    assert_eq!(rows[0][vendor], "8.704000e-1");
    // cuBLAS SSYRK's line from the syrk row: the same flops in 2e-5 s; none for Cholesky.
    let syrk = h.iter().position(|c| c == "vendor_lower_gflops").unwrap();
    assert_eq!(rows[0][syrk], "4.352000e-1");
    assert_svg_and_png(&dir.path().join("throughput_assembly"), &["cuBLAS SSYRK"]);
    let (h, rows) = read_csv(&dir.path().join("throughput_cholesky.csv"));
    let syrk = h.iter().position(|c| c == "vendor_lower_gflops").unwrap();
    assert!(rows.iter().all(|r| r[syrk].is_empty()), "{rows:?}");
}
