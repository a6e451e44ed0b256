// bcsr_spmm: Y = alpha * A X + beta * Y over blocked CSR, every stored block read once per tile of
// lanes * COLS columns (all k columns when k fits).
//
// A group of `lanes` lanes takes a superrow i (see RowGroups) and a tile; each lane holds R x COLS partial
// sums, the strip of the tile's columns it owns for each of the superrow's R rows (see blocks_spmm.cuh).
// Every lane walks all of the superrow's blocks row_ptr[i] .. row_ptr[i+1]-1 (unlike bcsr, whose lanes
// share them out and reduce): unit ri of block b is at (ri*nblocks + b)*C, the group's lanes load the same
// block (broadcast), then X[col[b] + cc, c] for their own columns c and the block columns below n. No lane
// exchanges values with another, so superrows past the end simply skip; rows past m are never stored.
#include "blocks_spmm.cuh"

template <typename T, typename I, int R, int C, int COLS>
__global__ void bcsr_spmm(const I superrows, const I m, COCKTAIL_BLOCK_ARGS, const int lanes, const I n,
                          const long long nblocks, const int vec, const I* __restrict__ row_ptr,
                          const I* __restrict__ col, const T* __restrict__ data, COCKTAIL_PRODUCT_ARGS(T)) {
    const RowGroups g = row_groups(lanes);
    const long long tile = (long long)lanes * COLS;
    const long long unit_stride = nblocks * C;  // from unit ri of a block to unit ri+1
    for (long long base = g.first; base < superrows; base += g.stride) {
        const long long i = base + g.group_in_warp;
        if (i >= superrows) continue;
        const long long start = row_ptr[i];
        const long long end = row_ptr[i + 1];
        for (long long j = g.lane; j < k; j += tile) {
            T sum[R][COLS];
            block_strips_clear(sum);
            for (long long b = start; b < end; ++b) {
                block_strips_add<T, R, C, COLS>(sum, data + b * C, unit_stride, vec, x, (long long)col[b], n, j,
                                                lanes, k, x_row_step, x_col_step);
            }
            block_strips_store<T, R, COLS>(y, i * R, m, sum, j, lanes, k, y_row_step, y_col_step, alpha, beta);
        }
    }
}
