// block_build: the blocked formats BCSR, BELL and SBELL built from canonical CSR in two passes and no sort
// (cocktail.kernels.block_build, for cocktail.formats.block_grid).
//
// A thread takes a super-row: its r rows are each sorted by column, so its distinct column blocks (col / c) come
// rising from a merge of r sorted lists, the order block_grid.extract's sort gives them.  The super-rows fall into
// groups of `group` consecutive ones (BCSR 1, SBELL a slice, BELL one group of all) and a group's blocks are laid
// out from the host's pointer ptr[g] (in block slots):
//   block_build_counts writes, for every group g, the most blocks a super-row of it holds times `group` (its block
//     slots: BCSR a super-row's count, SBELL K_s * h, BELL K * stride) into out[1 + g] with out[0] = 0, and the
//     number of stored values equal to zero (explicit zeros) into out[groups + 1]; the caller's inclusive scan of
//     out is then the groups' pointers, followed by their total plus that count.  `out` zeroed by the caller.
//   block_build_write takes every super-row slot s < slots of the layout (alignment rows and the missing super-rows
//     of a partial last slice included): slot u = s % group of group g = s / group has width (ptr[g+1] - ptr[g]) /
//     group; its k-th block's first column goes to col[ptr[g] + u + k * group] (-1 for a padding slot) and the unit
//     ri of that block to data[((ptr[g] * pmul + u + k * kstep + ri * rstep) * c) ...] (c values).  Every cell is
//     written (0 for fill and padding), so neither output needs zeroing first.
#include "build_words.cuh"

// The most rows of a super-row (the largest block height; the host checks r against it).
#define BLOCK_BUILD_ROWS 8
#define BLOCK_BUILD_NONE 0x7fffffffffffffffLL

// Walks super-row `superrow`'s distinct column blocks in rising order: block(k, bj) for its k-th block (column block
// bj), then entry(k, ri, j, cj) for each of that block's entries (row ri of the super-row, entry j of the CSR, column
// cj in the block), row by row and in column order within a row.  Returns the number of blocks.
template <typename I, typename Block, typename Entry>
__device__ __forceinline__ long long block_build_walk(const I* __restrict__ indptr, const I* __restrict__ indices,
                                                      const long long m, const long long superrow, const int r,
                                                      const long long c, Block block, Entry entry) {
    long long at[BLOCK_BUILD_ROWS], end[BLOCK_BUILD_ROWS], head[BLOCK_BUILD_ROWS];
    const long long first = superrow * r;
    const int rows = (int)(m - first < r ? m - first : r);
    for (int k = 0; k < rows; ++k) {
        at[k] = (long long)indptr[first + k];
        end[k] = (long long)indptr[first + k + 1];
        head[k] = at[k] < end[k] ? (long long)indices[at[k]] / c : BLOCK_BUILD_NONE;
    }
    long long count = 0;
    for (;;) {
        long long bj = BLOCK_BUILD_NONE;
        for (int k = 0; k < rows; ++k) bj = head[k] < bj ? head[k] : bj;
        if (bj == BLOCK_BUILD_NONE) return count;
        block(count, bj);
        for (int k = 0; k < rows; ++k) {
            while (head[k] == bj) {
                entry(count, k, at[k], (long long)indices[at[k]] - bj * c);
                ++at[k];
                head[k] = at[k] < end[k] ? (long long)indices[at[k]] / c : BLOCK_BUILD_NONE;
            }
        }
        ++count;
    }
}

template <typename W, typename I>
__global__ void block_build_counts(const I* __restrict__ indptr, const I* __restrict__ indices,
                                   const W* __restrict__ values, const long long m, const long long superrows,
                                   const int r, const long long c, const long long group, const long long groups,
                                   const unsigned long long zero_mask, long long* __restrict__ out) {
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long s = (long long)blockIdx.x * blockDim.x + threadIdx.x; s < superrows; s += step) {
        long long zeros = 0;
        const long long count = block_build_walk(
            indptr, indices, m, s, r, c, [](long long, long long) {},
            [&](long long, int, long long j, long long) { zeros += build_is_zero(values[j], zero_mask) ? 1 : 0; });
        if (count) build_max(&out[1 + s / group], count * group);
        if (zeros) build_add(&out[groups + 1], zeros);
    }
}

template <typename W, typename I>
__global__ void block_build_write(const I* __restrict__ indptr, const I* __restrict__ indices,
                                  const W* __restrict__ values, const long long m, const long long superrows,
                                  const int r, const long long c, const long long group, const long long slots,
                                  const long long* __restrict__ ptr, const long long kstep, const long long rstep,
                                  const long long pmul, I* __restrict__ col, W* __restrict__ data) {
    const W zero = build_word<W>(0ull);
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long s = (long long)blockIdx.x * blockDim.x + threadIdx.x; s < slots; s += step) {
        const long long g = s / group, u = s % group;
        const long long first = ptr[g], width = (ptr[g + 1] - first) / group;
        const long long base = first * pmul + u;  // the unit of block k, row ri: base + k * kstep + ri * rstep
        auto open = [&](long long k, long long column) {  // the block's first column (-1: padding), its cells zeroed
            col[first + u + k * group] = (I)column;
            for (int ri = 0; ri < r; ++ri) {
                W* unit = data + (base + k * kstep + ri * rstep) * c;
                for (long long cj = 0; cj < c; ++cj) unit[cj] = zero;
            }
        };
        long long k = 0;
        if (s < superrows) {
            k = block_build_walk(
                indptr, indices, m, s, r, c, [&](long long kk, long long bj) { open(kk, bj * c); },
                [&](long long kk, int ri, long long j, long long cj) {
                    data[(base + kk * kstep + ri * rstep) * c + cj] = values[j];
                });
        }
        for (; k < width; ++k) open(k, -1);
    }
}
