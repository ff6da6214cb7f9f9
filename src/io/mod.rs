//! Reading and writing matrices and vectors as NumPy `.npy` or Matrix Market `.mtx` files.
//!
//! The file's extension picks the format. Readers take float32 or float64 data (C or Fortran
//! order for .npy; `real general` or `real symmetric` arrays for .mtx) and widen it to f64;
//! anything else is a typed [`Error`] that names the file and what was wrong. Writers go
//! through a temporary file in the destination's folder that is renamed into place, so a
//! failed write never leaves a partial file and never clobbers an existing one.

pub mod mtx;
pub mod npy;

use crate::matrix::Matrix;
use std::fmt;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A file format, chosen by extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileFormat {
    /// NumPy `.npy`.
    Npy,
    /// Matrix Market `.mtx`, dense array form.
    MatrixMarket,
}

impl FileFormat {
    /// The format named by the path's extension (case-insensitive), or [`Error::Extension`].
    pub fn of(path: &Path) -> Result<Self> {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("npy") => Ok(FileFormat::Npy),
            Some("mtx") => Ok(FileFormat::MatrixMarket),
            _ => Err(Error::Extension {
                path: path.to_path_buf(),
            }),
        }
    }
}

impl fmt::Display for FileFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FileFormat::Npy => ".npy",
            FileFormat::MatrixMarket => "Matrix Market",
        })
    }
}

/// The precision of the values in a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// IEEE single (float32).
    F32,
    /// IEEE double (float64).
    F64,
}

impl Precision {
    /// Bytes per value.
    pub fn bytes(self) -> usize {
        match self {
            Precision::F32 => 4,
            Precision::F64 => 8,
        }
    }

    /// NumPy's name of the type.
    pub fn numpy_name(self) -> &'static str {
        match self {
            Precision::F32 => "float32",
            Precision::F64 => "float64",
        }
    }
}

/// An array read from a file: its shape and its values in row-major (C) order, widened to f64.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    /// The dimensions, outermost first.
    pub shape: Vec<usize>,
    /// The values, row-major.
    pub data: Vec<f64>,
    /// The precision the file stored.
    pub precision: Precision,
}

/// What is wrong with a file's bytes (the path is added by [`Error`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The bytes do not follow the format.
    #[error("{0}")]
    Malformed(String),
    /// The file is well formed but holds a type symraster does not take.
    #[error("{0} is not supported; symraster reads real float32 or float64 values")]
    UnsupportedType(String),
}

/// An error reading or writing a file; each names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be read at all.
    #[error("cannot read {}: {cause}", path.display())]
    Read {
        path: PathBuf,
        cause: std::io::Error,
    },
    /// The file's bytes are not a valid file of its format.
    #[error("{}: not a valid {format} file: {detail}", path.display())]
    Malformed {
        path: PathBuf,
        format: FileFormat,
        detail: String,
    },
    /// The file is well formed but holds a type symraster does not take.
    #[error("{}: {what} is not supported; symraster reads real float32 or float64 values", path.display())]
    UnsupportedType { path: PathBuf, what: String },
    /// The array has the wrong number of dimensions for its role.
    #[error("{}: {role} must be {expected}, but the file holds an array of shape {shape}", path.display())]
    Rank {
        path: PathBuf,
        role: String,
        expected: &'static str,
        shape: String,
    },
    /// The extension names no format we read or write.
    #[error("{}: unknown file type; use the extension .npy (NumPy) or .mtx (Matrix Market)", path.display())]
    Extension { path: PathBuf },
    /// The output could not be written.
    #[error("cannot write {}: {cause}", path.display())]
    Write {
        path: PathBuf,
        cause: std::io::Error,
    },
}

