// bcsr: a group of lanes per superrow over blocked CSR (clSpMV §4.4.3: a warp per superrow,
// the vector-CSR strategy of Bell & Garland §4.3 on blocks).
//
// The GROUP lanes (a power of two up to 32; 32 is clSpMV's warp) stride over the superrow's
// blocks row_ptr[i] .. row_ptr[i+1]-1: each lane loads its block's C x values once and adds
// the block's R rows into R partial sums. Unit ri of block b is at (ri*nblocks + b)*C, so for
// each ri the lanes of a warp read one contiguous run of the data array. The R sums are then
// reduced over the group with xor shuffles (every lane ends with the totals) and lane ri % GROUP
// writes row i*R + ri. Superrows are dealt out to RowGroups, as rows are in csr_vector.
#include "blocks.cuh"
#include "warp.cuh"

template <typename P, typename I, int R, int C>
__global__ void bcsr(const I superrows,
                     const I m,
                     const I n,
                     const long long nblocks,
                     const int group,  // lanes per superrow: a power of two dividing 32
                     const int vec,    // data starts on a 16-byte boundary: vector loads allowed
                     const I* __restrict__ row_ptr,
                     const I* __restrict__ col,
                     const stored_t<P>* __restrict__ data,
                     COCKTAIL_PRODUCT_ARGS(P)) {
    using T = compute_t<P>;
    const RowGroups g = row_groups(group);
    const long long unit_stride = nblocks * C;  // from unit ri of a block to unit ri+1
    for (long long base = g.first; base < superrows; base += g.stride) {
        const long long i = base + g.group_in_warp;
        T sum[R];
#pragma unroll
        for (int ri = 0; ri < R; ++ri) sum[ri] = T(0);
        if (i < superrows) {
            const long long end = row_ptr[i + 1];
            for (long long b = (long long)row_ptr[i] + g.lane; b < end; b += group) {
                T xv[C];
                load_x_segment<T, C>(x, col[b], n, xv);
                block_multiply<T, R, C>(data + b * C, unit_stride, vec, xv, sum);
            }
        }
#pragma unroll
        for (int ri = 0; ri < R; ++ri) sum[ri] = group_allsum(sum[ri], group);
        if (i < superrows) {
#pragma unroll
            for (int ri = 0; ri < R; ++ri) {
                const long long row = i * R + ri;
                if ((ri & (group - 1)) == g.lane && row < m) store_y(y, row, sum[ri], alpha, beta);
            }
        }
    }
}
