// features_entries: the passes over the entries for cocktail.auto.features, none of them a sort.
//
// feature_entries: chunks of `chunk` consecutive entries per block (balanced however long the rows), each
// entry's row found by a binary search between the rows of its chunk's ends.  It counts, per row, the 1 x c
// row-blocks that start at an entry (the column block changes within the row) for each width c, in total the
// full ones (all c cells stored) and all of them, and the entries on each diagonal.  A warp's entries mostly
// share a row, and a block's a few diagonals (a band), so the row counts are added once per row and warp
// (__match_any_sync) and the diagonal counts gathered in a shared hash before they reach global memory.
// feature_superrows counts the blocks more than one row high; diagonal_compact lists the occupied diagonals;
// scatter_groups counts the distinct sectors of x that sampled row groups read; value_sample and value_facts test
// the values' bits.
#include "features.cuh"

// The largest row i in [lo, hi] with indptr[i] <= entry: the row holding it (empty rows start no entry).
template <typename I>
__device__ __forceinline__ long long feature_row_of(const I* indptr, long long entry, long long lo, long long hi) {
    while (lo < hi) {
        const long long mid = (lo + hi + 1) >> 1;
        if ((long long)indptr[mid] <= entry) lo = mid; else hi = mid - 1;
    }
    return lo;
}

template <typename I>
__global__ void feature_entries(const I* __restrict__ indptr, const I* __restrict__ indices, const long long rows,
                                const long long nnz, const long long chunk, const int widths, const int c0,
                                const int c1, const int c2, const int c3, const int slots,
                                unsigned* __restrict__ row_blocks, unsigned long long* __restrict__ row_block_counts,
                                unsigned* __restrict__ diagonals) {
    // row_block_counts: [widths] full row-blocks, then [widths] all of them
    extern __shared__ unsigned long long feature_entries_keys[];  // [slots] keys, then [slots] unsigned counts
    unsigned* counts = (unsigned*)(feature_entries_keys + slots);
    __shared__ long long bounds[2];
    const int width[4] = {c0, c1, c2, c3};
    const int lane = threadIdx.x & 31;
    for (int s = threadIdx.x; s < slots; s += blockDim.x) {
        feature_entries_keys[s] = FEATURE_EMPTY;
        counts[s] = 0u;
    }
    for (long long start = (long long)blockIdx.x * chunk; start < nnz; start += (long long)gridDim.x * chunk) {
        const long long end = start + chunk < nnz ? start + chunk : nnz;
        if (threadIdx.x == 0) {
            bounds[0] = feature_row_of(indptr, start, 0, rows - 1);
            bounds[1] = feature_row_of(indptr, end - 1, bounds[0], rows - 1);
        }
        __syncthreads();
        const long long lo = bounds[0], hi = bounds[1];
        unsigned long long full[4] = {0, 0, 0, 0}, started[4] = {0, 0, 0, 0};
        for (long long k = threadIdx.x; k < chunk; k += blockDim.x) {  // the same trips for every lane of a warp
            const long long e = start + k;
            const bool valid = e < end;
            long long row = -1, col = 0, row_start = 0, row_end = 0;
            if (valid) {
                row = feature_row_of(indptr, e, lo, hi);
                col = (long long)indices[e];
                row_start = (long long)indptr[row];
                row_end = (long long)indptr[row + 1];
            }
            const unsigned same_row = __match_any_sync(FEATURE_FULL_MASK, row);
            const bool leader = valid && lane == __ffs(same_row) - 1;
            for (int w = 0; w < widths; ++w) {
                const long long c = width[w];
                const bool starts = valid && (e == row_start || (long long)indices[e - 1] / c != col / c);
                const unsigned in_row = __popc(__ballot_sync(FEATURE_FULL_MASK, starts) & same_row);
                if (leader && in_row) atomicAdd(&row_blocks[w * rows + row], in_row);
                started[w] += starts;
                // rows are sorted without repeats: c entries from the block's first column fill it
                full[w] += valid && col % c == 0 && e + c - 1 < row_end && (long long)indices[e + c - 1] == col + c - 1;
            }
            if (valid && diagonals) {
                const unsigned long long key = (unsigned long long)(col - row + rows - 1);
                int s = (int)(feature_hash(key) & (unsigned long long)(slots - 1));
                bool counted = false;
                for (int probe = 0; probe < 8 && !counted; ++probe) {  // a few probes, then global memory
                    unsigned long long held = feature_entries_keys[s];
                    if (held == FEATURE_EMPTY) held = atomicCAS(&feature_entries_keys[s], FEATURE_EMPTY, key);
                    if (held == FEATURE_EMPTY || held == key) {
                        atomicAdd(&counts[s], 1u);
                        counted = true;
                    }
                    s = (s + 1) & (slots - 1);
                }
                if (!counted) atomicAdd(&diagonals[key], 1u);
            }
        }
        for (int w = 0; w < widths; ++w) {
            for (int o = 16; o; o >>= 1) {
                full[w] += __shfl_xor_sync(FEATURE_FULL_MASK, full[w], o);
                started[w] += __shfl_xor_sync(FEATURE_FULL_MASK, started[w], o);
            }
            if (lane == 0 && full[w]) atomicAdd(&row_block_counts[w], full[w]);
            if (lane == 0 && started[w]) atomicAdd(&row_block_counts[widths + w], started[w]);
        }
        __syncthreads();
        for (int s = threadIdx.x; s < slots; s += blockDim.x) {
            if (counts[s]) atomicAdd(&diagonals[feature_entries_keys[s]], counts[s]);
            feature_entries_keys[s] = FEATURE_EMPTY;
            counts[s] = 0u;
        }
        __syncthreads();
    }
}

