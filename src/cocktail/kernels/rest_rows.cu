// rest_rows: the row groups of a matrix's entries off a few diagonals, for cocktail.auto.planner (the rows a
// Cocktail's later parts see once its diagonal part took its entries), in one pass.  A block of FEATURE_TILE
// threads takes aligned tiles of FEATURE_TILE rows.  Its threads share the tile's entries (a long row does not
// wait on one thread): each finds its entry's row by a binary search of the tile's row pointers and counts the
// entry when its diagonal (col - row) is one of the sorted `offsets`.  Each thread then holds one row's length less
// those entries, and the groups' widest rows are counted in features_rows' layout: counts[level][w] for w <= cap,
// counts[level][cap + 1] the wider ones, whose widths sum into over[level]; the longest row goes to `longest`.
// Widths below `shared_widths` are counted in shared memory first.  Outputs zeroed by the caller.
#include "features.cuh"

// Whether d is one of the `diagonals` sorted `offsets`.
__device__ __forceinline__ bool rest_on_diagonal(const long long* __restrict__ offsets, int diagonals, long long d) {
    int lo = 0, hi = diagonals;  // the first offset not below d is at lo once lo == hi
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (offsets[mid] < d) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < diagonals && offsets[lo] == d;
}

template <typename I>
__global__ void rest_rows(const I* __restrict__ indptr, const I* __restrict__ indices, const long long rows,
                          const long long* __restrict__ offsets, const int diagonals, const int levels, const int cap,
                          const int shared_widths, unsigned long long* __restrict__ longest,
                          unsigned long long* __restrict__ group_over, unsigned long long* __restrict__ group_counts) {
    extern __shared__ unsigned rest_rows_bins[];  // [levels][shared_widths]
    __shared__ long long tile_ptr[FEATURE_TILE + 1];
    __shared__ unsigned long long on[FEATURE_TILE];
    __shared__ unsigned long long warp_max[FEATURE_TILE / 32];
    for (int i = threadIdx.x; i < levels * shared_widths; i += blockDim.x) rest_rows_bins[i] = 0u;
    unsigned long long most = 0;
    const long long step = (long long)gridDim.x * FEATURE_TILE;
    for (long long base = (long long)blockIdx.x * FEATURE_TILE; base < rows; base += step) {
        const long long row = base + threadIdx.x;
        const bool in = row < rows;
        const int tile = (int)(rows - base < FEATURE_TILE ? rows - base : FEATURE_TILE);
        for (int i = threadIdx.x; i <= tile; i += blockDim.x) tile_ptr[i] = (long long)indptr[base + i];
        on[threadIdx.x] = 0ull;
        __syncthreads();
        for (long long j = tile_ptr[0] + threadIdx.x; j < tile_ptr[tile]; j += blockDim.x) {
            int lo = 0, hi = tile;  // tile_ptr[lo] <= j < tile_ptr[hi]: empty rows are stepped over
            while (hi - lo > 1) {
                const int mid = (lo + hi) >> 1;
                if (tile_ptr[mid] <= j) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            if (rest_on_diagonal(offsets, diagonals, (long long)indices[j] - (base + lo))) atomicAdd(&on[lo], 1ull);
        }
        __syncthreads();
        // rows past the end count as empty: the host pads the last group with zeros too
        const unsigned long long length =
            in ? (unsigned long long)(tile_ptr[threadIdx.x + 1] - tile_ptr[threadIdx.x]) - on[threadIdx.x] : 0ull;
        feature_warp_count(rest_rows_bins, levels && in && length < (unsigned long long)shared_widths ? (int)length : -1);
        most = length > most ? length : most;
        // its closing barrier also keeps tile_ptr and on until every thread has read them
        feature_group_maxima(length, warp_max, [&](int level, unsigned long long v, int first) {
            if (level >= levels || base + first >= rows) return;
            if (level == 0 && v < (unsigned long long)shared_widths) return;  // counted above
            if (v < (unsigned long long)shared_widths) {
                atomicAdd(&rest_rows_bins[level * shared_widths + (int)v], 1u);
            } else if (v > (unsigned long long)cap) {
                atomicAdd(&group_counts[(long long)level * (cap + 2) + cap + 1], 1ull);
                atomicAdd(&group_over[level], v);
            } else {
                atomicAdd(&group_counts[(long long)level * (cap + 2) + (long long)v], 1ull);
            }
        });
    }
    for (int o = 16; o; o >>= 1) {
        const unsigned long long other = __shfl_xor_sync(FEATURE_FULL_MASK, most, o);
        most = other > most ? other : most;
    }
    if ((threadIdx.x & 31) == 0 && most) atomicMax(longest, most);
    __syncthreads();
    for (int i = threadIdx.x; i < levels * shared_widths; i += blockDim.x) {
        if (rest_rows_bins[i]) {
            atomicAdd(&group_counts[(long long)(i / shared_widths) * (cap + 2) + i % shared_widths],
                      (unsigned long long)rest_rows_bins[i]);
        }
    }
}
