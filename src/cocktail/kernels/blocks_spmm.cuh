// Column strips of the blocked formats' block products (bcsr_spmm, bell_spmm, sbell_spmm):
// Y = alpha * A X + beta * Y over R x C blocks (X n x k, Y m x k, any strides), every stored block read
// once per tile of lanes * COLS columns (all k columns when k fits).
//
// spmm.cuh's strips on superrows: a group of `lanes` lanes takes a superrow (R rows; see RowGroups) and a
// tile; lane `lane` holds the columns j, j + lanes, ..., j + (COLS - 1) * lanes of the tile (j = tile
// start + lane), for each of the superrow's R rows: R x COLS partial sums in registers. For each stored
// block every lane of the group reads the block's R x C values (the same addresses on all of them: one
// transaction, broadcast), a piece of each unit at a time in the widest vector blocks.cuh allows, and, for
// each block column col0 + cc below n, X[col0 + cc, its strip columns] once, adding it into its R rows of
// sums. The block columns past n (a block of the last block column reaching past the matrix edge: its
// values there are fill, 0) are skipped: X has only n rows. No lane exchanges values with another.
//
// The lanes of a group are a launch argument here (a power of two dividing the warp), not a template
// parameter as in spmm.cuh: the block shape and the columns per lane already multiply the instantiations.
#pragma once

#include "blocks.cuh"
#include "spmm.cuh"

template <typename T, int R, int COLS>
__device__ __forceinline__ void block_strips_clear(T (&sum)[R][COLS]) {
#pragma unroll
    for (int ri = 0; ri < R; ++ri) {
#pragma unroll
        for (int c = 0; c < COLS; ++c) sum[ri][c] = T(0);
    }
}

// v = the W values at p, whose element offset from the data array's start is a multiple of W: one vector
// load where `vec` (the data array starts on 16 bytes, see load_unit) and W values fill a vector type.
template <typename T, int W>
__device__ __forceinline__ void load_piece(const T* __restrict__ p, T (&v)[W], bool vec) {
    if constexpr (W > 1) {
        if (vec) {
            unpack<W>(*reinterpret_cast<const typename block_vector<T, W>::type*>(p), v, 0);
            return;
        }
    }
#pragma unroll
    for (int w = 0; w < W; ++w) v[w] = p[w];
}

// sum[ri][c] += A[row ri of the block, :] . X[col0 .. col0 + C - 1, strip column c] for the block whose unit
// ri starts at unit0 + ri * unit_stride (element offsets; unit_stride a multiple of C), the block columns
// below n only. Strip column c is j + c * lanes, read only below k (0 past it: never stored).
template <typename T, int R, int C, int COLS>
__device__ __forceinline__ void block_strips_add(T (&sum)[R][COLS], const T* __restrict__ unit0,
                                                 const long long unit_stride, const bool vec,
                                                 const T* __restrict__ x, const long long col0, const long long n,
                                                 const long long j, const int lanes, const long long k,
                                                 const long long x_row_step, const long long x_col_step) {
    constexpr int W = block_vector<T, C>::VEC;  // values of a unit loaded at once; C is a multiple of W
#pragma unroll
    for (int q = 0; q < C; q += W) {
        T a[R][W];
#pragma unroll
        for (int ri = 0; ri < R; ++ri) load_piece<T, W>(unit0 + ri * unit_stride + q, a[ri], vec);
#pragma unroll
        for (int w = 0; w < W; ++w) {
            const long long col = col0 + q + w;
            if (col < n) {
                const long long x_row = col * x_row_step;
                T xv[COLS];
#pragma unroll
                for (int c = 0; c < COLS; ++c) {
                    const long long xc = j + (long long)c * lanes;
                    xv[c] = xc < k ? load_x(x, x_row + xc * x_col_step) : T(0);
                }
#pragma unroll
                for (int ri = 0; ri < R; ++ri) {
#pragma unroll
                    for (int c = 0; c < COLS; ++c) sum[ri][c] += a[ri][w] * xv[c];
                }
            }
        }
    }
}

// Y[row0 + ri, strip columns] = alpha * sum[ri] + beta * Y[...] for the superrow's rows below m and the
// strip's columns below k, never reading Y when beta == 0.
template <typename T, int R, int COLS>
__device__ __forceinline__ void block_strips_store(T* __restrict__ y, const long long row0, const long long m,
                                                   const T (&sum)[R][COLS], const long long j, const int lanes,
                                                   const long long k, const long long y_row_step,
                                                   const long long y_col_step, const T alpha, const T beta) {
#pragma unroll
    for (int ri = 0; ri < R; ++ri) {
        const long long row = row0 + ri;
        if (row >= m) break;
        const long long y_row = row * y_row_step;
#pragma unroll
        for (int c = 0; c < COLS; ++c) {
            const long long col = j + (long long)c * lanes;
            if (col < k) store_y(y, y_row + col * y_col_step, sum[ri][c], alpha, beta);
        }
    }
}
