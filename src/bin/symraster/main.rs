//! The `symraster` program: the command line ([`cli`]), the headless visual debugger
//! ([`debugger`]), its window ([`window`], with the `window` feature) and the paper's
//! reproduction ([`reproduce`]). Everything here is a client of the `symraster` library.

mod cli;
mod debugger;
mod reproduce;
#[cfg(feature = "window")]
mod window;

use clap::Parser;

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    remove_partial_files_on_signals();
    if let Err(e) = cli::run(cli::Cli::parse()) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

/// On SIGINT or SIGTERM, removes the temporary file of any write under way (outputs are
/// written whole or not at all) and exits with status 128 + the signal (130, 143), as a
/// shell does.
fn remove_partial_files_on_signals() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    match signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) {
        Ok(mut signals) => {
            std::thread::spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    symraster::io::remove_partial_files();
                    std::process::exit(128 + signal);
                }
            });
        }
        Err(e) => log::warn!(
            "cannot watch for SIGINT/SIGTERM ({e}); an interrupted write may leave a .partial file"
        ),
    }
}
