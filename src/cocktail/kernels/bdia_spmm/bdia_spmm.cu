// bdia_spmm: Y = alpha * A X + beta * Y over the banded diagonal format, every in-matrix slot read once per
// tile of LANES * COLS columns (all k columns when k fits).
//
// As dia_spmm, a group of LANES lanes takes ROWS consecutive rows (see RowGroups) and a tile; each lane holds
// a strip of the tile's columns (see spmm.cuh) for each row. The group walks the nbands bands as bdia_direct
// does: for band b the column of its first diagonal is row + offsets[b], and its diagonals q = 0 .. width - 1
// (data rows band_ptr[b] + q) read the consecutive columns after it, so every diagonal of a band after its
// first is the adjacent one: the X rows of the group's rows are held in registers and one is loaded per
// diagonal (spmm.cuh's row groups). Columns outside [0, n) are never read (their slots are skipped). Band
// offsets and pointers are read from global memory (every lane of the warp the same one: one cached load),
// so no barrier constrains the loops and rows past the end simply skip.
// band_ptr is int64 (the binder widens an int32 one once per matrix: bdia_spmm.prepare).
// VEC: vector strips (spmm.cuh).
#include "spmm.cuh"

template <typename T, typename I, int LANES, int COLS, bool VEC, int ROWS>
__global__ void bdia_spmm(const I m, COCKTAIL_BLOCK_ARGS, const I n, const long long nbands, const long long stride,
                          const I* __restrict__ offsets, const long long* __restrict__ band_ptr,
                          const T* __restrict__ data, COCKTAIL_PRODUCT_ARGS(T)) {
    const RowGroups g = row_groups<LANES>();
    constexpr long long TILE = (long long)LANES * COLS;
    const long long groups = ((long long)m + ROWS - 1) / ROWS;
    for (long long base = g.first; base < groups; base += g.stride) {
        const long long group = base + g.group_in_warp;
        if (group >= groups) continue;
        const long long row0 = group * ROWS;
        for (long long t0 = 0; t0 < k; t0 += TILE) {
            const long long j = strip_first<LANES, COLS, VEC>(t0, g.lane);
            if (j >= k) continue;
            T sum[ROWS][COLS];
            T win[ROWS][COLS];  // win[i]: X row held + i
#pragma unroll
            for (int i = 0; i < ROWS; ++i) strip_clear(sum[i]);
            long long held = COCKTAIL_NO_ROW_HELD;  // the X row win[0] holds
            for (long long b = 0; b < nbands; ++b) {
                const long long first = band_ptr[b];
                const long long width = band_ptr[b + 1] - first;
                const long long cb = row0 + (long long)offsets[b];  // row0's column on the band's first diagonal
                // One diagonal at a time: the compiler's default unrolling costs registers (and resident blocks).
#pragma unroll 1
                for (long long q = 0; q < width; ++q) {
                    const long long c0 = cb + q;
                    if (c0 + ROWS <= 0 || c0 >= n) continue;  // no row of the group has its column inside
                    window_step<T, LANES, COLS, VEC, ROWS>(win, held, c0, x, n, j, k, x_row_step, x_col_step);
                    const T* d = data + (first + q) * stride;
#pragma unroll
                    for (int i = 0; i < ROWS; ++i) {
                        const long long row = row0 + i;
                        if (row < m && c0 + i >= 0 && c0 + i < n) strip_fma<T, COLS>(sum[i], d[row], win[i]);
                    }
                }
            }
            rows_store<T, LANES, COLS, VEC, ROWS>(y, row0, m, sum, j, k, y_row_step, y_col_step, alpha, beta);
        }
    }
}
