//! The examples of use (examples/), each run as a test.

#[path = "../../examples/solve.rs"]
mod solve;

#[path = "../../examples/least_squares.rs"]
mod least_squares;

#[path = "../../examples/batched.rs"]
mod batched;

#[test]
fn solve_example_runs() {
    solve::main().unwrap();
}

#[test]
fn least_squares_example_runs() {
    least_squares::main().unwrap();
}

#[test]
fn batched_example_runs() {
    batched::main().unwrap();
}
