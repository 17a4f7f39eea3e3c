//! Hand evaluator benchmarks (filled in below).
fn main() {}
