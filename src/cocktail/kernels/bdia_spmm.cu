// bdia_spmm: Y = alpha * A X + beta * Y over the banded diagonal format, every in-matrix slot read once per
// tile of LANES * COLS columns (all k columns when k fits).
//
// As dia_spmm, a group of LANES lanes takes a row (see RowGroups) and a tile; each lane holds a strip of the
// tile's columns (see spmm.cuh). Every lane walks the nbands bands as bdia_direct does: for band b the
// column of its first diagonal is c = row + offsets[b], its diagonals q = 0 .. width - 1 (data rows
// band_ptr[b] + q) read the consecutive columns c + q, and band_window keeps the q with c + q in [0, n)
// (the slots outside the matrix are never read). For each kept diagonal the group's lanes load the same
// value data[(band_ptr[b] + q) * stride + row] (broadcast; consecutive groups read consecutive rows of one
// diagonal) and then X[c + q, strip columns]. Band offsets and pointers are read from global memory (every
// lane of the warp the same one: one cached load), x is not staged (a row's X rows are reused by the next
// rows' groups through the caches), so no barrier constrains the loops and rows past the end simply skip.
// band_ptr is int64 (the binder widens an int32 one once per matrix: bdia_spmm.prepare).
// VEC: vector strips (spmm.cuh).
#include "diagonals.cuh"
#include "spmm.cuh"

template <typename T, typename I, int LANES, int COLS, bool VEC>
__global__ void bdia_spmm(const I m, COCKTAIL_BLOCK_ARGS, const I n, const long long nbands, const long long stride,
                          const I* __restrict__ offsets, const long long* __restrict__ band_ptr,
                          const T* __restrict__ data, COCKTAIL_PRODUCT_ARGS(T)) {
    const RowGroups g = row_groups<LANES>();
    constexpr long long TILE = (long long)LANES * COLS;
    for (long long base = g.first; base < m; base += g.stride) {
        const long long row = base + g.group_in_warp;
        if (row >= m) continue;
        for (long long t0 = 0; t0 < k; t0 += TILE) {
            const long long j = strip_first<LANES, COLS, VEC>(t0, g.lane);
            if (j >= k) continue;
            T sum[COLS];
            strip_clear(sum);
            for (long long b = 0; b < nbands; ++b) {
                const long long first = band_ptr[b];
                const long long width = band_ptr[b + 1] - first;
                const long long c = row + (long long)offsets[b];  // column of the band's first diagonal
                // Diagonal q of the band reads column c + q: keep q with it in [0, n).
                long long lo, hi;
                band_window(c, width, (long long)n, lo, hi);
                const T* d = data + (first + lo) * stride + row;
                long long x_row = (c + lo) * x_row_step;
                // One diagonal at a time, as dia_spmm and dia_vi_spmm walk theirs: a diagonal's strip already
                // issues COLS independent loads of X, and the compiler's default unrolling took 80 registers a
                // thread where this takes 47 (float, 1 x 4 lanes x columns, sm_90 ptxas): 3 resident blocks of
                // 256 threads per SM instead of 5.
#pragma unroll 1
                for (long long q = lo; q < hi; ++q, d += stride, x_row += x_row_step) {
                    if constexpr (VEC) {
                        strip_add_vec<T, COLS>(sum, *d, x, x_row, j);
                    } else {
                        strip_add<T, LANES, COLS>(sum, *d, x, x_row, j, k, x_col_step);
                    }
                }
            }
            if constexpr (VEC) {
                strip_store_vec<T, COLS>(y, row * y_row_step, sum, j, alpha, beta);
            } else {
                strip_store<T, LANES, COLS>(y, row * y_row_step, sum, j, k, y_col_step, alpha, beta);
            }
        }
    }
}
