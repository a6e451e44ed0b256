// dia: one thread per row over the diagonal format (Bell & Garland §4.1, Fig. 15-16).
//
// The block stages the diagonal offsets in shared memory (StagedOffsets). The row loop iterates
// on a block-uniform base so that every thread of the block reaches each __syncthreads,
// including threads whose row is past the end of the matrix.
#include "diagonals.cuh"

template <typename T, typename I>
__global__ void dia(const I m,
                    const I n,
                    const I ndiag,
                    const long long stride,
                    const I* __restrict__ offsets,
                    const T* __restrict__ data,
                    COCKTAIL_PRODUCT_ARGS(T)) {
    extern __shared__ __align__(16) unsigned char dia_shared[];
    const StagedOffsets<I> staged(reinterpret_cast<I*>(dia_shared), offsets, ndiag);
    staged.stage_once();
    __syncthreads();
    for (long long base = (long long)blockIdx.x * blockDim.x; base < m; base += grid_threads()) {
        const long long row = base + threadIdx.x;
        const bool active = row < m;
        T sum = T(0);
        for (long long d0 = 0; d0 < ndiag; d0 += blockDim.x) {
            const int count = staged.stage(d0);
            if (active) {
                for (int k = 0; k < count; ++k) {
                    const long long col = row + (long long)staged.staged[k];
                    if (col >= 0 && col < n) {
                        sum += data[(d0 + k) * stride + row] * load_x(x, col);
                    }
                }
            }
        }
        if (active) store_y(y, row, sum, alpha, beta);
    }
}
