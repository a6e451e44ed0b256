// Shared device helpers for Cocktail's SpMV kernels.
//
// COCKTAIL_LDG (0 or 1, set at compile time) routes reads of x through the read-only
// data path (__ldg): the modern form of the texture-cached x of Bell & Garland §4.7.
#pragma once

#ifndef COCKTAIL_LDG
#define COCKTAIL_LDG 1
#endif

#define COCKTAIL_FULL_MASK 0xffffffffu

template <typename T>
__device__ __forceinline__ T load_x(const T* __restrict__ x, long long i) {
#if COCKTAIL_LDG
    return __ldg(x + i);
#else
    return x[i];
#endif
}

// y = alpha * sum + beta * y, never reading y when beta == 0 (so NaN/Inf there never propagate).
template <typename T>
__device__ __forceinline__ void store_y(T* y, long long row, T sum, T alpha, T beta) {
    y[row] = (beta == T(0)) ? alpha * sum : alpha * sum + beta * y[row];
}

// Sum over groups of `width` consecutive lanes; lane 0 of each group ends with the total.
// Every lane of the warp must call it (explicit full mask).
template <typename T>
__device__ __forceinline__ T group_sum(T v, int width) {
    for (int offset = width / 2; offset > 0; offset /= 2) {
        v += __shfl_down_sync(COCKTAIL_FULL_MASK, v, offset, width);
    }
    return v;
}
