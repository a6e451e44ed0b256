// csr_spmm: Y = alpha * A X + beta * Y over CSR for row-major X (n x k) and Y (m x k): every
// stored entry is read once for a tile of LANES * COLS columns (all k columns when k fits).
//
// A group of LANES lanes takes a row (see RowGroups); lane c of the group holds columns
// j0 + c, j0 + c + LANES, ..., j0 + c + (COLS - 1) * LANES of the tile in registers. Every lane
// walks the whole row: the group's lanes load the same (column, value) pair (one transaction,
// broadcast) and then X[col, j] for their own columns, consecutive lanes at consecutive
// addresses. No lane exchanges values with another, so rows past the end simply skip.
#include "warp.cuh"

template <typename T, typename I, int LANES, int COLS>
__global__ void csr_spmm(const I m, const long long k, COCKTAIL_CSR_ARGS(T, I), COCKTAIL_PRODUCT_ARGS(T)) {
    const RowGroups g = row_groups<LANES>();
    constexpr long long TILE = (long long)LANES * COLS;
    for (long long base = g.first; base < m; base += g.stride) {
        const long long row = base + g.group_in_warp;
        if (row >= m) continue;
        const long long start = indptr[row];
        const long long end = indptr[row + 1];
        for (long long j0 = 0; j0 < k; j0 += TILE) {
            T sum[COLS];
#pragma unroll
            for (int c = 0; c < COLS; ++c) sum[c] = T(0);
            for (long long e = start; e < end; ++e) {
                const T v = data[e];
                const long long x_row = (long long)indices[e] * k;
#pragma unroll
                for (int c = 0; c < COLS; ++c) {
                    const long long j = j0 + g.lane + (long long)c * LANES;
                    if (j < k) sum[c] += v * load_x(x, x_row + j);
                }
            }
#pragma unroll
            for (int c = 0; c < COLS; ++c) {
                const long long j = j0 + g.lane + (long long)c * LANES;
                if (j < k) store_y(y, row * k + j, sum[c], alpha, beta);
            }
        }
    }
}
