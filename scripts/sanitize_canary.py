"""A kernel with one known fault per compute-sanitizer tool, to prove the tool (and its kernel filter) sees it.

``scripts/sanitize.sh`` runs ``compute-sanitizer --tool TOOL python scripts/sanitize_canary.py TOOL``
before the test suite and requires the tool to report an error: a run that reports nothing on the
test suite then means the kernels were checked and are clean, not that nothing was instrumented.
The kernels are named ``cocktail_canary_*`` so that the filter of Cocktail's kernels matches them.
"""

from __future__ import annotations

import sys

import cupy

SOURCE = r"""
extern "C" __global__ void cocktail_canary_memcheck(float* a, int n) {
    a[n + threadIdx.x] = 1.0f;  // past the end of a's n floats
}

extern "C" __global__ void cocktail_canary_racecheck(int* out) {
    __shared__ int shared;
    shared = threadIdx.x;  // every thread writes the same word: a write-write hazard
    __syncthreads();
    out[threadIdx.x] = shared;
}

extern "C" __global__ void cocktail_canary_synccheck(int* out) {
    if (threadIdx.x < 16) {
        __syncthreads();  // reached by half of the block only: a divergent barrier
    }
    out[threadIdx.x] = threadIdx.x;
}
"""


def main(tool: str) -> None:
    """Launch the faulty kernel for ``tool`` (memcheck, racecheck or synccheck) once."""
    cupy.cuda.set_allocator(None)  # a pooled block would hide the out-of-bounds write
    module = cupy.RawModule(code=SOURCE)
    kernel = module.get_function(f"cocktail_canary_{tool}")
    if tool == "memcheck":
        a = cupy.zeros(32, dtype=cupy.float32)
        kernel((1,), (32,), (a, cupy.int32(a.size)))
    else:
        out = cupy.zeros(64, dtype=cupy.int32)
        kernel((1,), (64,), (out,))
    try:
        cupy.cuda.runtime.deviceSynchronize()
    except cupy.cuda.runtime.CUDARuntimeError:
        pass  # the sanitizer may stop the faulty kernel: the report is what counts


if __name__ == "__main__":
    main(sys.argv[1])
