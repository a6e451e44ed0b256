// demo_rows: the plug-in test kernel, one thread per row of a CSR matrix.
#include "common.cuh"

template <typename P, typename I>
__global__ void demo_rows(const I m, COCKTAIL_CSR_ARGS(P, I), COCKTAIL_PRODUCT_ARGS(P)) {
    using T = compute_t<P>;
    COCKTAIL_GRID_STRIDE_LOOP(row, m) {
        T sum = T(0);
        for (I j = indptr[row]; j < indptr[row + 1]; ++j) {
            sum += widen(data[j]) * load_x(x, indices[j]);
        }
        store_y(y, row, sum, alpha, beta);
    }
}
