//! The `symraster` program: the command line ([`cli`]), the headless visual debugger
//! ([`debugger`]), its window (`cli::view::window`, with the `window` feature) and the paper's
//! reproduction ([`reproduce`]). Everything here is a client of the `symraster` library.

/// `println!` that never panics: see [`cli::print`].
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::cli::print::line(format_args!($($arg)*))
    };
}

mod cli;
// Parts of the debugger only the window uses go unused without it.
#[cfg_attr(not(feature = "window"), allow(dead_code, unused_imports))]
mod debugger;
mod reproduce;

use clap::Parser;

fn main() {
    // By default only errors are logged, so that a failing command prints its one error line
    // and nothing before it (what the library notes on the way, such as the solver's f64
    // fallback, is in the command's report or its error); the reproduction's own notes stay
    // visible. RUST_LOG=warn (or info, debug) shows the rest.
    env_logger::Builder::from_env(
        env_logger::Env::default().default_filter_or("error,symraster::reproduce=warn"),
    )
    .init();
    remove_partial_files_on_signals();
    let result = cli::run(cli::Cli::parse());
    // A report that could not be printed (stdout full) is an error, after the output is in
    // place; a closed pipe is not.
    let result = result.and_then(|()| match cli::print::failure() {
        Some(e) => Err(anyhow::anyhow!("cannot write to standard output: {e}")),
        None => Ok(()),
    });
    if let Err(e) = result {
        cli::print::stderr_line(format_args!("error: {e:#}"));
        std::process::exit(1);
    }
}

/// On SIGINT, SIGTERM, SIGHUP (the terminal closed) or SIGQUIT (Ctrl-\\), removes the
/// temporary file of any write under way and the staged outputs not yet renamed into place
/// (outputs are written whole or not at all) and exits with status 128 + the signal (130, 143,
/// 129, 131), as a shell does, without running at-exit hooks. SIGQUIT's core dump is given
/// up for that: a core of this program says nothing a backtrace of the error would not.
fn remove_partial_files_on_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    match signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP, SIGQUIT]) {
        Ok(mut signals) => {
            std::thread::spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    // Held until the exit: no set of outputs is committed after this.
                    let _staged = cli::output::remove_staged_files();
                    symraster::io::remove_partial_files();
                    // _exit: no at-exit hooks. The main thread may still be in the GL driver,
                    // whose own exit hooks would tear it down under that thread (a crash
                    // instead of 128 + signal).
                    signal_hook::low_level::exit(128 + signal);
                }
            });
        }
        Err(e) => log::warn!(
            "cannot watch for SIGINT/SIGTERM/SIGHUP/SIGQUIT ({e}); an interrupted write may \
             leave a temporary file"
        ),
    }
}
