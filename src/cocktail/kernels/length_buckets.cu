// length_buckets: the row-length histogram of a CSR from its row pointers, in one pass.
//
// Bucket 0 holds the empty rows and bucket b >= 1 the lengths L with 2^(b-2) < L <= 2^(b-1)
// (1, 2, 3-4, 5-8, ...): the layout of cocktail.auto.features.length_buckets.  Each block counts
// in shared memory and adds its counts to the global ones once per bucket.
#define LENGTH_BUCKETS 66

template <typename I>
__global__ void length_buckets(const I* __restrict__ indptr, const long long rows,
                               unsigned long long* __restrict__ counts) {
    __shared__ unsigned int bins[LENGTH_BUCKETS];
    for (int i = threadIdx.x; i < LENGTH_BUCKETS; i += blockDim.x) bins[i] = 0u;
    __syncthreads();
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row < rows; row += stride) {
        const long long length = (long long)indptr[row + 1] - (long long)indptr[row];
        const int bucket = length == 0 ? 0 : 65 - __clzll((unsigned long long)(length - 1));
        atomicAdd(&bins[bucket], 1u);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < LENGTH_BUCKETS; i += blockDim.x) {
        if (bins[i]) atomicAdd(&counts[i], (unsigned long long)bins[i]);
    }
}
