// diagonal_build: the diagonal formats DIA, DIA-VI and BDIA built from canonical CSR in two passes and no sort
// (cocktail.kernels.diagonal_build, for cocktail.formats.dia).
//
// A possible diagonal is numbered t = col - row + (m - 1), 0 <= t < size = m + n - 1.  The host's buffer of S holds
// the flags of the possible diagonals, then a counter of the explicit zeros (stored values equal to zero), and, for
// BDIA's bands, a counter of the bands and the band-start flags:
//   [0, size)                flags[t] = 1 where some entry lies on diagonal t          (diagonal_build_marks)
//   size                     the explicit zeros                                        (diagonal_build_marks)
//   size + 1                 the bands                                                 (diagonal_build_edges)
//   [size + 2, 2 size + 2)   1 where an occupied diagonal t starts a band (t - 1 is not occupied)
// The caller zeroes it, scans it (inclusive), and reads the number of diagonals (scan[size - 1]), of explicit zeros and
// of bands after them in one transfer.  A diagonal's index is then scan[t] - 1, a band's scan[size + 2 + t] - band_base
// - 1 (band_base: scan[size + 1], everything before the band-start flags).  diagonal_build_fill writes the sorted
// offsets (and the bands' first offsets and pointers) from the flags, and every slot data[d * stride + row] of the
// (diagonals, stride) array, a thread per row merging its entries (sorted by column, so by diagonal) with the
// diagonals: an entry's value where one lies, `fill` elsewhere and on the rows past m.  Neither output needs zeroing.
#include "build_words.cuh"

template <typename W, typename I, typename S>
__global__ void diagonal_build_marks(const I* __restrict__ indptr, const I* __restrict__ indices,
                                     const W* __restrict__ values, const long long m,
                                     const unsigned long long zero_mask, const long long size, S* __restrict__ flags) {
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row < m; row += step) {
        long long zeros = 0;
        const long long end = (long long)indptr[row + 1];
        for (long long j = (long long)indptr[row]; j < end; ++j) {
            flags[(long long)indices[j] - row + (m - 1)] = (S)1;
            zeros += build_is_zero(values[j], zero_mask) ? 1 : 0;
        }
        if (zeros) build_add(&flags[size], zeros);
    }
}

template <typename S>
__global__ void diagonal_build_edges(const long long size, S* __restrict__ flags) {
    const long long step = (long long)gridDim.x * blockDim.x;
    long long bands = 0;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < size; t += step) {
        const bool starts = flags[t] && (t == 0 || !flags[t - 1]);
        flags[size + 2 + t] = (S)(starts ? 1 : 0);
        bands += starts ? 1 : 0;
    }
    if (bands) build_add(&flags[size + 1], bands);
}

template <typename W, typename I, typename S>
__global__ void diagonal_build_fill(const I* __restrict__ indptr, const I* __restrict__ indices,
                                    const W* __restrict__ values, const long long m, const long long size,
                                    const S* __restrict__ flags, const S* __restrict__ scan, const long long diagonals,
                                    const long long stride, const unsigned long long fill_bits,
                                    I* __restrict__ offsets, W* __restrict__ data, const long long band_base,
                                    const long long bands, I* __restrict__ band_offsets,
                                    long long* __restrict__ band_ptr) {
    const W fill = build_word<W>(fill_bits);
    const long long step = (long long)gridDim.x * blockDim.x;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (long long t = first; t < size; t += step) {
        if (!flags[t]) continue;
        const long long d = (long long)scan[t] - 1;
        offsets[d] = (I)(t - (m - 1));
        if (band_offsets && flags[size + 2 + t]) {
            const long long b = (long long)scan[size + 2 + t] - band_base - 1;
            band_offsets[b] = (I)(t - (m - 1));
            band_ptr[b] = d;
        }
    }
    if (band_ptr && first == 0) band_ptr[bands] = diagonals;
    for (long long row = first; row < stride; row += step) {
        // the row's entries in column order, so in diagonal order: e is the diagonal of entry j (-1 past them)
        long long j = row < m ? (long long)indptr[row] : 0;
        const long long end = row < m ? (long long)indptr[row + 1] : 0;
        long long e = j < end ? (long long)scan[(long long)indices[j] - row + (m - 1)] - 1 : -1;
        for (long long d = 0; d < diagonals; ++d) {  // every thread at the same d: the warp's writes coalesce
            if (d == e) {
                data[d * stride + row] = values[j];
                ++j;
                e = j < end ? (long long)scan[(long long)indices[j] - row + (m - 1)] - 1 : -1;
            } else {
                data[d * stride + row] = fill;
            }
        }
    }
}
