// dia_vi_spmm: Y = alpha * A X + beta * Y over DIA-VI's one-byte value codes, every in-matrix slot read
// once per tile of LANES * COLS columns (all k columns when k fits).
//
// As dia_spmm, a group of LANES lanes per row, each lane a strip of the tile's columns (see spmm.cuh),
// walking the ndiag diagonals and skipping the columns outside [0, n); a slot's value is
// table[codes[d * stride + row]]. The block stages the value table (at most 256 values) in shared memory
// once, before any loop (the only barrier: every thread reaches it), so rows past the end simply skip.
// VEC: vector strips (spmm.cuh).
#include "spmm.cuh"

template <typename T, typename I, int LANES, int COLS, bool VEC>
__global__ void dia_vi_spmm(const I m, COCKTAIL_BLOCK_ARGS, const I n, const I ndiag, const long long stride,
                            const int ntable, const I* __restrict__ offsets, const unsigned char* __restrict__ codes,
                            const T* __restrict__ table, COCKTAIL_PRODUCT_ARGS(T)) {
    extern __shared__ __align__(16) unsigned char dia_vi_spmm_shared[];
    T* values = reinterpret_cast<T*>(dia_vi_spmm_shared);  // ntable values
    for (int i = threadIdx.x; i < ntable; i += blockDim.x) values[i] = table[i];
    __syncthreads();
    const RowGroups g = row_groups<LANES>();
    constexpr long long TILE = (long long)LANES * COLS;
    for (long long base = g.first; base < m; base += g.stride) {
        const long long row = base + g.group_in_warp;
        if (row >= m) continue;
        for (long long t0 = 0; t0 < k; t0 += TILE) {
            const long long j = strip_first<LANES, COLS, VEC>(t0, g.lane);
            if (j >= k) continue;
            T sum[COLS];
            strip_clear(sum);
            for (long long d = 0; d < ndiag; ++d) {
                const long long c = row + (long long)offsets[d];
                if (c < 0 || c >= n) continue;
                const T v = values[codes[d * stride + row]];
                if constexpr (VEC) {
                    strip_add_vec<T, COLS>(sum, v, x, c * x_row_step, j);
                } else {
                    strip_add<T, LANES, COLS>(sum, v, x, c * x_row_step, j, k, x_col_step);
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
