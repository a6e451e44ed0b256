// dia: one thread per row over the diagonal format (Bell & Garland §4.1, Fig. 15-16).
//
// The block stages the diagonal offsets in shared memory, blockDim.x at a time. The row
// loop iterates on a block-uniform base so that every thread of the block reaches each
// __syncthreads, including threads whose row is past the end of the matrix.
#include "diagonals.cuh"

template <typename P, typename I>
__global__ void dia(const I m,
                    const I n,
                    const I ndiag,
                    const long long stride,
                    const I* __restrict__ offsets,
                    const stored_t<P>* __restrict__ data,
                    COCKTAIL_PRODUCT_ARGS(P)) {
    using T = compute_t<P>;
    extern __shared__ __align__(16) unsigned char dia_shared[];
    I* staged = reinterpret_cast<I*>(dia_shared);  // blockDim.x offsets
    const int tid = threadIdx.x;
    const long long chunk = blockDim.x;
    // With a single chunk the offsets are staged once for the whole grid-stride loop.
    const bool staged_once = (long long)ndiag <= chunk;
    if (staged_once) {
        if (tid < ndiag) staged[tid] = offsets[tid];
        __syncthreads();
    }
    const long long grid_stride = (long long)gridDim.x * blockDim.x;
    for (long long base = (long long)blockIdx.x * blockDim.x; base < m; base += grid_stride) {
        const long long row = base + tid;
        const bool active = row < m;
        T sum = T(0);
        for (long long d0 = 0; d0 < ndiag; d0 += chunk) {
            if (!staged_once) stage_offsets(staged, offsets, ndiag, d0, tid);
            if (active) {
                const long long left = (long long)ndiag - d0;
                const int count = left < chunk ? (int)left : (int)chunk;
                for (int k = 0; k < count; ++k) {
                    const long long col = row + (long long)staged[k];
                    if (col >= 0 && col < n) {
                        sum += widen(data[(d0 + k) * stride + row]) * load_x(x, col);
                    }
                }
            }
        }
        if (active) store_y(y, row, sum, alpha, beta);
    }
}
