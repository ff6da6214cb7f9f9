//! Reading and writing matrices and vectors as NumPy `.npy` or Matrix Market `.mtx` files.
//!
//! The file's extension picks the format. Readers take float32 or float64 data (C or Fortran
//! order for .npy; dense arrays or sparse coordinate lists, real, integer or pattern, general,
//! symmetric or skew-symmetric, for .mtx) and widen it to f64;
//! anything else is a typed [`Error`] that names the file and what was wrong. Writers go
//! through a temporary file in the destination's folder that is renamed into place, so a
//! failed write never leaves a partial file and never clobbers an existing one.

pub mod mtx;
pub mod npy;

use crate::matrix::Matrix;
use crate::memory::OutOfMemory;
use std::fmt;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A file format, chosen by extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileFormat {
    /// NumPy `.npy`.
    Npy,
    /// Matrix Market `.mtx`: dense array or sparse coordinate form (read into dense storage).
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
    /// The file is well formed but uses a form symraster does not read; the message says
    /// what to do instead.
    #[error("{0}")]
    Unsupported(String),
    /// The values the file declares do not fit in memory.
    #[error(transparent)]
    OutOfMemory(#[from] OutOfMemory),
}

/// An error reading or writing a file; each names the file (on one line: see
/// [`display_path`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be read at all.
    #[error("cannot read {}: {cause}", display_path(path))]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        cause: std::io::Error,
    },
    /// The path names something other than a regular file (a FIFO, a device, a folder), which
    /// could block or never end.
    #[error("cannot read {}: it is {kind}, not a regular file", display_path(path))]
    NotAFile {
        /// The file.
        path: PathBuf,
        /// What the path names instead.
        kind: &'static str,
    },
    /// The file's bytes are not a valid file of its format.
    #[error("{}: not a valid {format} file: {detail}", display_path(path))]
    Malformed {
        /// The file.
        path: PathBuf,
        /// The format its extension names.
        format: FileFormat,
        /// What is wrong, or what is not read.
        detail: String,
    },
    /// The file is well formed but holds a type symraster does not take.
    #[error(
        "{}: {what} is not supported; symraster reads real float32 or float64 values",
        display_path(path)
    )]
    UnsupportedType {
        /// The file.
        path: PathBuf,
        /// The type found.
        what: String,
    },
    /// The file is well formed but in a form symraster does not read.
    #[error("{}: {detail}", display_path(path))]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// What is wrong, or what is not read.
        detail: String,
    },
    /// The array has the wrong number of dimensions for its role.
    #[error(
        "{}: {role} must be {expected}, but the file holds an array of shape {shape}",
        display_path(path)
    )]
    Rank {
        /// The file.
        path: PathBuf,
        /// The input's role (A, d, b, C).
        role: String,
        /// The shape the role needs.
        expected: &'static str,
        /// The shape the file holds.
        shape: String,
    },
    /// The extension names no format we read or write.
    #[error(
        "{}: unknown file type; use the extension .npy (NumPy) or .mtx (Matrix Market)",
        display_path(path)
    )]
    Extension {
        /// The file.
        path: PathBuf,
    },
    /// The output could not be written.
    #[error("cannot write {}: {cause}", display_path(path))]
    Write {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        cause: std::io::Error,
    },
    /// The shape the file declares is not one the caller's operation takes (a `_checked`
    /// reader's check, run before the values are read): the caller's error, as it is.
    #[error(transparent)]
    Shape(crate::Error),
    /// Not enough memory for the file's bytes or its values (the message names the file).
    #[error("{cause}")]
    OutOfMemory {
        /// The file.
        path: PathBuf,
        /// What could not be allocated, and its size.
        cause: OutOfMemory,
    },
}

/// A path for a one-line message: as it is when printable, else quoted with its control
/// characters (a newline, an escape) written as escapes, so a message stays one line and a
/// terminal shows what the name really holds.
pub fn display_path(path: &Path) -> String {
    let text = path.to_string_lossy();
    if text.chars().any(char::is_control) {
        format!("{text:?}")
    } else {
        text.into_owned()
    }
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
    read_array_checked(path, &|_| Ok(()))
}

