// sell: THREADS threads per row over sliced ELLPACK, SELL-C-sigma / SELL-P (clSpMV §4.3.2;
// Kreutzer et al.; Anzt et al.).
//
// Permuted row p lies in slice s = p / C at local row r = p % C; its entry k is slot
// slice_ptr[s] + k*C + r. The THREADS lanes of a row take k = lane, lane + THREADS, ..., so for
// one step the lanes of a warp read THREADS runs of 32 / THREADS consecutive slots. A row's
// entries are packed left, so a lane's first padding slot (col == -1) ends its share of the row.
// Lane 0 writes y[perm[p]] (y[p] when the rows are not permuted).
//
// SHORT: the columns are 16-bit offsets from slice_base[s] (SELL's short_columns), 0xFFFF for padding.
//
// A warp holds 32 / THREADS row groups (see RowGroups): every lane of a warp runs the same
// number of iterations, so group_sum always sees all 32 lanes.
#include "warp.cuh"

// p / c: the 32-bit division when both fit (always, in practice), else the 64-bit one.
__device__ __forceinline__ long long sell_slice(long long p, long long c) {
    if ((((unsigned long long)p | (unsigned long long)c) >> 32) == 0) {
        return (long long)((unsigned)p / (unsigned)c);
    }
    return p / c;
}

// The stored type of a column: I, or a 16-bit offset when SHORT.
template <typename I, bool SHORT> struct sell_column { using type = I; };
template <typename I> struct sell_column<I, true> { using type = unsigned short; };

template <typename P, typename I, int THREADS, bool SHORT = false>
__global__ void sell(const I m,
                     const long long slice_height,
                     const int permuted,
                     const long long* __restrict__ slice_ptr,
                     const typename sell_column<I, SHORT>::type* __restrict__ col,
                     const I* __restrict__ slice_base,
                     const stored_t<P>* __restrict__ data,
                     const I* __restrict__ perm,
                     COCKTAIL_PRODUCT_ARGS(P)) {
    using T = compute_t<P>;
    const RowGroups g = row_groups<THREADS>();
    const long long step = slice_height * THREADS;  // slots between a lane's entries
    for (long long base = g.first; base < m; base += g.stride) {
        const long long p = base + g.group_in_warp;
        T sum = T(0);
        if (p < m) {
            const long long s = sell_slice(p, slice_height);
            const long long r = p - s * slice_height;
            const long long end = slice_ptr[s + 1];
            const long long base = SHORT ? (long long)slice_base[s] : 0;
            // slot < end  <=>  k < slice_width[s], since r < C.
            for (long long slot = slice_ptr[s] + g.lane * slice_height + r; slot < end; slot += step) {
                const auto c = col[slot];
                if (SHORT ? c == 0xFFFFu : c < 0) break;
                sum += widen(data[slot]) * load_x(x, base + c);
            }
        }
        sum = group_sum(sum, THREADS);
        if (g.lane == 0 && p < m) {
            store_y(y, permuted ? (long long)perm[p] : p, sum, alpha, beta);
        }
    }
}
