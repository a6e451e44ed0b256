// sbell_spmm: Y = alpha * A X + beta * Y over sliced blocked ELLPACK, every stored block read once per tile
// of lanes * COLS columns (all k columns when k fits).
//
// A group of `lanes` lanes takes a superrow sr (see RowGroups) and a tile; each lane holds R x COLS partial
// sums, the strip of the tile's columns it owns for each of the superrow's R rows (see blocks_spmm.cuh).
// Superrow sr lies in slice s = sr / h at local position u = sr % h; the slice starts at block slot
// slice_ptr[s] and has K_s = (slice_ptr[s+1] - slice_ptr[s]) / h slots per superrow. Slot t of the superrow
// is col[slice_ptr[s] + t*h + u] and unit ri of its block is at slice_ptr[s]*R*C + ((t*R + ri)*h + u)*C, as
// in sbell. The group's lanes load the same block (broadcast; consecutive groups of a slice read consecutive
// units), then X[col + cc, c] for their own columns c and the block columns below n. Blocks are packed
// left, so the first padding slot (col == -1) ends the superrow. slice_ptr is int64 (the binder widens an
// int32 one once per matrix: sbell_spmm.prepare). No lane exchanges values with another, so superrows past
// the end simply skip; rows past m are never stored.
#include "blocks_spmm.cuh"

template <typename T, typename I, int R, int C, int COLS>
__global__ void sbell_spmm(const I superrows, const I m, COCKTAIL_BLOCK_ARGS, const int lanes, const I n,
                           const long long h, const int vec, const long long* __restrict__ slice_ptr,
                           const I* __restrict__ col, const T* __restrict__ data, COCKTAIL_PRODUCT_ARGS(T)) {
    const RowGroups g = row_groups(lanes);
    const long long tile = (long long)lanes * COLS;
    const long long unit_stride = h * C;  // from unit ri of a block to unit ri+1
    // As in sbell: dividing by min(h, superrows) gives the same slice and u for every sr < superrows (one
    // slice when h >= superrows) and keeps the division in I, which is 32-bit for int indices.
    const I hdiv = (I)(h < (long long)superrows ? h : (long long)superrows);
    for (long long base = g.first; base < superrows; base += g.stride) {
        const long long sr = base + g.group_in_warp;
        if (sr >= superrows) continue;
        const I s = (I)sr / hdiv;
        const long long u = sr - (long long)s * hdiv;
        const long long start = slice_ptr[s];
        const long long width = (slice_ptr[s + 1] - start) / h;
        const I* __restrict__ slice_col = col + start + u;
        const T* __restrict__ slice_data = data + (start * R * C + u * C);
        for (long long j = g.lane; j < k; j += tile) {
            T sum[R][COLS];
            block_strips_clear(sum);
            for (long long t = 0; t < width; ++t) {
                const I c0 = slice_col[t * h];
                if (c0 < 0) break;
                block_strips_add<T, R, C, COLS>(sum, slice_data + t * R * unit_stride, unit_stride, vec, x,
                                                (long long)c0, n, j, lanes, k, x_row_step, x_col_step);
            }
            block_strips_store<T, R, COLS>(y, sr * R, m, sum, j, lanes, k, y_row_step, y_col_step, alpha, beta);
        }
    }
}