/// A caller's check of the shape a file declares (its dimensions, outermost first), run by the
/// `_checked` readers before anything is allocated for the values: an operation refuses the
/// shapes it cannot take (a C that is not square, a d of the wrong length) at the cost of the
/// file's header, not of the dense matrix a few bytes can declare. Its error comes back as
/// [`Error::Shape`].
pub type ShapeCheck<'a> = &'a dyn Fn(&[usize]) -> crate::Result<()>;

/// [`read_array`], with `check` run on the declared shape before the values are allocated.
pub fn read_array_checked(path: &Path, check: ShapeCheck<'_>) -> Result<Array> {
    read_array_with(path, &|shape| check(shape).map_err(Error::Shape))
}

/// [`read_array`], with `check` run on the declared shape before the values are allocated;
/// its error is returned as it is.
fn read_array_with(path: &Path, check: &dyn Fn(&[usize]) -> Result<()>) -> Result<Array> {
    let format = FileFormat::of(path)?;
    let bytes = read_regular_file(path)?;
    let (parsed, refused) = hooked(check, |hook| match format {
        FileFormat::Npy => npy::parse_checked(&bytes, hook),
        FileFormat::MatrixMarket => mtx::parse_checked(&bytes, hook),
    });
    parsed.map_err(|e| refused.unwrap_or_else(|| parse_error(path, format, e)))
}

/// Runs a parser with a shape hook that calls `check` and, where it refuses, keeps its error
/// (the parser sees its message): what the parser returned, and the refusal if there was one.
fn hooked<R>(
    check: &dyn Fn(&[usize]) -> Result<()>,
    parse: impl FnOnce(&mut dyn FnMut(&[usize]) -> Result<(), ParseError>) -> R,
) -> (R, Option<Error>) {
    let mut refused = None;
    let parsed = parse(&mut |shape: &[usize]| {
        check(shape).map_err(|e| {
            let message = e.to_string();
            refused = Some(e);
            ParseError::Unsupported(message)
        })
    });
    (parsed, refused)
}

/// A reader's complaint about the file at `path`.
fn parse_error(path: &Path, format: FileFormat, e: ParseError) -> Error {
    match e {
        ParseError::Malformed(detail) => Error::Malformed {
            path: path.to_path_buf(),
            format,
            detail,
        },
        ParseError::UnsupportedType(what) => Error::UnsupportedType {
            path: path.to_path_buf(),
            what,
        },
        ParseError::Unsupported(detail) => Error::Unsupported {
            path: path.to_path_buf(),
            detail,
        },
        ParseError::OutOfMemory(cause) => out_of_memory(path, cause),
    }
}

/// No memory for `cause.what` of the file at `path`, named so.
fn out_of_memory(path: &Path, cause: OutOfMemory) -> Error {
    Error::OutOfMemory {
        path: path.to_path_buf(),
        cause: OutOfMemory {
            what: format!("{} of {}", cause.what, display_path(path)),
            bytes: cause.bytes,
        },
    }
}

/// A regular file opened for reading, with its length. Anything else is refused before it is
/// opened: opening a FIFO with no writer blocks forever, and a character device (/dev/zero)
/// never ends.
fn open_regular_file(path: &Path) -> Result<(std::fs::File, u64)> {
    let read_error = |cause| Error::Read {
        path: path.to_path_buf(),
        cause,
    };
    let metadata = std::fs::metadata(path).map_err(read_error)?;
    if !metadata.is_file() {
        return Err(Error::NotAFile {
            path: path.to_path_buf(),
            kind: file_kind(&metadata.file_type()),
        });
    }
    let file = std::fs::File::open(path).map_err(read_error)?;
    Ok((file, metadata.len()))
}

