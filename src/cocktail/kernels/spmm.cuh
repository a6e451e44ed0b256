// Column strips of a block product Y = alpha * A X + beta * Y (X n x k, Y m x k, any strides).
//
// A group of LANES lanes works on a tile of LANES * COLS columns; lane `lane` holds, in registers,
// the columns j, j + LANES, ..., j + (COLS - 1) * LANES with j = tile start + lane, so that for row
// -major X consecutive lanes read consecutive addresses. Element (r, c) of X is
// x[r * x_row_step + c * x_col_step], of Y y[r * y_row_step + c * y_col_step]: one kernel serves
// row-major, column-major and strided operands without a copy.
#pragma once

#include "warp.cuh"

// The block's shape and the operands' element steps, the arguments every block kernel takes first.
#define COCKTAIL_BLOCK_ARGS                                                                           \
    const long long k, const long long x_row_step, const long long x_col_step,                      \
        const long long y_row_step, const long long y_col_step

template <typename T, int COLS>
__device__ __forceinline__ void strip_clear(T (&sum)[COLS]) {
#pragma unroll
    for (int c = 0; c < COLS; ++c) sum[c] = T(0);
}

// sum += v * X[x_row, strip columns] for the strip's columns below k (x_row: the row's offset in x).
template <typename T, int LANES, int COLS>
__device__ __forceinline__ void strip_add(T (&sum)[COLS], const T v, const T* __restrict__ x, const long long x_row,
                                          const long long j, const long long k, const long long x_col_step) {
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
        const long long col = j + (long long)c * LANES;
        if (col < k) sum[c] += v * load_x(x, x_row + col * x_col_step);
    }
}

// Y[row, strip columns] = alpha * sum + beta * Y[...] (y_row: the row's offset in y).
template <typename T, int LANES, int COLS>
__device__ __forceinline__ void strip_store(T* __restrict__ y, const long long y_row, const T (&sum)[COLS],
                                            const long long j, const long long k, const long long y_col_step,
                                            const T alpha, const T beta) {
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
        const long long col = j + (long long)c * LANES;
        if (col < k) store_y(y, y_row + col * y_col_step, sum[c], alpha, beta);
    }
}

// out[offset + strip columns] = sum (a partial result kept for a later pass; columns contiguous).
template <typename T, int LANES, int COLS>
__device__ __forceinline__ void strip_keep(T* __restrict__ out, const long long offset, const T (&sum)[COLS],
                                           const long long j, const long long k) {
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
        const long long col = j + (long long)c * LANES;
        if (col < k) out[offset + col] = sum[c];
    }
}
