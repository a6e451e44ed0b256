// part_split: a Cocktail's canonical CSR split among its parts in two passes and no sort
// (cocktail.kernels.part_split, for cocktail.formats.cocktail).
//
// Part p is described by codes[p]: -1 for a ("diagonals", offsets) part, else the most entries of a row it takes
// (("row_prefix", k): k; ("rest",): every entry, the matrix's entry count).  table[t], for the possible diagonal
// t = col - row + (m - 1), names the first diagonals part listing it, `parts` where none does (no table: none does).
// Each entry goes to the first part, in order, that takes it: a diagonals part the table names, a prefix part that
// took fewer than its k entries of the row so far (the first k entries no earlier part took, since every entry
// reaching it until then was taken), or no part (`parts`).
//   part_split_count takes a row each, walks its entries in order, writes each entry's part into part_of and counts
//     part p's entries of the row at counts[p * (m + 1) + row + 1] (those counters are its state: zeroed by the
//     caller, touched by that row's thread alone).  The caller's scan of counts[p * (m + 1) ...] is part p's indptr.
//   part_split_fill takes a row each and copies the row's entries of part `part`, in order, from part_indptr[row]
//     on.  One launch per part that holds entries.
#include "build_words.cuh"

template <typename I>
__global__ void part_split_count(const I* __restrict__ indptr, const I* __restrict__ indices, const long long m,
                                 const long long parts, const long long* __restrict__ codes,
                                 const unsigned char* __restrict__ table, I* __restrict__ counts,
                                 unsigned char* __restrict__ part_of) {
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row < m; row += step) {
        const long long end = (long long)indptr[row + 1];
        for (long long j = (long long)indptr[row]; j < end; ++j) {
            const long long named = table ? (long long)table[(long long)indices[j] - row + (m - 1)] : parts;
            long long part = parts;
            for (long long p = 0; p < parts; ++p) {
                const long long code = codes[p];
                I* taken = counts + p * (m + 1) + row + 1;
                if (code < 0 ? named == p : (long long)*taken < code) {
                    ++*taken;
                    part = p;
                    break;
                }
            }
            part_of[j] = (unsigned char)part;
        }
    }
}

template <typename W, typename I>
__global__ void part_split_fill(const I* __restrict__ indptr, const I* __restrict__ indices,
                                const W* __restrict__ values, const long long m,
                                const unsigned char* __restrict__ part_of, const long long part,
                                const I* __restrict__ part_indptr, I* __restrict__ part_indices,
                                W* __restrict__ part_values) {
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row < m; row += step) {
        long long at = (long long)part_indptr[row];
        const long long end = (long long)indptr[row + 1];
        for (long long j = (long long)indptr[row]; j < end; ++j) {
            if ((long long)part_of[j] != part) continue;
            part_indices[at] = indices[j];
            part_values[at] = values[j];
            ++at;
        }
    }
}
