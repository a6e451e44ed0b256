// dia_vi_spmm: Y = alpha * A X + beta * Y over DIA-VI's one-byte value codes, every in-matrix slot read
// once per tile of LANES * COLS columns (all k columns when k fits).
//
// A group of LANES lanes takes ROWS consecutive rows and a tile; each lane holds a strip of the tile's
// columns (see spmm.cuh) for each of the rows. The group walks the ndiag diagonals; for diagonal d row
// row0 + i reads X row row0 + offsets[d] + i, so the strips of the ROWS X rows a diagonal needs are held
// in registers (win), and a diagonal whose offset is the previous one's plus one (a stencil's neighbours)
// reuses ROWS - 1 of them and loads one: X is read from the caches about ROWS times less often on runs
// of adjacent diagonals. Columns outside [0, n) are never read (their strips hold zeros and their slots
// are skipped); a slot's value is table[codes[d * stride + row]]. The block stages the value table (at
// most 256 values) in shared memory once, before any loop (the only barrier: every thread reaches it),
// so rows past the end simply skip. VEC: vector strips (spmm.cuh).
#include "spmm.cuh"

template <typename T, typename I, int LANES, int COLS, bool VEC, int ROWS>
__global__ void dia_vi_spmm(const I m, COCKTAIL_BLOCK_ARGS, const I n, const I ndiag, const long long stride,
                            const int ntable, const I* __restrict__ offsets, const unsigned char* __restrict__ codes,
                            const T* __restrict__ table, COCKTAIL_PRODUCT_ARGS(T)) {
    extern __shared__ __align__(16) unsigned char dia_vi_spmm_shared[];
    T* values = reinterpret_cast<T*>(dia_vi_spmm_shared);  // ntable values
    for (int i = threadIdx.x; i < ntable; i += blockDim.x) values[i] = table[i];
    __syncthreads();
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
                    if (row < m && c0 + i >= 0 && c0 + i < n) {
                        strip_fma<T, COLS>(sum[i], values[codes[d * stride + row]], win[i]);
                    }
                }
            }
            rows_store<T, LANES, COLS, VEC, ROWS>(y, row0, m, sum, j, k, y_row_step, y_col_step, alpha, beta);
        }
    }
}
