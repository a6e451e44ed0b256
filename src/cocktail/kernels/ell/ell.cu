// ell: one thread per row over column-major ELLPACK arrays (Bell & Garland §4.2, Fig. 18).
//
// Slot k of row i is at k*stride + i, so consecutive threads read consecutive addresses.
// A row's entries are packed left, so the first padding slot (col == -1) ends the row.
#include "common.cuh"

template <typename P, typename I>
__global__ void ell(const I m,
                    const I width,
                    const long long stride,
                    const I* __restrict__ col,
                    const stored_t<P>* __restrict__ data,
                    COCKTAIL_PRODUCT_ARGS(P)) {
    using T = compute_t<P>;
    COCKTAIL_GRID_STRIDE_LOOP(row, m) {
        T sum = T(0);
        for (long long k = 0; k < width; ++k) {
            const long long slot = k * stride + row;
            const I c = col[slot];
            if (c < 0) break;
            sum += widen(data[slot]) * load_x(x, c);
        }
        store_y(y, row, sum, alpha, beta);
    }
}
