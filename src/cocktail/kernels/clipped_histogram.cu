// clipped_histogram: counts of non-negative values, those above `cap` counted together (and summed);
// with `group` > 1, of the largest value of every aligned group of `group` consecutive values (the
// last group may be partial): the widest row of every group of rows.
//
// Each block counts in shared memory and adds its counts to the global ones once per bin, so a
// value that most entries share (one row length, one diagonal) costs shared-memory atomics only.
// counts has cap + 2 bins (bin cap + 1: the values above cap); over_sum receives their sum.
extern "C" __global__ void clipped_histogram(const long long* __restrict__ values,
                                             const long long n,
                                             const long long group,
                                             const int cap,
                                             unsigned long long* __restrict__ counts,
                                             unsigned long long* __restrict__ over_sum) {
    extern __shared__ unsigned int clipped_histogram_bins[];
    unsigned int* bins = clipped_histogram_bins;
    for (int i = threadIdx.x; i < cap + 2; i += blockDim.x) bins[i] = 0u;
    __syncthreads();
    unsigned long long over = 0;
    const long long groups = (n + group - 1) / group;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < groups; k += stride) {
        const long long first = k * group;
        const long long last = first + group < n ? first + group : n;
        long long v = values[first];
        for (long long i = first + 1; i < last; ++i) v = values[i] > v ? values[i] : v;
        if (v > cap) {
            over += (unsigned long long)v;
            atomicAdd(&bins[cap + 1], 1u);
        } else {
            atomicAdd(&bins[(int)v], 1u);
        }
    }
    if (over) atomicAdd(over_sum, over);
    __syncthreads();
    for (int i = threadIdx.x; i < cap + 2; i += blockDim.x) {
        if (bins[i]) atomicAdd(&counts[i], (unsigned long long)bins[i]);
    }
}
