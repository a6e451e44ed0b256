// dia_spmm: Y = alpha * A X + beta * Y over the diagonal format, every in-matrix slot read once per tile of
// LANES * COLS columns (all k columns when k fits).
//
// A group of LANES lanes takes a row (see RowGroups) and a tile; each lane holds a strip of the tile's
// columns (see spmm.cuh). Every lane walks the ndiag diagonals: for diagonal d the row's column is
// row + offsets[d], skipped unless it lies in [0, n) (as dia does: the slots outside the matrix are never
// read); otherwise the group's lanes load the same value data[d * stride + row] (broadcast; consecutive
// groups read consecutive rows of one diagonal) and then X[col, c] for their own columns. The offsets
// are read from global memory (every lane of the warp the same one: one cached load), not staged in
// shared memory, so no barrier constrains the loops and rows past the end simply skip.
#include "spmm.cuh"

template <typename T, typename I, int LANES, int COLS>
__global__ void dia_spmm(const I m, COCKTAIL_BLOCK_ARGS, const I n, const I ndiag, const long long stride,
                         const I* __restrict__ offsets, const T* __restrict__ data, COCKTAIL_PRODUCT_ARGS(T)) {
    const RowGroups g = row_groups<LANES>();
    constexpr long long TILE = (long long)LANES * COLS;
    for (long long base = g.first; base < m; base += g.stride) {
        const long long row = base + g.group_in_warp;
        if (row >= m) continue;
        for (long long j = g.lane; j < k; j += TILE) {
            T sum[COLS];
            strip_clear(sum);
            for (long long d = 0; d < ndiag; ++d) {
                const long long c = row + (long long)offsets[d];
                if (c < 0 || c >= n) continue;
                strip_add<T, LANES, COLS>(sum, data[d * stride + row], x, c * x_row_step, j, k, x_col_step);
            }
            strip_store<T, LANES, COLS>(y, row * y_row_step, sum, j, k, y_col_step, alpha, beta);
        }
    }
}
