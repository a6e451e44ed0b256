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
