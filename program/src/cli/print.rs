//! Everything the program prints on stdout goes through [`line`] (the `say!` macro): unlike
//! `println!`, it never panics. A closed pipe (`| head`, `| true`) is ignored, the reader having
//! gone; any other failure (`> /dev/full`) is kept and reported once, as the program's one-line
//! error, after the output files are in place ([`failure`]).

use std::io::Write;
use std::sync::Mutex;

/// The first failure to write stdout other than a closed pipe.
static FAILURE: Mutex<Option<std::io::Error>> = Mutex::new(None);

/// Writes one line to stdout, flushed; a failure is kept, not raised.
pub fn line(args: std::fmt::Arguments) {
    let mut out = std::io::stdout().lock();
    let written = out
        .write_fmt(args)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    if let Err(e) = written
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        FAILURE
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(e);
    }
}

/// The first failure to write stdout (not a closed pipe), if any.
pub fn failure() -> Option<std::io::Error> {
    FAILURE.lock().unwrap_or_else(|p| p.into_inner()).take()
}

/// Writes one line to stderr; a failure there has nowhere to be reported and is ignored.
pub fn stderr_line(args: std::fmt::Arguments) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.write_all(b"\n"));
}
