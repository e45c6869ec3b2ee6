"""Benchmarks and validation studies of catena_zero, run from the repository root as
`python -m benchmarks.NAME` (see benchmarks/README.md). They import the installed package,
and each other as `benchmarks.NAME`; the package never imports them."""
