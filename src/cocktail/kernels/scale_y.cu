// scale_y: y = beta * y ahead of kernels that add their products into y (the COO kernels).
// beta == 0 writes zeros without reading y (NaN or Inf there never propagate); beta == 1
// returns at once, so the launch costs no memory traffic.
// P: the product's precision (precision.cuh); y in its operand type, beta in its arithmetic type.
#include "precision.cuh"

template <typename P>
__global__ void scale_y(const long long n, operand_t<P>* __restrict__ y, const compute_t<P> beta) {
    using T = compute_t<P>;
    if (beta == T(1)) {
        return;
    }
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = narrow<operand_t<P>>((beta == T(0)) ? T(0) : beta * widen(y[i]));
    }
}
