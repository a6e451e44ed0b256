// Device helpers of the diagonal-format kernels (dia, dia_vi, bdia, bdia_direct).
#pragma once

#include "common.cuh"

// The diagonal offsets staged in shared memory, blockDim.x at a time (Bell & Garland §4.1).
// When they fit in one chunk, stage_once() stages them all for the whole grid-stride loop (the
// caller's next __syncthreads publishes them) and stage() only counts; otherwise stage(d0)
// stages chunk d0 between two barriers. Every thread of the block must call both, so the loops
// around them must be block-uniform.
template <typename I>
struct StagedOffsets {
    I* staged;                      // blockDim.x offsets in shared memory
    const I* __restrict__ offsets;  // every offset, in global memory
    long long ndiag;
    bool once;

    __device__ __forceinline__ StagedOffsets(I* staged_, const I* __restrict__ offsets_, long long ndiag_)
        : staged(staged_), offsets(offsets_), ndiag(ndiag_), once(ndiag_ <= (long long)blockDim.x) {}

    __device__ __forceinline__ void stage_once() const {
        if (once && threadIdx.x < ndiag) staged[threadIdx.x] = offsets[threadIdx.x];
    }

    // Puts offsets d0 .. d0 + count - 1 in staged[0 .. count) and returns count.
    __device__ __forceinline__ int stage(long long d0) const {
        const long long chunk = blockDim.x;
        if (!once) {
            __syncthreads();  // every thread is done reading the previous chunk
            if (d0 + threadIdx.x < ndiag) staged[threadIdx.x] = offsets[d0 + threadIdx.x];
            __syncthreads();
        }
        const long long left = ndiag - d0;
        return left < chunk ? (int)left : (int)chunk;
    }
};

// The diagonals k of a band of `width` adjacent diagonals whose column c + k lies in [0, n),
// c being the column of the band's first diagonal: lo <= k < hi (lo == hi when none does).
__device__ __forceinline__ void band_window(long long c, long long width, long long n, long long& lo,
                                            long long& hi) {
    lo = c >= 0 ? 0 : (-c < width ? -c : width);
    hi = n - c >= width ? width : (n - c > lo ? n - c : lo);
}
