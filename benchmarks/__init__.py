"""Benchmarks (not tests): each module here has main(argv) and prints what it measured, on what input."""
