"""A kernel with one known fault per compute-sanitizer tool, to prove the tool (and its kernel filter) sees it.

``scripts/sanitize.sh`` runs ``compute-sanitizer --tool TOOL python scripts/sanitize_canary.py TOOL``
before the test suite and requires the tool to report an error: a run that reports nothing on the
test suite then means the kernels were checked and are clean, not that nothing was instrumented.
The kernels are named ``cocktail_canary_*`` so that the filter of Cocktail's kernels matches them, and
they are templates compiled through ``name_expressions`` like Cocktail's own, so that the filter is shown
to match a mangled name (``_Z24cocktail_canary_memcheckIfEvPT_i``), not only an ``extern "C"`` one.
"""

from __future__ import annotations

import sys

import cupy

SOURCE = r"""
template <typename T>
__global__ void cocktail_canary_memcheck(T* a, int n) {
    a[n + threadIdx.x] = T(1);  // past the end of a's n elements
}

template <typename T>
__global__ void cocktail_canary_racecheck(T* out) {
    __shared__ T shared;
    shared = threadIdx.x;  // every thread writes the same word: a write-write hazard
    __syncthreads();
    out[threadIdx.x] = shared;
}

template <typename T>
__global__ void cocktail_canary_synccheck(T* out) {
    if (threadIdx.x < 16) {
        __syncthreads();  // reached by half of the block only: a divergent barrier
    }
    out[threadIdx.x] = threadIdx.x;
}
"""


def main(tool: str) -> None:
    """Launch the faulty kernel for ``tool`` (memcheck, racecheck or synccheck) once."""
    cupy.cuda.set_allocator(None)  # a pooled block would hide the out-of-bounds write
    name = f"cocktail_canary_{tool}<float>" if tool == "memcheck" else f"cocktail_canary_{tool}<int>"
    module = cupy.RawModule(code=SOURCE, name_expressions=[name])
    kernel = module.get_function(name)
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
