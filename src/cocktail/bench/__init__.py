"""The benchmark harness behind ``cocktail bench``.

Until the GPU harness lands this runs the CPU reference executor on small built-in
matrices (or matrix files) and reports time, GFLOP/s, padding and bytes per SpMV.
"""