// feature_superrows: the r x c blocks of the taller shapes (`heights`, see feature_count_arrays) of each width whose
// 1 x c fill (row_block_counts[widths + w] * c / nnz, from feature_entries) is not above `limit` (the host keeps no
// taller shape of the others), in chunks of entries as feature_entries.  A super-row's blocks are the distinct
// block columns of its rows: an entry starting a row-block (row i, block column b) starts a new block of its
// super-row of height r when no row of the super-row before i holds a column of block b.  The rows before i are
// searched (each is sorted) nearest first, until one holds it: the rows of a FEM-like matrix mostly share their
// blocks, so one search mostly decides.  The block is dense when its row-block is full in the super-row's last row
// and in the r - 1 rows before.  New blocks are added per super-row to the taller shapes' arrays of `counts` (laid
// out as feature_count_arrays says; feature_rows reduces them), dense ones to count_stats[k][2] of their array k.
template <typename I>
__global__ void feature_superrows(const I* __restrict__ indptr, const I* __restrict__ indices, const long long rows,
                                  const long long nnz, const long long chunk, const int widths, const int c0,
                                  const int c1, const int c2, const int c3, const long long heights,
                                  const double limit, const unsigned long long* __restrict__ row_block_counts,
                                  unsigned* __restrict__ counts, unsigned long long* __restrict__ count_stats) {
    extern __shared__ long long feature_superrows_shared[];  // [tall] array offsets, then [tall] dense blocks
    __shared__ long long bounds[2];
    const int width[4] = {c0, c1, c2, c3};
    unsigned open = 0;
    int tall = 0;
    for (int w = 0; w < widths; ++w) {
        const unsigned mask = (unsigned)(heights >> (16 * w)) & 0xfffcu;
        const double fill = (double)(row_block_counts[widths + w] * (unsigned long long)width[w]) / (double)nnz;
        tall += __popc(mask);
        if (mask && !(fill > limit)) open |= 1u << w;  // the host's test, to the bit (a correctly rounded quotient)
    }
    if (!open) return;
    long long* offsets = feature_superrows_shared;
    unsigned long long* dense = (unsigned long long*)(feature_superrows_shared + tall);
    if (threadIdx.x == 0) {
        feature_count_arrays(rows, widths, heights, [&](int k, int, int r, long long offset) {
            if (r > 1) {
                offsets[k - widths] = offset;
                dense[k - widths] = 0ull;
            }
        });
    }
    __syncthreads();
    for (long long start = (long long)blockIdx.x * chunk; start < nnz; start += (long long)gridDim.x * chunk) {
        const long long end = start + chunk < nnz ? start + chunk : nnz;
        if (threadIdx.x == 0) {
            bounds[0] = feature_row_of(indptr, start, 0, rows - 1);
            bounds[1] = feature_row_of(indptr, end - 1, bounds[0], rows - 1);
        }
        __syncthreads();
        const long long lo = bounds[0], hi = bounds[1];
        for (long long k = threadIdx.x; k < chunk; k += blockDim.x) {  // the same trips for every lane of a warp
            const long long e = start + k;
            const bool valid = e < end;
            int i = -1;  // the row (fewer than 2^31)
            long long col = 0, row_start = 0, row_end = 0;
            if (valid) {
                i = (int)feature_row_of(indptr, e, lo, hi);
                col = (long long)indices[e];
                row_start = (long long)indptr[i];
                row_end = (long long)indptr[i + 1];
            }
            int t = 0;
            for (int w = 0; w < widths; ++w) {
                const unsigned mask = (unsigned)(heights >> (16 * w)) & 0xfffcu;
                if (!((open >> w) & 1u)) {
                    t += __popc(mask);
                    continue;
                }
                const long long c = width[w], first_col = col / c * c;
                const bool starts = valid && (e == row_start || (long long)indices[e - 1] / c != col / c);
                const bool full = starts && col == first_col && e + c - 1 < row_end &&
                                  (long long)indices[e + c - 1] == col + c - 1;
                // rows from i - 1 down to `reach` (the first of i's tallest super-row) are searched: `nearest` is
                // the first holding block b, `run` counts those holding it full from i - 1 on while i's is full
                // and i ends a super-row
                int reach = i, nearest = -1, run = 0;
                bool running = false;
                for (unsigned m = mask; m; m &= m - 1) {
                    const int r = __ffs(m) - 1;
                    reach = i - i % r < reach ? i - i % r : reach;
                    running |= i % r == r - 1;
                }
                running = running && full;
                for (int j = i - 1; starts && j >= reach && (nearest < 0 || running); --j) {
                    const long long j_end = (long long)indptr[j + 1];
                    long long a = (long long)indptr[j], z = j_end;
                    while (a < z) {  // the first column of row j at or past the block's first
                        const long long mid = (a + z) >> 1;
                        if ((long long)indices[mid] < first_col) a = mid + 1; else z = mid;
                    }
                    const bool holds = a < j_end && (long long)indices[a] < first_col + c;
                    nearest = holds && nearest < 0 ? j : nearest;
                    running = running && holds && (long long)indices[a] == first_col && a + c - 1 < j_end &&
                              (long long)indices[a + c - 1] == first_col + c - 1;
                    run += running;
                }
                for (unsigned m = mask; m; m &= m - 1, ++t) {
                    const int r = __ffs(m) - 1;
                    feature_run_add(counts + offsets[t], valid ? i / r : -1, starts && nearest < i - i % r);
                    if (full && i % r == r - 1 && run >= r - 1) atomicAdd(&dense[t], 1ull);
                }
            }
        }
        __syncthreads();  // bounds is written again for the next chunk
    }
    for (int t = threadIdx.x; t < tall; t += blockDim.x) {
        if (dense[t]) atomicAdd(&count_stats[(long long)(widths + t) * (4 + FEATURE_BUCKETS) + 2], dense[t]);
    }
}

