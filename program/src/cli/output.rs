//! The commands' outputs: every path checked before any work, and every file written whole or
//! not at all, all of a command's outputs together.
//!
//! [`check`] refuses, besides what the library's `check_output_path` refuses, a path that names
//! something other than a regular file (a FIFO, a device, a socket): an output is written
//! through a temporary file renamed into place, which would replace the FIFO or device node
//! by a regular file. [`Outputs`] stages several outputs as temporary files beside their
//! destinations and renames them into place only once every one is written, so that a command
//! with two outputs (`batched -o … --info …`) leaves both or neither. A staged file is removed
//! on any failure, and by the signal handler ([`remove_staged_files`]).

use anyhow::{Result, bail};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use symraster::io::{self, Element, FileFormat};

/// Checks an output path before any work: a regular file or nothing yet at `path` (a FIFO or a
/// device is refused, so that it is never replaced), then the library's checks (a known
/// extension, an existing folder that takes a file of that name).
pub fn check(path: &Path) -> Result<FileFormat> {
    if let Ok(metadata) = std::fs::metadata(path)
        && !metadata.is_file()
        && !metadata.is_dir()
    {
        return Err(io::Error::Write {
            path: path.to_path_buf(),
            cause: std::io::Error::other(format!(
                "it is {}, not a regular file (outputs are written to a regular file, through \
                 a temporary file renamed into place)",
                special_kind(&metadata.file_type())
            )),
        }
        .into());
    }
    Ok(io::check_output_path(path)?)
}

/// Checks two outputs of one command (each by [`check`]) and that they are not the same file.
pub fn check_distinct(first: (&str, &Path), second: (&str, &Path)) -> Result<()> {
    check(first.1)?;
    check(second.1)?;
    if same_destination(first.1, second.1) {
        bail!(
            "{} and {} name the same file ({}); give each output its own path",
            first.0,
            second.0,
            io::display_path(second.1)
        );
    }
    Ok(())
}

/// Whether two paths name the same file: the same name in the same folder (after following
/// the folders' links), or one file under two names.
fn same_destination(a: &Path, b: &Path) -> bool {
    let key = |p: &Path| {
        let folder = std::fs::canonicalize(parent_folder(p)).ok()?;
        Some(folder.join(p.file_name()?))
    };
    if let (Some(ka), Some(kb)) = (key(a), key(b))
        && ka == kb
    {
        return true;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return ma.dev() == mb.dev() && ma.ino() == mb.ino();
        }
    }
    false
}

/// What a path that is neither a regular file nor a folder names, for messages.
fn special_kind(kind: &std::fs::FileType) -> &'static str {
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
    let _ = kind;
    "a special file"
}

/// The folder a path lives in ("." for a bare file name).
fn parent_folder(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// The staged files of every [`Outputs`] not yet committed, for the signal handler. Staging a
/// file and committing a set hold the lock, so a signal never finds a set half committed.
static STAGED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn staged() -> MutexGuard<'static, Vec<PathBuf>> {
    STAGED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes the staged files of outputs not yet committed. For the signal handler, just before
/// the program exits: the lock stays held, so no set is committed after it.
pub fn remove_staged_files() -> MutexGuard<'static, Vec<PathBuf>> {
    let mut files = staged();
    for path in files.drain(..) {
        let _ = std::fs::remove_file(path);
    }
    files
}

/// One output written to a temporary file beside its destination.
struct Staged {
    temp: PathBuf,
    destination: PathBuf,
}

/// A command's outputs, each written to a temporary file beside its destination and all
/// renamed into place by [`Outputs::commit`]; dropped uncommitted, they are removed and no
/// destination is touched.
#[derive(Default)]
pub struct Outputs {
    files: Vec<Staged>,
}

impl Outputs {
    pub fn new() -> Self {
        Self::default()
    }

    /// Stages row-major `data` of `shape` for `path`, in the format its extension names.
    pub fn array<T: Element>(&mut self, path: &Path, shape: &[usize], data: &[T]) -> Result<()> {
        let format = FileFormat::of(path)?;
        self.stage(path, |w| match format {
            FileFormat::Npy => io::npy::write(&mut { w }, shape, data),
            FileFormat::MatrixMarket => io::mtx::write(&mut { w }, shape, data),
        })
    }

