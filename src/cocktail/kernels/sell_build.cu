// sell_build: SELL (and ELL, a SELL of one slice) built from canonical CSR in two passes and no sort
// (cocktail.kernels.sell_build, for cocktail.formats.sell and cocktail.formats.ell).
//
// Position p of the slices holds row perm[p] (row p without a permutation); slice s = p / c holds positions
// s*c .. s*c + c - 1.
//   sell_build_slices takes a position p < m each: into longest[s] the most entries a row of slice s holds and, when
//     lo is given, into lo[s] and hi[s] the lowest and highest column stored in the slice (a row's first and last
//     entry, as a canonical row is sorted).  The caller fills longest with 0, lo with the largest long long and hi
//     with -1 (an empty slice keeps them).
//   sell_build_write takes every position p < rows (the missing rows of a last partial slice, or ELL's alignment
//     rows, included): slice s is (ptr[s+1] - ptr[s]) / c slots wide and position p's k-th slot is
//     ptr[s] + (p - s*c) + k*c; the row's entries go to its first slots (a column less base[s] where base is given:
//     16-bit short columns), `pad` and a zero value to the others.  Every slot is written: nothing needs filling
//     first.
#include "build_words.cuh"

template <typename I>
__global__ void sell_build_slices(const I* __restrict__ indptr, const I* __restrict__ indices, const long long m,
                                  const long long c, const long long* __restrict__ perm,
                                  long long* __restrict__ longest, long long* __restrict__ lo,
                                  long long* __restrict__ hi) {
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < m; p += step) {
        const long long row = perm ? perm[p] : p;
        const long long start = (long long)indptr[row], end = (long long)indptr[row + 1];
        if (end == start) continue;
        const long long s = p / c;
        atomicMax(&longest[s], end - start);
        if (lo) {
            atomicMin(&lo[s], (long long)indices[start]);
            atomicMax(&hi[s], (long long)indices[end - 1]);
        }
    }
}

template <typename W, typename I, typename C>
__global__ void sell_build_write(const I* __restrict__ indptr, const I* __restrict__ indices,
                                 const W* __restrict__ values, const long long m, const long long rows,
                                 const long long c, const long long* __restrict__ perm,
                                 const long long* __restrict__ ptr, const long long* __restrict__ base,
                                 const long long pad, C* __restrict__ col, W* __restrict__ data) {
    const W zero = build_word<W>(0ull);
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < rows; p += step) {
        const long long s = p / c;
        const long long first = ptr[s] + (p - s * c), width = (ptr[s + 1] - ptr[s]) / c;
        long long k = 0;
        if (p < m) {
            const long long row = perm ? perm[p] : p;
            const long long shift = base ? base[s] : 0;
            const long long end = (long long)indptr[row + 1];
            for (long long j = (long long)indptr[row]; j < end; ++j, ++k) {
                col[first + k * c] = (C)((long long)indices[j] - shift);
                data[first + k * c] = values[j];
            }
        }
        for (; k < width; ++k) {  // consecutive positions: the warp's writes coalesce
            col[first + k * c] = (C)pad;
            data[first + k * c] = zero;
        }
    }
}
