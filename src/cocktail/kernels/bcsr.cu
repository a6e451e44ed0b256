// bcsr: a group of lanes per superrow over blocked CSR (clSpMV §4.4.3: a warp per superrow,
// the vector-CSR strategy of Bell & Garland §4.3 on blocks).
//
// The GROUP lanes (a power of two up to 32; 32 is clSpMV's warp) stride over the superrow's
// blocks row_ptr[i] .. row_ptr[i+1]-1: each lane loads its block's C x values once and adds
// the block's R rows into R partial sums. Unit ri of block b is at (ri*nblocks + b)*C, so for
// each ri the lanes of a warp read one contiguous run of the data array. The R sums are then
// reduced over the group with xor shuffles (every lane ends with the totals) and lane ri % GROUP
// writes row i*R + ri. Superrows are dealt out with a warp-uniform base, as in csr_vector, so
// every lane of a warp runs the same iterations and the full-mask shuffles see all 32 lanes.
#include "blocks.cuh"

// Sum over groups of `width` consecutive lanes (a power of two); every lane of a group ends
// with the group's total. Every lane of the warp must call it.
template <typename T>
__device__ __forceinline__ T bcsr_group_allsum(T v, int width) {
    for (int offset = width / 2; offset > 0; offset /= 2) {
        v += __shfl_xor_sync(COCKTAIL_FULL_MASK, v, offset, width);
    }
    return v;
}

template <typename T, typename I, int R, int C>
__global__ void bcsr(const I superrows,
                     const I m,
                     const I n,
                     const long long nblocks,
                     const int group,  // lanes per superrow: a power of two dividing 32
                     const int vec,    // data starts on a 16-byte boundary: vector loads allowed
                     const I* __restrict__ row_ptr,
                     const I* __restrict__ col,
                     const T* __restrict__ data,
                     const T* __restrict__ x,
                     T* __restrict__ y,
                     const T alpha,
                     const T beta) {
    constexpr int WARP = 32;
    const int lane = threadIdx.x & (group - 1);
    const int group_in_warp = (threadIdx.x % WARP) / group;
    const long long first_group = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / group - group_in_warp;
    const long long groups = (long long)gridDim.x * blockDim.x / group;
    const long long unit_stride = nblocks * C;  // from unit ri of a block to unit ri+1

    for (long long base = first_group; base < superrows; base += groups) {  // the same on all lanes
        const long long i = base + group_in_warp;
        T sum[R];
#pragma unroll
        for (int ri = 0; ri < R; ++ri) sum[ri] = T(0);
        if (i < superrows) {
            const long long end = row_ptr[i + 1];
            for (long long b = (long long)row_ptr[i] + lane; b < end; b += group) {
                T xv[C];
                load_x_segment<T, C>(x, col[b], n, xv);
                block_multiply<T, R, C>(data + b * C, unit_stride, vec, xv, sum);
            }
        }
#pragma unroll
        for (int ri = 0; ri < R; ++ri) sum[ri] = bcsr_group_allsum(sum[ri], group);
        if (i < superrows) {
#pragma unroll
            for (int ri = 0; ri < R; ++ri) {
                const long long row = i * R + ri;
                if ((ri & (group - 1)) == lane && row < m) store_y(y, row, sum[ri], alpha, beta);
            }
        }
    }
}
