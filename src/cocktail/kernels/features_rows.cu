// features_rows: one pass over the row pointers (and, for the block shapes, the per-row and per-super-row
// block counts that features_entries wrote) for cocktail.auto.features.  A block of FEATURE_TILE threads takes
// aligned tiles of FEATURE_TILE rows, so every row group of GROUP_SIZES (1..256 rows) lies in one tile and its
// widest row is a shuffle or shared-memory maximum, never a second pass.
//
// Outputs (zeroed by the caller): the length histogram (FEATURE_BUCKETS), the longest row, and per group
// size (`levels` of them, 2^level rows) counts of the groups' widest rows: counts[level][w] for w <= cap,
// counts[level][cap + 1] the wider ones, whose widths sum into over[level].  Widths below `shared_widths`
// are counted in shared memory (the common short rows would otherwise queue on a few global counters);
// the rare wider ones go straight to global memory.  For each count array k (feature_count_arrays: the 1 x c
// row-blocks per row of `widths` widths, then the blocks per super-row of the taller shapes in `heights`), into
// count_stats[k]: [sum, max, dense (left to feature_superrows, for the taller shapes), sum over aligned groups of
// 2^slice_level counts of their max, histogram (FEATURE_BUCKETS)].
#include "features.cuh"

template <typename I>
__global__ void feature_rows(const I* __restrict__ indptr, const long long rows,
                             const unsigned* __restrict__ row_counts, const int widths, const long long heights,
                             const int slice_level, const int levels, const int cap, const int shared_widths,
                             unsigned long long* __restrict__ histogram, unsigned long long* __restrict__ longest,
                             unsigned* __restrict__ group_counts, unsigned long long* __restrict__ group_over,
                             unsigned long long* __restrict__ count_stats) {
    extern __shared__ unsigned feature_rows_bins[];  // [levels][shared_widths]
    __shared__ unsigned lengths[FEATURE_BUCKETS];
    __shared__ unsigned count_bins[FEATURE_BUCKETS];
    __shared__ unsigned long long warp_max[FEATURE_TILE / 32];
    for (int i = threadIdx.x; i < levels * shared_widths; i += blockDim.x) feature_rows_bins[i] = 0u;
    for (int i = threadIdx.x; i < FEATURE_BUCKETS; i += blockDim.x) lengths[i] = 0u;
    __syncthreads();
    unsigned long long most = 0;
    const long long step = (long long)gridDim.x * FEATURE_TILE;
    for (long long base = (long long)blockIdx.x * FEATURE_TILE; base < rows; base += step) {
        const long long row = base + threadIdx.x;
        const bool in = row < rows;
        // rows past the end count as empty: the host pads the last group with zeros too
        const unsigned long long length = in ? (unsigned long long)(indptr[row + 1] - indptr[row]) : 0ull;
        feature_warp_count(lengths, in ? feature_bucket(length) : -1);
        if (levels) {  // single rows: the common widths aggregated per warp, the rest as every level's
            feature_warp_count(feature_rows_bins, in && length < (unsigned long long)shared_widths ? (int)length : -1);
        }
        most = length > most ? length : most;
        if (levels) {
            feature_group_maxima(length, warp_max, [&](int level, unsigned long long v, int first) {
                if (level >= levels || base + first >= rows) return;
                if (level == 0 && v < (unsigned long long)shared_widths) return;  // counted above
                if (v < (unsigned long long)shared_widths) {
                    atomicAdd(&feature_rows_bins[level * shared_widths + (int)v], 1u);
                } else if (v > (unsigned long long)cap) {
                    atomicAdd(&group_counts[(long long)level * (cap + 2) + cap + 1], 1u);
                    atomicAdd(&group_over[level], v);
                } else {
                    atomicAdd(&group_counts[(long long)level * (cap + 2) + (long long)v], 1u);
                }
            });
        }
    }
    // one global update per block and counter: per warp they would queue on one address
    most = feature_block_max(most);
    if (threadIdx.x == 0 && most) atomicMax(longest, most);
    for (int i = threadIdx.x; i < levels * shared_widths; i += blockDim.x) {
        if (feature_rows_bins[i]) {
            atomicAdd(&group_counts[(long long)(i / shared_widths) * (cap + 2) + i % shared_widths],
                      feature_rows_bins[i]);
        }
    }
    for (int i = threadIdx.x; i < FEATURE_BUCKETS; i += blockDim.x) {
        if (lengths[i]) atomicAdd(&histogram[i], (unsigned long long)lengths[i]);
    }
    if (!widths) return;
    feature_count_arrays(rows, widths, heights, [&](int k, int, int r, long long offset) {
        const long long length = (rows + r - 1) / r;
        unsigned long long sum = 0, top = 0, sliced = 0;
        for (int i = threadIdx.x; i < FEATURE_BUCKETS; i += blockDim.x) count_bins[i] = 0u;
        __syncthreads();
        for (long long base = (long long)blockIdx.x * FEATURE_TILE; base < length; base += step) {
            const long long at = base + threadIdx.x;
            const unsigned long long count = at < length ? row_counts[offset + at] : 0ull;
            sum += count;
            top = count > top ? count : top;
            feature_warp_count(count_bins, at < length ? feature_bucket(count) : -1);
            feature_group_maxima(count, warp_max, [&](int level, unsigned long long v, int first) {
                if (level == slice_level && base + first < length) sliced += v;
            });
        }
        sum = feature_block_sum(sum);
        sliced = feature_block_sum(sliced);
        top = feature_block_max(top);
        unsigned long long* out = count_stats + (long long)k * (4 + FEATURE_BUCKETS);
        if (threadIdx.x == 0) {
            if (sum) atomicAdd(&out[0], sum);
            if (top) atomicMax(&out[1], top);
            if (sliced) atomicAdd(&out[3], sliced);
        }
        for (int i = threadIdx.x; i < FEATURE_BUCKETS; i += blockDim.x) {
            if (count_bins[i]) atomicAdd(&out[4 + i], (unsigned long long)count_bins[i]);
        }
        __syncthreads();  // count_bins is zeroed again for the next array
    });
}
