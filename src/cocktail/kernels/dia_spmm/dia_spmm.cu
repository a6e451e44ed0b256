// dia_spmm: Y = alpha * A X + beta * Y over the diagonal format, every in-matrix slot read once per tile of
// LANES * COLS columns (all k columns when k fits).
//
// A group of LANES lanes takes ROWS consecutive rows (see RowGroups) and a tile; each lane holds a strip of
// the tile's columns (see spmm.cuh) for each row. The group walks the ndiag diagonals: for diagonal d row
// row0 + i reads column row0 + offsets[d] + i, skipped unless it lies in [0, n) (as dia does: the slots
// outside the matrix are never read); the X rows of the group's rows are held in registers and shared with
// the next diagonal when it is the adjacent one (spmm.cuh's row groups). The group's lanes load the same
// values data[d * stride + row] (broadcast). The offsets are read from global memory (every lane of the
// warp the same one: one cached load), not staged in shared memory, so no barrier constrains the loops and
// rows past the end simply skip. VEC: vector strips (spmm.cuh).
#include "spmm.cuh"

template <typename T, typename I, int LANES, int COLS, bool VEC, int ROWS>
__global__ void dia_spmm(const I m, COCKTAIL_BLOCK_ARGS, const I n, const I ndiag, const long long stride,
                         const I* __restrict__ offsets, const T* __restrict__ data, COCKTAIL_PRODUCT_ARGS(T)) {
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
            for (long long d = 0; d < ndiag; ++d) {
                const long long c0 = row0 + (long long)offsets[d];  // row0's column on diagonal d
                if (c0 + ROWS <= 0 || c0 >= n) continue;  // no row of the group has its column inside
                window_step<T, LANES, COLS, VEC, ROWS>(win, held, c0, x, n, j, k, x_row_step, x_col_step);
#pragma unroll
                for (int i = 0; i < ROWS; ++i) {
                    const long long row = row0 + i;
                    if (row < m && c0 + i >= 0 && c0 + i < n) strip_fma<T, COLS>(sum[i], data[d * stride + row], win[i]);
                }
            }
            rows_store<T, LANES, COLS, VEC, ROWS>(y, row0, m, sum, j, k, y_row_step, y_col_step, alpha, beta);
        }
    }
}