/// The bytes of a regular file ([`open_regular_file`]).
fn read_regular_file(path: &Path) -> Result<Vec<u8>> {
    let read_error = |cause| Error::Read {
        path: path.to_path_buf(),
        cause,
    };
    let (mut file, len) = open_regular_file(path)?;
    // Read no more than the size it had when checked (plus one byte, to notice growth).
    let capacity = usize::try_from(len).unwrap_or(usize::MAX);
    let mut bytes = crate::memory::with_capacity(capacity, || format!("the {len} bytes"))
        .map_err(|cause| out_of_memory(path, cause))?;
    std::io::Read::read_to_end(&mut std::io::Read::take(&mut file, len + 1), &mut bytes)
        .map_err(read_error)?;
    Ok(bytes)
}

/// What kind of thing a non-regular path is, for messages.
fn file_kind(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Reads a 2-D array as a matrix; `role` names it in errors ("A").
pub fn read_matrix(path: &Path, role: &str) -> Result<Matrix<f64>> {
    read_matrix_checked(path, role, &|_, _| Ok(()))
}

/// [`read_matrix`], with `check(rows, cols)` run on the shape the file declares before the
/// matrix is allocated (see [`ShapeCheck`]); an array that is not 2-D is refused then too.
pub fn read_matrix_checked(
    path: &Path,
    role: &str,
    check: &dyn Fn(usize, usize) -> crate::Result<()>,
) -> Result<Matrix<f64>> {
    let array = read_array_with(path, &matrix_check(path, role, check))?;
    let [rows, cols] = array.shape[..] else {
        unreachable!("the check refuses every shape but a matrix's")
    };
    Ok(
        Matrix::from_row_major(rows, cols, array.data)
            .expect("the readers return rows*cols values"),
    )
}

/// The check of [`read_matrix_checked`]: a 2-D shape ([`Error::Rank`] otherwise), then the
/// caller's.
fn matrix_check<'a>(
    path: &'a Path,
    role: &'a str,
    check: &'a dyn Fn(usize, usize) -> crate::Result<()>,
) -> impl Fn(&[usize]) -> Result<()> + 'a {
    move |shape| match shape[..] {
        [rows, cols] => check(rows, cols).map_err(Error::Shape),
        _ => Err(rank_error(path, role, MATRIX, shape)),
    }
}

/// What a matrix's role needs.
const MATRIX: &str = "a 2-D array (a matrix)";

/// What a vector's role needs.
const VECTOR: &str = "a vector (1-D, or 2-D with one row or one column)";

fn rank_error(path: &Path, role: &str, expected: &'static str, shape: &[usize]) -> Error {
    Error::Rank {
        path: path.to_path_buf(),
        role: role.into(),
        expected,
        shape: shape_text(shape),
    }
}

/// A matrix read straight into float32 ([`read_matrix_f32`]), and the first value (row-major)
/// that float32 cannot hold, if any: the caller names it (NaN, ±inf, or a finite float64
/// beyond float32's range) after its own shape checks.
#[derive(Debug)]
pub struct SingleMatrix {
    /// The values rounded to float32 (an unfit value becomes ±inf or NaN).
    pub matrix: Matrix<f32>,
    /// The row-major index and the value as the file holds it.
    pub first_unfit: Option<(usize, f64)>,
}

/// Reads a 2-D array straight into float32, for a computation in float32: a .npy file is
/// decoded a chunk at a time, so neither its bytes nor a float64 copy are held whole (the
/// peak is the float32 matrix; a .mtx file is parsed as text first, then narrowed). With
/// `lower_only`, entries above the diagonal are zero and not checked.
pub fn read_matrix_f32(path: &Path, role: &str, lower_only: bool) -> Result<SingleMatrix> {
    read_matrix_f32_checked(path, role, lower_only, &|_, _| Ok(()))
}

