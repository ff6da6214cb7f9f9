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
    if let Err(e) = cli::run(cli::Cli::parse()) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
