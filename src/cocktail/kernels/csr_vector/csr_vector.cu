// csr_vector: THREADS threads per row (Bell & Garland §4.3, Fig. 18), reduced with warp shuffles.
//
// A warp holds 32 / THREADS row groups (see RowGroups): every lane of a warp runs the same
// number of iterations, so group_sum always sees all 32 lanes.
//
// ALIGNED (Baskaran & Bordawekar §4): a row's group starts at start - start % THREADS, so every
// step after the first reads an aligned segment of THREADS entries; lanes below `start` idle
// during that first step.
//
// VALUES: how an entry's value is found, in a csr, csr_pattern or csr_vi matrix (common.cuh's entry_value).
#include "warp.cuh"

template <typename P, typename I, int THREADS, bool ALIGNED, int VALUES>
__global__ void csr_vector(const I m, COCKTAIL_CODED_CSR_ARGS(P, I), COCKTAIL_PRODUCT_ARGS(P)) {
    using T = compute_t<P>;
    const RowGroups g = row_groups<THREADS>();
    for (long long base = g.first; base < m; base += g.stride) {
        const long long row = base + g.group_in_warp;
        T sum = T(0);
        if (row < m) {
            const long long start = indptr[row];
            const long long end = indptr[row + 1];
            // 64-bit j: j + THREADS may pass the int32 range when nnz is close to it.
            long long j = (ALIGNED ? start - start % THREADS : start) + g.lane;
            if (ALIGNED) {
                if (j >= start && j < end) {
                    sum += entry_value<VALUES>(data, codes, j) * load_x(x, indices[j]);
                }
                j += THREADS;
            }
            for (; j < end; j += THREADS) {
                sum += entry_value<VALUES>(data, codes, j) * load_x(x, indices[j]);
            }
        }
        sum = group_sum(sum, THREADS);
        if (g.lane == 0 && row < m) {
            store_y(y, row, sum, alpha, beta);
        }
    }
}
