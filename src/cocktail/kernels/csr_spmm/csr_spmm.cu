// csr_spmm: Y = alpha * A X + beta * Y over CSR, every stored entry read once per tile of
// LANES * COLS columns (all k columns when k fits).
//
// A group of LANES lanes takes a row (see RowGroups) and a tile; each lane holds a strip of the
// tile's columns (see spmm.cuh). Every lane walks the whole row: the group's lanes load the same
// (column, value) pair (one transaction, broadcast) and then X[col, c] for their own columns. No
// lane exchanges values with another, so rows past the end simply skip. VEC: vector strips (spmm.cuh).
// PATTERN: a csr_pattern matrix, every entry holding data[0] (one cached load, no value per entry).
#include "spmm.cuh"

template <typename T, typename I, int LANES, int COLS, bool VEC, bool PATTERN>
__global__ void csr_spmm(const I m, COCKTAIL_BLOCK_ARGS, COCKTAIL_CSR_ARGS(T, I), COCKTAIL_PRODUCT_ARGS(T)) {
    const RowGroups g = row_groups<LANES>();
    constexpr long long TILE = (long long)LANES * COLS;
    for (long long base = g.first; base < m; base += g.stride) {
        const long long row = base + g.group_in_warp;
        if (row >= m) continue;
        const long long start = indptr[row];
        const long long end = indptr[row + 1];
        for (long long t0 = 0; t0 < k; t0 += TILE) {
            const long long j = strip_first<LANES, COLS, VEC>(t0, g.lane);
            if (j >= k) continue;
            T sum[COLS];
            strip_clear(sum);
            for (long long e = start; e < end; ++e) {
                if constexpr (VEC) {
                    strip_add_vec<T, COLS>(sum, entry_value<PATTERN>(data, e), x, (long long)indices[e] * x_row_step, j);
                } else {
                    strip_add<T, LANES, COLS>(sum, entry_value<PATTERN>(data, e), x, (long long)indices[e] * x_row_step, j, k, x_col_step);
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