/// [`read_matrix_f32`], with `check(rows, cols)` run on the shape the file declares before
/// the matrix is allocated (see [`ShapeCheck`]).
pub fn read_matrix_f32_checked(
    path: &Path,
    role: &str,
    lower_only: bool,
    check: &dyn Fn(usize, usize) -> crate::Result<()>,
) -> Result<SingleMatrix> {
    let format = FileFormat::of(path)?;
    if format == FileFormat::MatrixMarket {
        let m = read_matrix_checked(path, role, check)?;
        let (rows, cols) = m.shape();
        let mut first_unfit = None;
        let values = m.as_slice().iter().enumerate().map(|(at, &v)| {
            let (i, j) = (at / cols, at % cols);
            if lower_only && j > i {
                return 0.0;
            }
            if first_unfit.is_none() && (!v.is_finite() || v.abs() > f64::from(f32::MAX)) {
                first_unfit = Some((at, v));
            }
            v as f32
        });
        let data = crate::memory::collect(values, || format!("the {rows}x{cols} matrix (float32)"))
            .map_err(|cause| out_of_memory(path, cause))?;
        let matrix = Matrix::from_row_major(rows, cols, data).expect("rows*cols values");
        return Ok(SingleMatrix {
            matrix,
            first_unfit,
        });
    }
    let (mut file, len) = open_regular_file(path)?;
    let mut reader = std::io::BufReader::with_capacity(1 << 16, &mut file);
    let (read, refused) = hooked(&matrix_check(path, role, check), |hook| {
        npy::read_f32_checked(&mut reader, len, lower_only, hook)
    });
    match read {
        Ok(n) => Ok(SingleMatrix {
            matrix: Matrix::from_row_major(n.rows, n.cols, n.data).expect("rows*cols values"),
            first_unfit: n.first_unfit,
        }),
        Err(_) if refused.is_some() => Err(refused.expect("a refusal")),
        Err(npy::ReadError::Parse(e)) => Err(parse_error(path, format, e)),
        Err(npy::ReadError::Rank(shape)) => Err(rank_error(path, role, MATRIX, &shape)),
        Err(npy::ReadError::Io(cause)) => Err(Error::Read {
            path: path.to_path_buf(),
            cause,
        }),
    }
}

/// Reads a vector: a 1-D array, or a 2-D array with one row or one column.
pub fn read_vector(path: &Path, role: &str) -> Result<Vec<f64>> {
    read_vector_checked(path, role, &|_| Ok(()))
}

/// [`read_vector`], with `check(len)` run on the length the file declares before the vector
/// is allocated (see [`ShapeCheck`]); an array that is no vector is refused then too.
pub fn read_vector_checked(
    path: &Path,
    role: &str,
    check: &dyn Fn(usize) -> crate::Result<()>,
) -> Result<Vec<f64>> {
    let vector = |shape: &[usize]| match shape[..] {
        [n] => check(n).map_err(Error::Shape),
        [r, c] if r <= 1 || c <= 1 => check(r * c).map_err(Error::Shape),
        _ => Err(rank_error(path, role, VECTOR, shape)),
    };
    Ok(read_array_with(path, &vector)?.data)
}

/// Checks, before any work is done, that `path` names a known format in an existing folder and
/// is not itself a folder, that the folder takes new files and that the file system takes a
/// name as long as its own (a probe file of that length is made and removed), so that a long
/// computation does not end in an unwritable path.
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
            display_path(folder)
        )));
    }
    let name_len = path.file_name().map_or(0, |n| n.len());
    Partial::create(folder, name_len).map_err(|e| create_error(path, folder, name_len, e))?;
    Ok(format)
}

/// Why no file could be made in `folder` for `path`, naming an over-long name as such.
fn create_error(path: &Path, folder: &Path, name_len: usize, e: std::io::Error) -> Error {
    let cause = if e.kind() == std::io::ErrorKind::InvalidFilename {
        std::io::Error::new(
            e.kind(),
            format!("its name ({name_len} bytes) is too long for the file system ({e})"),
        )
    } else {
        std::io::Error::new(
            e.kind(),
            format!("cannot create a file in {}: {e}", display_path(folder)),
        )
    };
    Error::Write {
        path: path.to_path_buf(),
        cause,
    }
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
    write_atomically(path, |w| match format {
        FileFormat::Npy => npy::write(&mut { w }, shape, data),
        FileFormat::MatrixMarket => mtx::write(&mut { w }, shape, data),
    })
}

