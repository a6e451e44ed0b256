// Device helpers of the diagonal-format kernels (dia, dia_vi, bdia, bdia_direct).
#pragma once

#include "common.cuh"

// Stages diagonal offsets d0 .. d0 + blockDim.x - 1 (those below ndiag) in shared memory, one per
// thread, between two barriers: the dia kernels' chunk loop when the offsets do not fit in one
// chunk (Bell & Garland §4.1). Every thread of the block must call it.
template <typename I>
__device__ __forceinline__ void stage_offsets(I* staged, const I* __restrict__ offsets, long long ndiag,
                                              long long d0, int tid) {
    __syncthreads();  // every thread is done reading the previous chunk
    if (d0 + tid < ndiag) staged[tid] = offsets[d0 + tid];
    __syncthreads();
}

// The diagonals k of a band of `width` adjacent diagonals whose column c + k lies in [0, n),
// c being the column of the band's first diagonal: lo <= k < hi (lo == hi when none does).
template <typename W>
__device__ __forceinline__ void band_window(long long c, W width, long long n, W& lo, W& hi) {
    lo = c >= 0 ? 0 : (-c < width ? (W)(-c) : width);
    hi = n - c >= width ? width : (n - c > lo ? (W)(n - c) : lo);
}
