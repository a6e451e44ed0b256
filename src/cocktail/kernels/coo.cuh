// Device helpers of the COO kernels (coo_atomic, coo_segmented): a warp walks a run of
// row-sorted entries 32 at a time.
#pragma once

#include "warp.cuh"

// Entry j of a warp's step over the entries before `end`: sets r to its row and returns
// data[j] * x[col[j]] in P's arithmetic type. Lanes past the end repeat the last row with a zero
// product, keeping the keys sorted.
template <typename P, typename I>
__device__ __forceinline__ compute_t<P> coo_product(COCKTAIL_COO_ARGS(P, I), const operand_t<P>* __restrict__ x,
                                                    long long j, long long end, I& r) {
    const bool valid = j < end;
    r = row[valid ? j : end - 1];
    return valid ? widen(data[j]) * load_x(x, col[j]) : compute_t<P>(0);
}