// The occupied diagonals of a count table (offset = index + first_offset) as (offset, count) pairs, in no
// order: the first `head` pairs into head_pairs (inside the transferred summary), the rest into more_pairs.
extern "C" __global__ void diagonal_compact(const unsigned* __restrict__ table, const long long length,
                                            const long long first_offset, const long long head,
                                            long long* __restrict__ head_pairs, long long* __restrict__ more_pairs,
                                            unsigned long long* __restrict__ found) {
    const int lane = threadIdx.x & 31;
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long span = (length + 31) / 32 * 32;  // whole warps: every lane reaches the ballot
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < span; i += stride) {
        const unsigned count = i < length ? table[i] : 0u;
        const unsigned occupied = __ballot_sync(FEATURE_FULL_MASK, count != 0u);
        unsigned long long base = 0;
        if (lane == 0 && occupied) base = atomicAdd(found, (unsigned long long)__popc(occupied));
        base = __shfl_sync(FEATURE_FULL_MASK, base, 0);
        if (count) {
            const long long slot = (long long)base + __popc(occupied & ((1u << lane) - 1u));
            long long* pair = slot < head ? head_pairs + 2 * slot : more_pairs + 2 * (slot - head);
            pair[0] = i + first_offset;
            pair[1] = (long long)count;
        }
    }
}

