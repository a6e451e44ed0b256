// csr_vector: THREADS threads per row (Bell & Garland §4.3, Fig. 18), reduced with warp shuffles.
//
// A warp holds 32 / THREADS row groups. Rows are dealt out with a warp-uniform base so every
// lane of a warp runs the same number of iterations and group_sum always sees all 32 lanes.
//
// ALIGNED (Baskaran & Bordawekar §4): a row's group starts at start - start % THREADS, so every
// step after the first reads an aligned segment of THREADS entries; lanes below `start` idle
// during that first step.
#include "common.cuh"

template <typename T, typename I, int THREADS, bool ALIGNED>
__global__ void csr_vector(const I m,
                           const I* __restrict__ indptr,
                           const I* __restrict__ indices,
                           const T* __restrict__ data,
                           const T* __restrict__ x,
                           T* __restrict__ y,
                           const T alpha,
                           const T beta) {
    constexpr int WARP = 32;
    static_assert(THREADS >= 1 && THREADS <= WARP && (THREADS & (THREADS - 1)) == 0,
                  "THREADS must be a power of two dividing the warp");
    const int lane = threadIdx.x % THREADS;                 // position in the row group
    const int group_in_warp = (threadIdx.x % WARP) / THREADS;
    const long long first_group = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / THREADS - group_in_warp;
    const long long groups = (long long)gridDim.x * blockDim.x / THREADS;

    for (long long base = first_group; base < m; base += groups) {  // base is the same on all lanes
        const long long row = base + group_in_warp;
        T sum = T(0);
        if (row < m) {
            const long long start = indptr[row];
            const long long end = indptr[row + 1];
            // 64-bit j: j + THREADS may pass the int32 range when nnz is close to it.
            long long j = (ALIGNED ? start - start % THREADS : start) + lane;
            if (ALIGNED) {
                if (j >= start && j < end) {
                    sum += data[j] * load_x(x, indices[j]);
                }
                j += THREADS;
            }
            for (; j < end; j += THREADS) {
                sum += data[j] * load_x(x, indices[j]);
            }
        }
        sum = group_sum(sum, THREADS);
        if (lane == 0 && row < m) {
            store_y(y, row, sum, alpha, beta);
        }
    }
}
