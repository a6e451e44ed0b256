// Shared by the feature kernels of cocktail.auto.features: the power-of-two length buckets, the maxima
// of aligned row groups, and open-addressed hash sets.  Layouts only: every limit comes as an argument.
#define FEATURE_BUCKETS 66
#define FEATURE_FULL_MASK 0xffffffffu
#define FEATURE_TILE 256
#define FEATURE_EMPTY 0xffffffffffffffffull

// Bucket 0 holds 0, bucket b >= 1 the values v with 2^(b-2) < v <= 2^(b-1): features.length_buckets.
__device__ __forceinline__ int feature_bucket(unsigned long long v) {
    return v == 0 ? 0 : 65 - __clzll((long long)(v - 1));
}

// Adds one to bins[bin] for every lane whose bin is not negative, with one shared atomic per distinct bin of the
// warp: a matrix's rows mostly share a length, and lanes adding to one address are serialised.  Every lane of
// the warp must call it.
__device__ __forceinline__ void feature_warp_count(unsigned* bins, int bin) {
    const unsigned same = __match_any_sync(FEATURE_FULL_MASK, bin);
    if (bin >= 0 && (int)(threadIdx.x & 31) == __ffs(same) - 1) atomicAdd(&bins[bin], (unsigned)__popc(same));
}

// The block shapes taller than one row: bit 16 w + r of `heights` is set when width w has the height r (1 < r < 16).
// Their per-super-row count arrays follow the `widths` per-row arrays (one per width, `rows` long), width by width
// and rising heights, each ceil(rows / r) long.  Calls visit(k, w, r, offset) for every count array k (height 1
// for the per-row ones), with its first count's position.
template <typename F>
__device__ void feature_count_arrays(long long rows, int widths, long long heights, F visit) {
    long long offset = 0;
    int k = 0;
    for (int w = 0; w < widths; ++w, offset += rows) visit(k++, w, 1, offset);
    for (int w = 0; w < widths; ++w) {
        for (int r = 2; r < 16; ++r) {
            if (!((heights >> (16 * w + r)) & 1)) continue;
            visit(k++, w, r, offset);
            offset += (rows + r - 1) / r;
        }
    }
}

// Adds to out[key], for every run of adjacent lanes with one key (a warp's consecutive entries: a row or
// super-row each), the number of its lanes with `flag`, with one atomic per run.  Lanes without a key pass -1.
// Every lane of the warp must call it.
__device__ __forceinline__ void feature_run_add(unsigned* out, long long key, bool flag) {
    const int lane = threadIdx.x & 31;
    const long long before = __shfl_sync(FEATURE_FULL_MASK, key, lane ? lane - 1 : 0);
    const unsigned starts = __ballot_sync(FEATURE_FULL_MASK, lane == 0 || key != before);
    const unsigned flags = __ballot_sync(FEATURE_FULL_MASK, flag);
    if (!flags || !((starts >> lane) & 1u) || key < 0) return;
    const unsigned later = lane == 31 ? 0u : starts >> (lane + 1) << (lane + 1);  // the runs after this one
    const unsigned run = (later ? (later & (0u - later)) - 1u : FEATURE_FULL_MASK) >> lane << lane;
    const unsigned n = __popc(flags & run);
    if (n) atomicAdd(&out[key], n);
}

__device__ __forceinline__ unsigned long long feature_hash(unsigned long long key) {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return key;
}

// Calls visit(level, max, first) once for every aligned group of 2^level rows (level 0..8) of the block's
// FEATURE_TILE-row tile, from one thread, with the group's largest v and the tile position of its first row.
// Every thread of a block of FEATURE_TILE threads must call it (it synchronises the block).
template <typename F>
__device__ void feature_group_maxima(unsigned long long v, unsigned long long* warp_max, F visit) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    visit(0, v, (int)threadIdx.x);
    for (int level = 1; level <= 5; ++level) {  // within a warp: shuffles
        const unsigned long long other = __shfl_xor_sync(FEATURE_FULL_MASK, v, 1 << (level - 1));
        v = other > v ? other : v;
        if ((lane & ((1 << level) - 1)) == 0) visit(level, v, (int)threadIdx.x);
    }
    if (lane == 0) warp_max[warp] = v;
    __syncthreads();
    if (threadIdx.x < FEATURE_TILE / 32) {  // across warps: thread t stands for warp t
        const int t = threadIdx.x;
        for (int level = 6; level <= 8; ++level) {
            const int span = 1 << (level - 5);
            if (t % span == 0) {
                unsigned long long most = 0;
                for (int k = t; k < t + span; ++k) most = warp_max[k] > most ? warp_max[k] : most;
                visit(level, most, t * 32);
            }
        }
    }
    __syncthreads();  // warp_max is written again by the next call
}

// Inserts key (not FEATURE_EMPTY) into a set of `slots` (a power of two): 1 when it was new, 0 when present,
// -1 when the set is full.
__device__ __forceinline__ int feature_insert(unsigned long long* set, int slots, unsigned long long key) {
    int s = (int)(feature_hash(key) & (unsigned long long)(slots - 1));
    for (int probe = 0; probe < slots; ++probe) {
        unsigned long long held = set[s];
        if (held == FEATURE_EMPTY) held = atomicCAS(&set[s], FEATURE_EMPTY, key);
        if (held == FEATURE_EMPTY) return 1;
        if (held == key) return 0;
        s = (s + 1) & (slots - 1);
    }
    return -1;
}

__device__ __forceinline__ bool feature_contains(const unsigned long long* set, int slots, unsigned long long key) {
    int s = (int)(feature_hash(key) & (unsigned long long)(slots - 1));
    for (int probe = 0; probe < slots; ++probe) {
        const unsigned long long held = set[s];
        if (held == key) return true;
        if (held == FEATURE_EMPTY) return false;
        s = (s + 1) & (slots - 1);
    }
    return false;
}
