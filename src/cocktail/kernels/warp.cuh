// Warp-level building blocks: reductions over groups of lanes, segmented scans over sorted
// keys, and row groups dealt out with a warp-uniform base. Every lane of the warp must call
// the shuffle helpers (they use the full mask).
#pragma once

#include "common.cuh"

// Sum over groups of `width` consecutive lanes; lane 0 of each group ends with the total.
template <typename T>
__device__ __forceinline__ T group_sum(T v, int width) {
    for (int offset = width / 2; offset > 0; offset /= 2) {
        v += __shfl_down_sync(COCKTAIL_FULL_MASK, v, offset, width);
    }
    return v;
}

// Sum over groups of `width` consecutive lanes (a power of two); every lane of a group ends
// with the group's total.
template <typename T>
__device__ __forceinline__ T group_allsum(T v, int width) {
    for (int offset = width / 2; offset > 0; offset /= 2) {
        v += __shfl_xor_sync(COCKTAIL_FULL_MASK, v, offset, width);
    }
    return v;
}

// Inclusive segmented scan towards higher lanes: lanes start .. lane of one segment (the keys
// are sorted, so lane - d is in my segment exactly when lane - d >= start). The last lane of a
// segment ends with its total.
template <typename T>
__device__ __forceinline__ T segmented_scan_up(T v, int lane, int start) {
    for (int d = 1; d < 32; d <<= 1) {
        const T other = __shfl_up_sync(COCKTAIL_FULL_MASK, v, d);
        if (lane - d >= start) {
            v += other;
        }
    }
    return v;
}

// Inclusive segmented scan towards lower lanes: lane .. seg_end of one segment. The first
// lane of a segment ends with its total.
template <typename T>
__device__ __forceinline__ T segmented_scan_down(T v, int lane, int seg_end) {
    for (int d = 1; d < 32; d <<= 1) {
        const T other = __shfl_down_sync(COCKTAIL_FULL_MASK, v, d);
        if (lane + d <= seg_end) {
            v += other;
        }
    }
    return v;
}

// Groups of `width` consecutive lanes (a power of two dividing the warp), one row (or superrow)
// each. Rows are dealt out with a warp-uniform base, `first`, `first + stride`, ..., and the
// group takes row base + group_in_warp, so every lane of a warp runs the same number of
// iterations and the full-mask shuffles always see all 32 lanes.
struct RowGroups {
    int lane;           // position in the group
    int group_in_warp;  // the group's place in its warp
    long long first;    // the warp's first base (the same on all its lanes)
    long long stride;   // groups in the grid
};

__device__ __forceinline__ RowGroups row_groups(int width) {
    constexpr int WARP = 32;
    RowGroups g;
    g.lane = threadIdx.x & (width - 1);
    g.group_in_warp = (threadIdx.x % WARP) / width;
    g.first = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / width - g.group_in_warp;
    g.stride = (long long)gridDim.x * blockDim.x / width;
    return g;
}

// row_groups for a width known at compile time. It spells the arithmetic out with WIDTH rather than
// calling row_groups(WIDTH): that way the compiler emits csr_vector's and sell's code exactly as
// they had it before this header (checked on the PTX of every instantiation; the call form
// compiles to different code that ran csr_vector 10-28% slower on long rows).
template <int WIDTH>
__device__ __forceinline__ RowGroups row_groups() {
    static_assert(WIDTH >= 1 && WIDTH <= 32 && (WIDTH & (WIDTH - 1)) == 0,
                  "a row group must be a power of two dividing the warp");
    constexpr int WARP = 32;
    RowGroups g;
    g.lane = threadIdx.x % WIDTH;
    g.group_in_warp = (threadIdx.x % WARP) / WIDTH;
    g.first = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / WIDTH - g.group_in_warp;
    g.stride = (long long)gridDim.x * blockDim.x / WIDTH;
    return g;
}

// This thread's lane in its warp.
__device__ __forceinline__ int warp_lane() {
    return threadIdx.x & 31;
}

// This thread's warp's index in the grid (blockDim.x a multiple of 32).
__device__ __forceinline__ long long grid_warp() {
    return ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
}
