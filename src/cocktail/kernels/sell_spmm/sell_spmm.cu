// sell_spmm: Y = alpha * A X + beta * Y over sliced ELLPACK (SELL-C-sigma / SELL-P), every stored slot read
// once per tile of LANES * COLS columns (all k columns when k fits).
//
// A group of LANES lanes takes a permuted row p (see RowGroups) and a tile; each lane holds a strip of the
// tile's columns (see spmm.cuh). Row p lies in slice s = p / C at local row r = p % C; every lane walks its
// slots slice_ptr[s] + i*C + r (below slice_ptr[s + 1]): the group's lanes load the same (column, value)
// pair (broadcast; consecutive groups read consecutive local rows of one slot column) and then X[col, c]
// for their own columns. A row's entries are packed left, so the first padding slot (col == -1) ends the
// row, as in sell. The strip is stored to Y[perm[p]] (Y[p] when the rows are not permuted).
#include "spmm.cuh"

template <typename T, typename I, int LANES, int COLS>
__global__ void sell_spmm(const I m, COCKTAIL_BLOCK_ARGS, const long long slice_height, const int permuted,
                          const long long* __restrict__ slice_ptr, const I* __restrict__ col,
                          const T* __restrict__ data, const I* __restrict__ perm, COCKTAIL_PRODUCT_ARGS(T)) {
    const RowGroups g = row_groups<LANES>();
    constexpr long long TILE = (long long)LANES * COLS;
    for (long long base = g.first; base < m; base += g.stride) {
        const long long p = base + g.group_in_warp;
        if (p >= m) continue;
        const long long s = p / slice_height;
        const long long first = slice_ptr[s] + (p - s * slice_height);
        const long long end = slice_ptr[s + 1];  // slot < end  <=>  i < slice_width[s], since r < C
        const long long y_row = (permuted ? (long long)perm[p] : p) * y_row_step;
        for (long long j = g.lane; j < k; j += TILE) {
            T sum[COLS];
            strip_clear(sum);
            for (long long slot = first; slot < end; slot += slice_height) {
                const I c = col[slot];
                if (c < 0) break;
                strip_add<T, LANES, COLS>(sum, data[slot], x, (long long)c * x_row_step, j, k, x_col_step);
            }
            strip_store<T, LANES, COLS>(y, y_row, sum, j, k, y_col_step, alpha, beta);
        }
    }
}
