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

// The mask of this lane's run when it is the first lane of a run of adjacent lanes holding one key (a warp's
// consecutive entries: a row or a super-row), else 0; lanes without a key pass -1 and get 0.  Every lane of the warp
// must call it.
__device__ __forceinline__ unsigned feature_run(long long key) {
    const int lane = threadIdx.x & 31;
    const long long before = __shfl_sync(FEATURE_FULL_MASK, key, lane ? lane - 1 : 0);
    const unsigned starts = __ballot_sync(FEATURE_FULL_MASK, lane == 0 || key != before);
    if (!((starts >> lane) & 1u) || key < 0) return 0u;
    const unsigned later = lane == 31 ? 0u : starts >> (lane + 1) << (lane + 1);  // the runs after this one
    return (later ? (later & (0u - later)) - 1u : FEATURE_FULL_MASK) >> lane << lane;
}

// Adds to *at, from the first lane of each run (`run`: feature_run's answer, `at` that lane's counter), the number
// of the run's lanes with `flag`: one atomic per run.  Every lane of the warp must call it.
__device__ __forceinline__ void feature_run_count(unsigned* at, unsigned run, bool flag) {
    const unsigned n = __popc(__ballot_sync(FEATURE_FULL_MASK, flag) & run);
    if (n) atomicAdd(at, n);
}

// feature_run_count into out[key] for the runs of `key`.  Every lane of the warp must call it.
__device__ __forceinline__ void feature_run_add(unsigned* out, long long key, bool flag) {
    const unsigned run = feature_run(key);
    feature_run_count(run ? out + key : out, run, flag);
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

// Division of non-negative values by a positive divisor below 2^32: a multiply and a shift for values below 2^31
// (Granlund & Montgomery, round-up variant: magic = ceil(2^(31 + l) / d) with 2^l >= d is exact there), the
// 64-bit division (a long subroutine) past them.
struct FeatureDivisor {
    unsigned d, magic;
    int shift;
};

__device__ __forceinline__ FeatureDivisor feature_divisor(long long d) {
    d = d < 1 ? 1 : d;
    int l = 0;
    while ((1ll << l) < d) ++l;
    const unsigned long long magic = ((1ull << (31 + l)) + (unsigned long long)d - 1ull) / (unsigned long long)d;
    return {(unsigned)d, (unsigned)magic, 31 + l};
}

__device__ __forceinline__ long long feature_div(long long x, const FeatureDivisor& v) {
    return x < (1ll << 31) ? (long long)(((unsigned long long)x * v.magic) >> v.shift) : x / (long long)v.d;
}

// The sum of v over the block, in thread 0 (the others get a part).  Every thread of the block must call it.
__device__ unsigned long long feature_block_sum(unsigned long long v) {
    __shared__ unsigned long long warp_sums[32];
    for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(FEATURE_FULL_MASK, v, o);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < (int)(blockDim.x >> 5); ++w) v += warp_sums[w];
    }
    __syncthreads();  // warp_sums is written again by the next call
    return v;
}

// The largest v over the block, in thread 0 (the others get a part).  Every thread of the block must call it.
__device__ unsigned long long feature_block_max(unsigned long long v) {
    __shared__ unsigned long long warp_maxima[32];
    for (int o = 16; o; o >>= 1) {
        const unsigned long long other = __shfl_xor_sync(FEATURE_FULL_MASK, v, o);
        v = other > v ? other : v;
    }
    if ((threadIdx.x & 31) == 0) warp_maxima[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < (int)(blockDim.x >> 5); ++w) v = warp_maxima[w] > v ? warp_maxima[w] : v;
    }
    __syncthreads();  // warp_maxima is written again by the next call
    return v;
}

// The largest value at or before each lane (an inclusive max-scan over the warp).  Every lane must call it.
__device__ __forceinline__ int feature_warp_max_scan(int v) {
    const int lane = threadIdx.x & 31;
    for (int d = 1; d < 32; d <<= 1) {
        const int other = __shfl_sync(FEATURE_FULL_MASK, v, lane >= d ? lane - d : lane);
        v = other > v ? other : v;
    }
    return v;
}

// ORs `bits` into words[word] for every lane whose word is not negative, one shared atomic per run of adjacent lanes
// holding one word (a row's sorted columns put up to 32 lanes on one word, which would queue).  Merging a lane of
// the same word outside the run is harmless: the run's last lane ends with at least its run's bits.  Every lane of
// the warp must call it.
__device__ __forceinline__ void feature_warp_or(unsigned* words, int word, unsigned bits) {
    const int lane = threadIdx.x & 31;
    for (int d = 1; d < 32; d <<= 1) {
        const int from = lane >= d ? lane - d : lane;
        const unsigned other = __shfl_sync(FEATURE_FULL_MASK, bits, from);
        if (__shfl_sync(FEATURE_FULL_MASK, word, from) == word) bits |= other;
    }
    const int next = __shfl_sync(FEATURE_FULL_MASK, word, lane < 31 ? lane + 1 : lane);
    if (word >= 0 && (lane == 31 || next != word)) atomicOr(&words[word], bits);
}

