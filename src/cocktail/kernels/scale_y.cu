// scale_y: y = beta * y ahead of kernels that add their products into y (the COO kernels).
// beta == 0 writes zeros without reading y (NaN or Inf there never propagate); beta == 1
// returns at once, so the launch costs no memory traffic.
template <typename T>
__global__ void scale_y(const long long n, T* __restrict__ y, const T beta) {
    if (beta == T(1)) {
        return;
    }
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = (beta == T(0)) ? T(0) : beta * y[i];
    }
}