// Distinct sectors of x read by each sampled group of rows (group g: rows [g * stride_rows, + group_rows)):
// a block per group inserts the sector (column / sector_columns) of each entry into a shared hash set.  The
// sector of twice the bytes is the same key halved, so its count is the fine count less the pairs (2k, 2k + 1)
// both present.  A group with more entries than half the set is split into passes by the hash of the halved
// key (a pair stays in one pass); past max_passes, or on a full set, *overflow is set and the host counts.
// sectors: [fine, coarse] summed over the groups; entries: each group's entries.
template <typename I>
__global__ void scatter_groups(const I* __restrict__ indptr, const I* __restrict__ indices, const long long rows,
                               const long long groups, const long long stride_rows, const int group_rows,
                               const long long sector_columns, const int slots, const int max_passes,
                               unsigned long long* __restrict__ entries, unsigned long long* __restrict__ sectors,
                               unsigned* __restrict__ overflow) {
    extern __shared__ unsigned long long scatter_groups_set[];
    unsigned long long fine = 0, pairs = 0;
    for (long long g = blockIdx.x; g < groups; g += gridDim.x) {
        const long long first = g * stride_rows;
        const long long last = first + group_rows < rows ? first + group_rows : rows;
        const long long lo = (long long)indptr[first], hi = (long long)indptr[last];
        if (threadIdx.x == 0) entries[g] = (unsigned long long)(hi - lo);
        const long long passes = (hi - lo + slots / 2 - 1) / (slots / 2);
        if (passes > max_passes) {
            if (threadIdx.x == 0) atomicOr(overflow, 1u);
            continue;
        }
        for (long long p = 0; p < passes; ++p) {
            for (int s = threadIdx.x; s < slots; s += blockDim.x) scatter_groups_set[s] = FEATURE_EMPTY;
            __syncthreads();
            for (long long e = lo + threadIdx.x; e < hi; e += blockDim.x) {
                const unsigned long long key = (unsigned long long)indices[e] / (unsigned long long)sector_columns;
                if (passes > 1 && (long long)(feature_hash((key >> 1) + 1) % (unsigned long long)passes) != p) continue;
                const int added = feature_insert(scatter_groups_set, slots, key);
                if (added < 0) atomicOr(overflow, 1u);
                fine += added > 0;
            }
            __syncthreads();
            for (int s = threadIdx.x; s < slots; s += blockDim.x) {
                const unsigned long long key = scatter_groups_set[s];
                pairs += key != FEATURE_EMPTY && (key & 1ull) && feature_contains(scatter_groups_set, slots, key - 1);
            }
            __syncthreads();
        }
    }
    if (fine) atomicAdd(&sectors[0], fine);
    if (fine - pairs) atomicAdd(&sectors[1], fine - pairs);
}

// The bits of a value as a set key.  Keys are stored plus one, so that a zeroed table is empty; the one key
// that wraps (all 64 bits set) is flagged in distinct[1] instead.
template <typename K>
__device__ __forceinline__ unsigned long long feature_value_key(const K* values, long long i) {
    return (unsigned long long)values[i] + 1ull;
}

// The distinct keys of the sample values[0], values[step], ... and of zero, into a global hash set of
// `slots` (zeroed, at least twice the sample): distinct[0] counts them, distinct[1] flags the wrapped key.
template <typename K>
__global__ void value_sample(const K* __restrict__ values, const long long nnz, const long long step,
                             unsigned long long* __restrict__ table, const int slots, unsigned* __restrict__ distinct) {
    const long long samples = (nnz + step - 1) / step;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k <= samples;
         k += (long long)gridDim.x * blockDim.x) {
        const unsigned long long key = k < samples ? feature_value_key(values, k * step) : 1ull;  // zero's key
        if (key == 0ull) {
            atomicOr(&distinct[1], 1u);
            continue;
        }
        int s = (int)(feature_hash(key) & (unsigned long long)(slots - 1));
        for (;;) {  // the set never fills: it has twice the sample's slots
            const unsigned long long held = atomicCAS(&table[s], 0ull, key);
            if (held == 0ull) atomicAdd(&distinct[0], 1u);
            if (held == 0ull || held == key) break;
            s = (s + 1) & (slots - 1);
        }
    }
}

// flags bit 0: some value's bits differ from the first's; bit 1 (tested only with `check` set and fewer than
// `cap` distinct sample keys): some value is none of the sample's.
template <typename K>
__global__ void value_facts(const K* __restrict__ values, const long long nnz, const unsigned long long* __restrict__ table,
                            const int slots, const int check, const unsigned cap, const unsigned* __restrict__ distinct,
                            unsigned* __restrict__ flags) {
    const bool lookup = check && distinct[0] + distinct[1] < cap;
    const unsigned long long first = feature_value_key(values, 0);
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long span = (nnz + 31) / 32 * 32;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < span; i += stride) {
        unsigned flag = 0u;
        if (i < nnz) {
            const unsigned long long key = feature_value_key(values, i);
            flag |= key != first;
            if (lookup) {
                bool known = key == 0ull ? distinct[1] != 0u : false;
                int s = (int)(feature_hash(key) & (unsigned long long)(slots - 1));
                for (int probe = 0; key != 0ull && probe < slots; ++probe) {
                    const unsigned long long held = table[s];
                    if (held == key) known = true;
                    if (held == key || held == 0ull) break;
                    s = (s + 1) & (slots - 1);
                }
                flag |= known ? 0u : 2u;
            }
        }
        const unsigned differ = __ballot_sync(FEATURE_FULL_MASK, flag & 1u), unknown = __ballot_sync(FEATURE_FULL_MASK, flag & 2u);
        if ((threadIdx.x & 31) == 0 && (differ || unknown)) atomicOr(flags, (differ ? 1u : 0u) | (unknown ? 2u : 0u));
    }
}
