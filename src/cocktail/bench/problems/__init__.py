"""Benchmark problems: the suites, their generators and the matrices named after papers."""
