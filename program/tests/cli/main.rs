//! The `symraster` program end to end: each command on small files against the CPU reference,
//! bad input's exit status and one-line message, the tuning variables, the batched command,
//! `reproduce` at tiny sizes and the viewer window.

mod batched_cli;
mod cli;
mod cli_tuning;
mod memory_cli;
mod reproduce;
mod viewer_window;
