// csr_scalar: one thread per row (Bell & Garland §4.3, Fig. 17); PATTERN: a csr_pattern matrix (entry_value).
#include "common.cuh"

template <typename P, typename I, bool PATTERN>
__global__ void csr_scalar(const I m, COCKTAIL_CSR_ARGS(P, I), COCKTAIL_PRODUCT_ARGS(P)) {
    using T = compute_t<P>;
    COCKTAIL_GRID_STRIDE_LOOP(row, m) {
        T sum = T(0);
        const I end = indptr[row + 1];
        for (I j = indptr[row]; j < end; ++j) {
            sum += entry_value<PATTERN>(data, j) * load_x(x, indices[j]);
        }
        store_y(y, row, sum, alpha, beta);
    }
}