/// Result with the I/O error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A value type the writers store: f32 as float32, f64 as float64.
pub trait Element: Copy + sealed::Sealed {
    /// NumPy's type string, little-endian.
    const NPY_DESCR: &'static str;
    /// The type's name in messages.
    const NAME: &'static str;
    /// Appends the little-endian bytes.
    fn extend_le_bytes(self, out: &mut Vec<u8>);
    /// Appends the shortest decimal text that reads back to the same value.
    fn push_text(self, out: &mut String);
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

impl Element for f32 {
    const NPY_DESCR: &'static str = "<f4";
    const NAME: &'static str = "float32";
    fn extend_le_bytes(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn push_text(self, out: &mut String) {
        use fmt::Write as _;
        let _ = write!(out, "{self:e}");
    }
}

impl Element for f64 {
    const NPY_DESCR: &'static str = "<f8";
    const NAME: &'static str = "float64";
    fn extend_le_bytes(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn push_text(self, out: &mut String) {
        use fmt::Write as _;
        let _ = write!(out, "{self:e}");
    }
}

/// Reads any array from a .npy or .mtx file.
pub fn read_array(path: &Path) -> Result<Array> {
    let format = FileFormat::of(path)?;
    let bytes = std::fs::read(path).map_err(|cause| Error::Read {
        path: path.to_path_buf(),
        cause,
    })?;
    match format {
        FileFormat::Npy => npy::parse(&bytes),
        FileFormat::MatrixMarket => mtx::parse(&bytes),
    }
    .map_err(|e| match e {
        ParseError::Malformed(detail) => Error::Malformed {
            path: path.to_path_buf(),
            format,
            detail,
        },
        ParseError::UnsupportedType(what) => Error::UnsupportedType {
            path: path.to_path_buf(),
            what,
        },
    })
}

/// Reads a 2-D array as a matrix; `role` names it in errors ("A").
pub fn read_matrix(path: &Path, role: &str) -> Result<Matrix<f64>> {
    let array = read_array(path)?;
    match array.shape[..] {
        [rows, cols] => Ok(Matrix::from_row_major(rows, cols, array.data)
            .expect("the readers return rows*cols values")),
        _ => Err(Error::Rank {
            path: path.to_path_buf(),
            role: role.into(),
            expected: "a 2-D array (a matrix)",
            shape: shape_text(&array.shape),
        }),
    }
}

/// Reads a vector: a 1-D array, or a 2-D array with one row or one column.
pub fn read_vector(path: &Path, role: &str) -> Result<Vec<f64>> {
    let array = read_array(path)?;
    match array.shape[..] {
        [_] => Ok(array.data),
        [r, c] if r <= 1 || c <= 1 => Ok(array.data),
        _ => Err(Error::Rank {
            path: path.to_path_buf(),
            role: role.into(),
            expected: "a vector (1-D, or 2-D with one row or one column)",
            shape: shape_text(&array.shape),
        }),
    }
}

/// Checks, before any work is done, that `path` names a known format in an existing folder and
/// is not itself a folder, so that a long computation does not end in an unwritable path.
pub fn check_output_path(path: &Path) -> Result<FileFormat> {
    let error = |what: &str| Error::Write {
        path: path.to_path_buf(),
        cause: std::io::Error::other(what.to_string()),
    };
    if path.is_dir() {
        return Err(error("it is a directory"));
    }
    let format = FileFormat::of(path)?;
    let folder = parent_folder(path);
    if !folder.is_dir() {
        return Err(error(&format!(
            "the folder {} does not exist",
            folder.display()
        )));
    }
    Ok(format)
}

/// Writes a matrix; the format follows the extension.
pub fn write_matrix<T: Element>(path: &Path, m: &Matrix<T>) -> Result<()> {
    write_array(path, &[m.rows(), m.cols()], m.as_slice())
}

/// Writes a 1-D array; the format follows the extension (.mtx: an n x 1 column).
pub fn write_vector<T: Element>(path: &Path, v: &[T]) -> Result<()> {
    write_array(path, &[v.len()], v)
}

/// Writes row-major `data` of `shape` to a temporary file beside `path`, then renames it into
/// place (atomic on one file system): on any failure the temporary file is removed and an
/// existing `path` is untouched.
pub fn write_array<T: Element>(path: &Path, shape: &[usize], data: &[T]) -> Result<()> {
    let format = FileFormat::of(path)?;
    let error = |cause: std::io::Error| Error::Write {
        path: path.to_path_buf(),
        cause,
    };
    let folder = parent_folder(path);
    let mut temp = Partial::create(folder, path).map_err(|e| {
        error(std::io::Error::new(
            e.kind(),
            format!("cannot create a file in {}: {e}", folder.display()),
        ))
    })?;
    {
        let mut w = BufWriter::new(&mut temp.file);
        match format {
            FileFormat::Npy => npy::write(&mut w, shape, data),
            FileFormat::MatrixMarket => mtx::write(&mut w, shape, data),
        }
        .and_then(|()| w.flush())
        .map_err(error)?;
    }
    temp.file.sync_all().map_err(error)?;
    temp.rename_to(path).map_err(error)
}

/// A temporary file beside the destination, removed on drop unless renamed into place.
struct Partial {
    path: PathBuf,
    file: std::fs::File,
    renamed: bool,
}

impl Partial {
    /// Creates `.NAME.PID-N.partial` in `folder`, a name no other file has (create_new).
    fn create(folder: &Path, destination: &Path) -> std::io::Result<Self> {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let name = destination
            .file_name()
            .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = folder.join(format!(".{name}.{}-{n}.partial", std::process::id()));
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(file) => {
                    return Ok(Self {
                        path,
                        file,
                        renamed: false,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Renames the file to `destination`, atomically replacing any file there.
    fn rename_to(mut self, destination: &Path) -> std::io::Result<()> {
        std::fs::rename(&self.path, destination)?;
        self.renamed = true;
        Ok(())
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The folder a path lives in ("." for a bare file name).
fn parent_folder(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// "3x4", "5" or "2x3x4": a shape in messages.
pub fn shape_text(shape: &[usize]) -> String {
    if shape.is_empty() {
        return "() (a scalar)".into();
    }
    shape
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_then_read_both_formats() {
        let dir = tempfile::tempdir().unwrap();
        let m = Matrix::from_fn(3, 2, |i, j| (i * 2 + j) as f32 * 0.25 - 1.0);
        for name in ["m.npy", "m.MTX"] {
            let path = dir.path().join(name);
            write_matrix(&path, &m).unwrap();
            assert_eq!(read_matrix(&path, "A").unwrap(), m.to_f64());
        }
        let path = dir.path().join("v.mtx");
        write_vector(&path, &[1.5f64, 2.5]).unwrap();
        assert_eq!(read_vector(&path, "d").unwrap(), vec![1.5, 2.5]);
        // Only the output file is left: no temporaries.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
    }

    #[test]
    fn errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.npy");
        let e = read_matrix(&missing, "A").unwrap_err().to_string();
        assert!(
            e.starts_with("cannot read ") && e.contains("missing.npy"),
            "{e}"
        );

        let v = dir.path().join("v.npy");
        write_vector(&v, &[1.0f32, 2.0]).unwrap();
        let e = read_matrix(&v, "A").unwrap_err().to_string();
        assert!(
            e.contains("v.npy") && e.contains("A must be a 2-D array") && e.contains("shape 2"),
            "{e}"
        );

        let m = dir.path().join("m.npy");
        write_matrix(&m, &Matrix::<f32>::zeros(2, 3)).unwrap();
        let e = read_vector(&m, "d").unwrap_err().to_string();
        assert!(e.contains("shape 2x3"), "{e}");

        let e = read_array(&dir.path().join("x.csv"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("x.csv") && e.contains(".npy"), "{e}");

        let nowhere = dir.path().join("no/such/folder/out.npy");
        let e = check_output_path(&nowhere).unwrap_err().to_string();
        assert!(e.contains("out.npy") && e.contains("does not exist"), "{e}");
        let e = write_vector(&nowhere, &[1.0f32]).unwrap_err().to_string();
        assert!(
            e.starts_with("cannot write") && e.contains("out.npy"),
            "{e}"
        );
        let e = check_output_path(dir.path()).unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
    }

    #[test]
    fn a_failed_rename_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        // A folder (not empty) where the file should go: the data is written, the rename fails.
        let blocked = dir.path().join("out.npy");
        std::fs::create_dir(&blocked).unwrap();
        std::fs::write(blocked.join("inside"), b"x").unwrap();
        let e = write_vector(&blocked, &[1.0f32, 2.0])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("cannot write") && e.contains("out.npy"),
            "{e}"
        );
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.npy")]);
        assert!(blocked.join("inside").exists());
    }
}