/// Writes a file whole or not at all: `fill` writes into a temporary file in the same folder,
/// which is then renamed into place; on any failure the temporary file is removed and an
/// existing file at `path` is left untouched. A replaced file keeps its permission bits.
pub fn write_atomically(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let error = |cause: std::io::Error| Error::Write {
        path: path.to_path_buf(),
        cause,
    };
    let folder = parent_folder(path);
    let mut temp = Partial::create(folder, 0).map_err(|e| create_error(path, folder, 0, e))?;
    {
        let mut w = BufWriter::new(&mut temp.file);
        fill(&mut w).and_then(|()| w.flush()).map_err(error)?;
    }
    // A replaced file keeps its permission bits (a new one has the umask's).
    if let Ok(old) = std::fs::metadata(path)
        && old.is_file()
    {
        temp.file
            .set_permissions(old.permissions())
            .map_err(error)?;
    }
    temp.file.sync_all().map_err(error)?;
    temp.rename_to(path).map_err(error)
}

/// The temporary files being written now, so that a signal handler can remove them.
static PARTIALS: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Removes the temporary files of writes still in progress. For a program's
/// SIGINT/SIGTERM/SIGHUP handler, just before it exits: an interrupted write then leaves nothing behind (the
/// destination, if it existed, is untouched). Writes still running afterwards fail.
pub fn remove_partial_files() {
    remove_partial_files_where(|_| true);
}

fn remove_partial_files_where(select: impl Fn(&Path) -> bool) {
    let mut partials = PARTIALS.lock().unwrap_or_else(|e| e.into_inner());
    partials.retain(|path| {
        if select(path) {
            let _ = std::fs::remove_file(path);
            false
        } else {
            true
        }
    });
}

fn forget_partial(path: &Path) {
    let mut partials = PARTIALS.lock().unwrap_or_else(|e| e.into_inner());
    partials.retain(|p| p != path);
}

/// A temporary file beside the destination, removed on drop unless renamed into place.
struct Partial {
    path: PathBuf,
    file: std::fs::File,
    renamed: bool,
}