// The largest i in [lo, hi] with indptr[i] <= entry (indptr[lo] <= entry), by a warp probing 32 rows a step.
// Every lane of the warp must call it.
template <typename I>
__device__ long long feature_warp_row_of(const I* indptr, long long entry, long long lo, long long hi) {
    const int lane = threadIdx.x & 31;
    while (lo < hi) {
        const long long step = (hi - lo + 31) >> 5, probe = lo + (lane + 1) * step;
        const bool below = probe <= hi && (long long)indptr[probe] <= entry;
        lo += __popc(__ballot_sync(FEATURE_FULL_MASK, below)) * step;  // the probes below are a prefix of lanes
        hi = lo + step - 1 < hi ? lo + step - 1 : hi;
    }
    return lo;
}

// The first position in [lo, hi) of the sorted indices whose value is at least x (hi when none): a gallop from
// `guess` (a row like its neighbours, a band's or a FEM block row's, takes a load or two), then a bisection.
template <typename I>
__device__ long long feature_lower_bound(const I* indices, long long lo, long long hi, long long guess, long long x) {
    if (lo >= hi) return lo;
    guess = guess < lo ? lo : guess >= hi ? hi - 1 : guess;
    if ((long long)indices[guess] >= x) {  // the answer is in [lo, guess]
        hi = guess;
        for (long long step = 1; hi - step >= lo; step *= 2) {
            if ((long long)indices[hi - step] < x) {
                lo = hi - step + 1;
                break;
            }
            hi -= step;
        }
    } else {  // in [guess + 1, hi]
        lo = guess + 1;
        for (long long step = 1; lo + step - 1 < hi; step *= 2) {
            if ((long long)indices[lo + step - 1] >= x) {
                hi = lo + step - 1;
                break;
            }
            lo += step;
        }
    }
    while (lo < hi) {
        const long long mid = (lo + hi) >> 1;
        if ((long long)indices[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// A block's walk over its share of the entries, for the passes that need each entry's row: whole chunks of `chunk`
// consecutive entries, a block taking consecutive chunks, so that the rows it meets are read once and in order, not
// searched for per entry (the first row only, by feature_warp_row_of).  Per chunk, the rows starting in it write their
// id at their first entry's position in `marks` (`chunk` ints of shared memory), and the row holding each warp's first
// position is noted; then warp w takes positions [w * span, (w + 1) * span), 32 at a time (a warp's lanes hold
// consecutive entries: the warp votes see a row's entries side by side), a max-scan of the marks carrying the row on.
// visit(e, row, first) runs on every lane (e = -1 past the chunk's end; first: e starts its row); done() on every
// thread after each chunk's visits.  Every thread of the block must call it.
template <typename I, typename Visit, typename Done>
__device__ void feature_walk(const I* __restrict__ indptr, const long long rows, const long long nnz,
                             const long long chunk, int* marks, Visit visit, Done done) {
    __shared__ long long walk[3];  // the next chunk's first row and its start, and whether the rows go on
    __shared__ int carries[32];    // the row holding each warp's first position
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const long long per = ((nnz + chunk - 1) / chunk + gridDim.x - 1) / gridDim.x;
    const long long first = (long long)blockIdx.x * per * chunk;
    const long long last = first + per * chunk < nnz ? first + per * chunk : nnz;
    if (first >= last) return;
    const long long span = (chunk + 32 * warps - 1) / (32 * warps) * 32;
    const FeatureDivisor spans = feature_divisor(span);
    if (warp == 0) {
        const long long lo = feature_warp_row_of(indptr, first, 0, rows - 1);
        if (lane == 0) {
            walk[0] = lo;
            walk[1] = (long long)indptr[lo];
        }
    }
    __syncthreads();
    long long lo = walk[0], lo_start = walk[1];
    for (long long s = first; s < last; s += chunk) {
        const long long e = s + chunk < last ? s + chunk : last;
        for (long long p = threadIdx.x; p < e - s; p += blockDim.x) marks[p] = -1;
        if ((int)threadIdx.x < warps) carries[threadIdx.x] = (int)lo;
        __syncthreads();  // also: walk[] has been read
        // Rows after lo start past s; those starting before e are this chunk's, the last one starting at or before e
        // is the next chunk's first.
        for (long long base = lo + 1;; base += blockDim.x) {
            const long long r = base + threadIdx.x;
            const bool last_thread = threadIdx.x == blockDim.x - 1;
            if (r < rows) {
                const long long v = (long long)indptr[r], v1 = (long long)indptr[r + 1];
                if (v < e && v1 > v) {
                    marks[v - s] = (int)r;
                    const long long top = feature_div(v1 - s - 1, spans);  // the warps whose first position r holds
                    for (long long w = feature_div(v - s - 1, spans) + 1; w <= top && w < warps; ++w) {
                        carries[w] = (int)r;
                    }
                }
                if (v <= e && (r + 1 == rows || v1 > e)) {
                    walk[0] = r;
                    walk[1] = v;
                }
                if (last_thread) walk[2] = r + 1 < rows && v1 <= e;
            } else if (last_thread) {
                walk[2] = 0;
            }
            __syncthreads();
            const bool more = walk[2] != 0;
            __syncthreads();
            if (!more) break;
        }
        int carry = carries[warp];
        for (long long k = 0; k < span; k += 32) {
            const long long p = warp * span + k + lane;
            const bool valid = p < e - s;
            const int mark = valid ? marks[p] : -1;
            int row = feature_warp_max_scan(mark);
            row = row > carry ? row : carry;
            carry = __shfl_sync(FEATURE_FULL_MASK, row, 31);
            visit(valid ? s + p : -1ll, row, valid && (mark >= 0 || (p == 0 && s == lo_start)));
        }
        __syncthreads();
        done();
        lo = walk[0];
        lo_start = walk[1];
    }
}
