// bell_spmm: Y = alpha * A X + beta * Y over blocked ELLPACK, every stored block read once per tile of
// lanes * COLS columns (all k columns when k fits).
//
// A group of `lanes` lanes takes a superrow s (see RowGroups) and a tile; each lane holds R x COLS partial
// sums, the strip of the tile's columns it owns for each of the superrow's R rows (see blocks_spmm.cuh).
// Every lane walks the superrow's slots: slot t holds col[t*stride + s] and unit ri of its block is at
// ((t*R + ri)*stride + s)*C, as in bell. The group's lanes load the same block (broadcast; consecutive groups
// read consecutive units), then X[col + cc, c] for their own columns c and the block columns below n. A
// superrow's blocks are packed left, so the first padding slot (col == -1) ends it. No lane exchanges
// values with another, so superrows past the end simply skip; rows past m are never stored.
#include "blocks_spmm.cuh"

template <typename T, typename I, int R, int C, int COLS>
__global__ void bell_spmm(const I superrows, const I m, COCKTAIL_BLOCK_ARGS, const int lanes, const I n,
                          const I width, const long long stride, const int vec, const I* __restrict__ col,
                          const T* __restrict__ data, COCKTAIL_PRODUCT_ARGS(T)) {
    const RowGroups g = row_groups(lanes);
    const long long tile = (long long)lanes * COLS;
    const long long unit_stride = stride * C;  // from unit ri of a block to unit ri+1
    for (long long base = g.first; base < superrows; base += g.stride) {
        const long long s = base + g.group_in_warp;
        if (s >= superrows) continue;
        for (long long j = g.lane; j < k; j += tile) {
            T sum[R][COLS];
            block_strips_clear(sum);
            for (long long t = 0; t < width; ++t) {
                const I c0 = col[t * stride + s];
                if (c0 < 0) break;
                block_strips_add<T, R, C, COLS>(sum, data + (t * R * stride + s) * C, unit_stride, vec, x,
                                                (long long)c0, n, j, lanes, k, x_row_step, x_col_step);
            }
            block_strips_store<T, R, COLS>(y, s * R, m, sum, j, lanes, k, y_row_step, y_col_step, alpha, beta);
        }
    }
}