impl Partial {
    /// Creates `.sr-PID-N.tmp` in `folder`, a name no other file has (create_new), short so
    /// that any name the destination may have leaves room for it; padded with `x` to `len`
    /// bytes when that is longer (a probe of whether the file system takes such a name).
    fn create(folder: &Path, len: usize) -> std::io::Result<Self> {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let mut name = format!(".sr-{}-{n}", std::process::id());
            let pad = len.saturating_sub(name.len() + 4);
            name.extend(std::iter::repeat_n('x', pad));
            name.push_str(".tmp");
            let path = folder.join(name);
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(file) => {
                    PARTIALS
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(path.clone());
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
        forget_partial(&self.path);
        Ok(())
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = std::fs::remove_file(&self.path);
            forget_partial(&self.path);
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
    fn declared_shapes_are_checked_before_allocation_and_no_memory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        // 66 bytes declaring a 1 x 150,000,000 matrix: a caller that needs a square matrix
        // refuses it, with its own error, before the dense matrix exists.
        let hostile = dir.path().join("c.mtx");
        let text = "%%MatrixMarket matrix coordinate real general\n1 150000000 1\n1 1 1\n";
        std::fs::write(&hostile, text).unwrap();
        let square = |r: usize, c: usize| {
            if r == c {
                Ok(())
            } else {
                Err(crate::Error::shape(format!(
                    "C must be square, but is {r}x{c}"
                )))
            }
        };
        for e in [
            read_matrix_checked(&hostile, "C", &square).unwrap_err(),
            read_matrix_f32_checked(&hostile, "C", true, &square).unwrap_err(),
        ] {
            assert!(matches!(e, Error::Shape(_)), "{e:?}");
            assert_eq!(
                e.to_string(),
                "shape mismatch: C must be square, but is 1x150000000"
            );
        }
        // A vector of the wrong declared length, and a matrix where a vector is needed.
        let v = dir.path().join("v.npy");
        write_vector(&v, &[1.0f32, 2.0, 3.0]).unwrap();
        let three = |len: usize| {
            if len == 2 {
                Ok(())
            } else {
                Err(crate::Error::shape(format!("d needs 2 entries, has {len}")))
            }
        };
        let e = read_vector_checked(&v, "d", &three)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "shape mismatch: d needs 2 entries, has 3");
        let e = read_matrix_f32_checked(&v, "C", false, &|_, _| Ok(())).unwrap_err();
        assert!(e.to_string().contains("C must be a 2-D array"), "{e}");
        // A size no memory holds (2^63 bytes as float64): a one-line error naming the file.
        let huge = dir.path().join("huge.mtx");
        std::fs::write(
            &huge,
            "%%MatrixMarket matrix coordinate real general\n1 1152921504606846976 1\n1 1 1\n",
        )
        .unwrap();
        for e in [
            read_matrix(&huge, "A").unwrap_err(),
            read_matrix_f32(&huge, "A", false).unwrap_err(),
        ] {
            let text = e.to_string();
            assert!(matches!(e, Error::OutOfMemory { .. }), "{e:?}");
            assert!(
                text.starts_with("not enough memory for the 1x1152921504606846976 matrix")
                    && text.contains("huge.mtx")
                    && !text.contains('\n'),
                "{text}"
            );
        }
    }

    #[test]
    fn special_files_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_matrix(dir.path(), "A");
        // A folder named like a file.
        let folder = dir.path().join("folder.npy");
        std::fs::create_dir(&folder).unwrap();
        let e2 = read_matrix(&folder, "A").unwrap_err().to_string();
        assert!(e.is_err());
        assert!(e2.contains("it is a directory, not a regular file"), "{e2}");
        #[cfg(unix)]
        {
            // A FIFO with no writer: opening it would block forever.
            let fifo = dir.path().join("pipe.npy");
            let made = std::process::Command::new("mkfifo").arg(&fifo).status();
            assert!(made.is_ok_and(|s| s.success()), "mkfifo");
            let e = read_matrix(&fifo, "A").unwrap_err().to_string();
            assert!(e.contains("FIFO"), "{e}");
            // A character device behind a .npy name (a symlink to /dev/zero).
            let zero = dir.path().join("zero.npy");
            std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
            let e = read_matrix(&zero, "A").unwrap_err().to_string();
            assert!(e.contains("a character device"), "{e}");
        }
    }

    #[test]
    fn paths_with_control_characters_stay_on_one_line() {
        let e = read_matrix(Path::new("/no/such\nfile.npy"), "A")
            .unwrap_err()
            .to_string();
        assert!(!e.contains('\n') && e.contains("such\\nfile"), "{e}");
    }

    #[test]
    fn interrupted_writes_leave_no_partial_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.npy");
        let e = write_atomically(&out, |w| {
            w.write_all(b"half")?;
            // The write's temporary file is registered while it is under way...
            let here = |p: &Path| p.starts_with(dir.path());
            assert_eq!(
                PARTIALS.lock().unwrap().iter().filter(|p| here(p)).count(),
                1
            );
            // ...and a SIGINT handler removes it (only this test's, as others run beside it).
            remove_partial_files_where(here);
            Ok(())
        });
        assert!(e.is_err(), "the write cannot finish once its file is gone");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let left = PARTIALS
            .lock()
            .unwrap()
            .iter()
            .any(|p| p.starts_with(dir.path()));
        assert!(!left);
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
