// sbell: one thread per superrow over sliced blocked ELLPACK (clSpMV §4.4.2).
//
// Superrow sr lies in slice s = sr / h at local position u = sr % h; the slice starts at block
// slot slice_ptr[s] and has K_s = (slice_ptr[s+1] - slice_ptr[s]) / h slots per superrow.
// Slot k of the superrow is col[slice_ptr[s] + k*h + u] and unit ri of its block is at
// slice_ptr[s]*R*C + ((k*R + ri)*h + u)*C: consecutive threads of a slice read consecutive
// units. Blocks are packed left, so the first padding slot (col == -1) ends the superrow.
#include "blocks.cuh"

template <typename T, typename I, int R, int C>
__global__ void sbell(const I superrows,
                      const I m,
                      const I n,
                      const long long h,  // slice height
                      const int vec,      // data starts on a 16-byte boundary: vector loads allowed
                      const long long* __restrict__ slice_ptr,
                      const I* __restrict__ col,
                      const T* __restrict__ data,
                      COCKTAIL_PRODUCT_ARGS(T)) {
    // Dividing by min(h, superrows) gives the same slice and u for every sr < superrows (one
    // slice when h >= superrows) and keeps the division in I, which is 32-bit for int indices.
    const I hdiv = (I)(h < (long long)superrows ? h : (long long)superrows);
    const long long unit_stride = h * C;  // from unit ri of a block to unit ri+1
    COCKTAIL_GRID_STRIDE_LOOP(sr, superrows) {
        const I s = (I)sr / hdiv;
        const long long u = sr - (long long)s * hdiv;
        const long long start = slice_ptr[s];
        const long long width = (slice_ptr[s + 1] - start) / h;
        const I* __restrict__ slice_col = col + start + u;
        const T* __restrict__ slice_data = data + (start * R * C + u * C);
        T sum[R];
#pragma unroll
        for (int ri = 0; ri < R; ++ri) sum[ri] = T(0);
        for (long long k = 0; k < width; ++k) {
            const I c0 = slice_col[k * h];
            if (c0 < 0) break;
            T xv[C];
            load_x_segment<T, C>(x, c0, n, xv);
            block_multiply<T, R, C>(slice_data + k * R * unit_stride, unit_stride, vec, xv, sum);
        }
        store_superrow<T, R>(y, sr * R, m, sum, alpha, beta);
    }
}
