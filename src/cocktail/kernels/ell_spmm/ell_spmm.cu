// ell_spmm: Y = alpha * A X + beta * Y over column-major ELLPACK, every stored slot read once per tile of
// LANES * COLS columns (all k columns when k fits).
//
// A group of LANES lanes takes a row (see RowGroups) and a tile; each lane holds a strip of the tile's
// columns (see spmm.cuh). Every lane walks the row's slots k * stride + row: the group's lanes load the
// same (column, value) pair (broadcast; consecutive groups read consecutive rows of one slot column) and
// then X[col, c] for their own columns. A row's entries are packed left, so the first padding slot
// (col == -1) ends the row, as in ell. No lane exchanges values with another, so rows past the end skip.
#include "spmm.cuh"

template <typename T, typename I, int LANES, int COLS>
__global__ void ell_spmm(const I m, COCKTAIL_BLOCK_ARGS, const I width, const long long stride,
                         const I* __restrict__ col, const T* __restrict__ data, COCKTAIL_PRODUCT_ARGS(T)) {
    const RowGroups g = row_groups<LANES>();
    constexpr long long TILE = (long long)LANES * COLS;
    for (long long base = g.first; base < m; base += g.stride) {
        const long long row = base + g.group_in_warp;
        if (row >= m) continue;
        for (long long j = g.lane; j < k; j += TILE) {
            T sum[COLS];
            strip_clear(sum);
            for (long long s = 0; s < width; ++s) {
                const long long slot = s * stride + row;
                const I c = col[slot];
                if (c < 0) break;
                strip_add<T, LANES, COLS>(sum, data[slot], x, (long long)c * x_row_step, j, k, x_col_step);
            }
            strip_store<T, LANES, COLS>(y, row * y_row_step, sum, j, k, y_col_step, alpha, beta);
        }
    }
}
