// bell: one thread per superrow over blocked ELLPACK (clSpMV §4.4.1, the ELL strategy on blocks).
//
// Slot k of superrow s holds col[k*stride + s], and unit ri of its block is at
// ((k*R + ri)*stride + s)*C: for each k and ri, consecutive threads read consecutive 1 x C
// units. A superrow's blocks are packed left, so the first padding slot (col == -1) ends it.
// The C x values of a block are loaded once and reused by its R rows.
#include "blocks.cuh"

template <typename T, typename I, int R, int C>
__global__ void bell(const I superrows,
                     const I m,
                     const I n,
                     const I width,           // K: block slots per superrow
                     const long long stride,  // superrows rounded up to the format's align
                     const int vec,           // data starts on a 16-byte boundary: vector loads allowed
                     const I* __restrict__ col,
                     const T* __restrict__ data,
                     COCKTAIL_PRODUCT_ARGS(T)) {
    const long long unit_stride = stride * C;  // from unit ri of a block to unit ri+1
    COCKTAIL_GRID_STRIDE_LOOP(s, superrows) {
        T sum[R];
#pragma unroll
        for (int ri = 0; ri < R; ++ri) sum[ri] = T(0);
        for (long long k = 0; k < width; ++k) {
            const I c0 = col[k * stride + s];
            if (c0 < 0) break;
            T xv[C];
            load_x_segment<T, C>(x, c0, n, xv);
            block_multiply<T, R, C>(data + (k * R * stride + s) * C, unit_stride, vec, xv, sum);
        }
        store_superrow<T, R>(y, s * R, m, sum, alpha, beta);
    }
}
