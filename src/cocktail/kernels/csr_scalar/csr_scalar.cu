// csr_scalar: one thread per row (Bell & Garland §4.3, Fig. 17); VALUES: csr, csr_pattern or csr_vi (entry_value).
#include "common.cuh"

template <typename P, typename I, int VALUES>
__global__ void csr_scalar(const I m, COCKTAIL_CODED_CSR_ARGS(P, I), COCKTAIL_PRODUCT_ARGS(P)) {
    using T = compute_t<P>;
    COCKTAIL_GRID_STRIDE_LOOP(row, m) {
        T sum = T(0);
        const I end = indptr[row + 1];
        for (I j = indptr[row]; j < end; ++j) {
            sum += entry_value<VALUES>(data, codes, j) * load_x(x, indices[j]);
        }
        store_y(y, row, sum, alpha, beta);
    }
}