    /// Stages the bytes `fill` writes for `path`. A replaced file keeps its permission bits.
    pub fn stage(
        &mut self,
        path: &Path,
        fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<()> {
        let error = |cause: std::io::Error| io::Error::Write {
            path: path.to_path_buf(),
            cause,
        };
        let folder = parent_folder(path);
        let (temp, mut file) = create_staged(folder).map_err(|e| {
            error(std::io::Error::new(
                e.kind(),
                format!("cannot create a file in {}: {e}", io::display_path(folder)),
            ))
        })?;
        // Owned from here: removed on drop unless committed.
        self.files.push(Staged {
            temp,
            destination: path.to_path_buf(),
        });
        {
            let mut w = BufWriter::new(&mut file);
            fill(&mut w).and_then(|()| w.flush()).map_err(error)?;
        }
        if let Ok(old) = std::fs::metadata(path)
            && old.is_file()
        {
            file.set_permissions(old.permissions()).map_err(error)?;
        }
        file.sync_all().map_err(error)?;
        Ok(())
    }

    /// Renames every staged file into place. Should a rename fail, the outputs this call
    /// already put in place are undone (a file they replaced is put back where the file
    /// system takes a second link to it, else they are removed) and the rest are not touched.
    pub fn commit(mut self) -> Result<()> {
        let mut registry = staged();
        let files = std::mem::take(&mut self.files);
        // A second name for each file about to be replaced (when there are several outputs),
        // to put back should a later rename fail.
        let backups: Vec<Option<PathBuf>> = files
            .iter()
            .map(|f| {
                let replaced = std::fs::symlink_metadata(&f.destination).is_ok_and(|m| m.is_file());
                (files.len() > 1 && replaced)
                    .then(|| link_backup(&f.destination))
                    .flatten()
            })
            .collect();
        let mut failure = None;
        for (i, file) in files.iter().enumerate() {
            if let Err(cause) = std::fs::rename(&file.temp, &file.destination) {
                for (done, backup) in files[..i].iter().zip(&backups) {
                    let restored = backup
                        .as_ref()
                        .is_some_and(|b| std::fs::rename(b, &done.destination).is_ok());
                    if !restored {
                        let _ = std::fs::remove_file(&done.destination);
                    }
                }
                for left in &files[i..] {
                    let _ = std::fs::remove_file(&left.temp);
                }
                failure = Some(io::Error::Write {
                    path: file.destination.clone(),
                    cause,
                });
                break;
            }
        }
        for backup in backups.iter().flatten() {
            let _ = std::fs::remove_file(backup);
        }
        registry.retain(|p| !files.iter().any(|f| &f.temp == p));
        match failure {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }
}

/// A hard link to `path` beside it (`.sr-PID-bN.tmp`), or None where the file system takes
/// none.
fn link_backup(path: &Path) -> Option<PathBuf> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let backup = parent_folder(path).join(format!(".sr-{}-b{n}.tmp", std::process::id()));
    std::fs::hard_link(path, &backup).ok().map(|()| backup)
}

impl Drop for Outputs {
    fn drop(&mut self) {
        if self.files.is_empty() {
            return;
        }
        let mut registry = staged();
        for file in &self.files {
            let _ = std::fs::remove_file(&file.temp);
        }
        registry.retain(|p| !self.files.iter().any(|f| &f.temp == p));
    }
}

/// Creates `.sr-PID-oN.tmp` in `folder` (a name no other file has), registered for the
/// signal handler before the lock is released.
fn create_staged(folder: &Path) -> std::io::Result<(PathBuf, File)> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let mut registry = staged();
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = folder.join(format!(".sr-{}-o{n}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => {
                registry.push(path.clone());
                return Ok((path, file));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => {}
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rename that fails at commit (the second destination became a folder) undoes the
    /// first: the file it replaced is back, and no staged or backup file is left.
    #[test]
    fn a_failed_commit_puts_back_what_it_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let (first, second) = (dir.path().join("x.npy"), dir.path().join("info.npy"));
        std::fs::write(&first, b"before").unwrap();
        let mut outputs = Outputs::new();
        outputs.array(&first, &[2], &[1.0f64, 2.0]).unwrap();
        outputs.stage(&second, |w| w.write_all(b"info")).unwrap();
        std::fs::create_dir(&second).unwrap();
        std::fs::write(second.join("inside"), b"").unwrap();
        let e = outputs.commit().unwrap_err().to_string();
        assert!(e.contains("cannot write") && e.contains("info.npy"), "{e}");
        assert_eq!(std::fs::read(&first).unwrap(), b"before");
        let mut names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["info.npy", "x.npy"]);
        assert!(staged().is_empty());
        // Without the obstacle, both are written.
        std::fs::remove_dir_all(&second).unwrap();
        let mut outputs = Outputs::new();
        outputs.array(&first, &[2], &[1.0f64, 2.0]).unwrap();
        outputs.stage(&second, |w| w.write_all(b"info")).unwrap();
        outputs.commit().unwrap();
        assert_eq!(io::read_vector(&first, "x").unwrap(), [1.0, 2.0]);
        assert_eq!(std::fs::read(&second).unwrap(), b"info");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
