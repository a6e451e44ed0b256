// csr_scalar: one thread per row (Bell & Garland §4.3, Fig. 17).
#include "common.cuh"

template <typename T, typename I>
__global__ void csr_scalar(const I m,
                           const I* __restrict__ indptr,
                           const I* __restrict__ indices,
                           const T* __restrict__ data,
                           const T* __restrict__ x,
                           T* __restrict__ y,
                           const T alpha,
                           const T beta) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row < m; row += stride) {
        T sum = T(0);
        const I end = indptr[row + 1];
        for (I j = indptr[row]; j < end; ++j) {
            sum += data[j] * load_x(x, indices[j]);
        }
        store_y(y, row, sum, alpha, beta);
    }
}
