// features_entries: the passes over the entries for cocktail.auto.features, none of them a sort.
//
// feature_entries: the entries in chunks (feature_walk: a block takes consecutive chunks and finds each entry's row
// from marks its chunk's rows leave, not by a search per entry).  It counts, per row, the 1 x c row-blocks that start
// at an entry (the column block changes within the row) for each width c, in total the full ones (all c cells stored)
// and all of them, and the entries on each diagonal.  A warp's entries are consecutive, so a row's are adjacent lanes:
// the row counts are added once per row and warp, and the diagonal counts gathered in a shared hash (a band's few
// diagonals) before they reach global memory.  Block columns are quotients by multiplication (feature_div), never a
// 64-bit division per entry.  feature_superrows counts the blocks more than one row high; diagonal_compact lists the
// occupied diagonals; scatter_groups counts the distinct sectors of x that sampled row groups read; value_sample and
// value_facts test the values' bits.
#include "features.cuh"

template <typename I>
__global__ void feature_entries(const I* __restrict__ indptr, const I* __restrict__ indices, const long long rows,
                                const long long nnz, const long long chunk, const int widths, const int c0,
                                const int c1, const int c2, const int c3, const int slots, const int probes,
                                unsigned* __restrict__ row_blocks, unsigned long long* __restrict__ row_block_counts,
                                unsigned* __restrict__ diagonals) {
    // row_block_counts: [widths] full row-blocks, then [widths] all of them
    extern __shared__ unsigned long long feature_entries_keys[];  // [slots] keys, [slots] counts, [chunk] marks
    unsigned* counts = (unsigned*)(feature_entries_keys + slots);
    int* marks = (int*)(counts + slots);
    const FeatureDivisor width[4] = {feature_divisor(c0), feature_divisor(c1), feature_divisor(c2),
                                     feature_divisor(c3)};
    for (int s = threadIdx.x; s < slots; s += blockDim.x) {
        feature_entries_keys[s] = FEATURE_EMPTY;
        counts[s] = 0u;
    }
    __syncthreads();
    unsigned full[4] = {0, 0, 0, 0}, started[4] = {0, 0, 0, 0};  // a thread's entries are far fewer than 2^32
    const auto visit = [&](long long e, int row, bool first) {
        const bool valid = e >= 0;
        long long col = 0, prev = 0, row_end = 0;
        if (valid) {
            col = (long long)indices[e];
            prev = first ? 0 : (long long)indices[e - 1];
            row_end = (long long)indptr[row + 1];
        }
        const unsigned run = feature_run(valid ? row : -1);
#pragma unroll
        for (int w = 0; w < 4; ++w) {
            if (w >= widths) break;
            const long long c = width[w].d, q = feature_div(col, width[w]);
            const bool starts = valid && (first || feature_div(prev, width[w]) != q);
            feature_run_count(&row_blocks[w * rows + row], run, starts);
            started[w] += starts;
            // rows are sorted without repeats: c entries from the block's first column fill it
            full[w] += valid && col == q * c && e + c - 1 < row_end && (long long)indices[e + c - 1] == col + c - 1;
        }
        if (valid && diagonals) {
            const unsigned long long key = (unsigned long long)(col - row + rows - 1);
            int s = (int)(feature_hash(key) & (unsigned long long)(slots - 1));
            bool counted = false;
            for (int probe = 0; probe < probes && !counted; ++probe) {  // a few probes, then global memory
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
    };
    const auto flush = [&]() {
        for (int s = threadIdx.x; s < slots; s += blockDim.x) {
            if (counts[s]) atomicAdd(&diagonals[feature_entries_keys[s]], counts[s]);
            feature_entries_keys[s] = FEATURE_EMPTY;
            counts[s] = 0u;
        }
    };
    feature_walk(indptr, rows, nnz, chunk, marks, visit, flush);
#pragma unroll
    for (int w = 0; w < 4; ++w) {
        if (w >= widths) break;
        const unsigned long long all_full = feature_block_sum(full[w]), all_started = feature_block_sum(started[w]);
        if (threadIdx.x == 0 && all_full) atomicAdd(&row_block_counts[w], all_full);
        if (threadIdx.x == 0 && all_started) atomicAdd(&row_block_counts[widths + w], all_started);
    }
}

// feature_superrows: the r x c blocks of the taller shapes (`heights`, see feature_count_arrays) of each width whose
// 1 x c fill (row_block_counts[widths + w] * c / nnz, from feature_entries) is not above `limit` (the host keeps no
// taller shape of the others), walking the entries as feature_entries.  A super-row's blocks are the distinct
// block columns of its rows: an entry starting a row-block (row i, block column b) starts a new block of its
// super-row of height r when no row of the super-row before i holds a column of block b.  The rows before i are
// searched (each is sorted) nearest first, until one holds it, each from the position of the block's entry in row i
// (feature_lower_bound): the rows of a FEM-like matrix or a band mostly share their blocks and their layout, so one
// search of a load or two mostly decides.  The block is dense when its row-block is full in the super-row's last row
// and in the r - 1 rows before.  New blocks are added per super-row to the taller shapes' arrays of `counts` (laid
// out as feature_count_arrays says; feature_rows reduces them), dense ones to count_stats[k][2] of their array k.
template <typename I>
__global__ void feature_superrows(const I* __restrict__ indptr, const I* __restrict__ indices, const long long rows,
                                  const long long nnz, const long long chunk, const int widths, const int c0,
                                  const int c1, const int c2, const int c3, const long long heights,
                                  const double limit, const unsigned long long* __restrict__ row_block_counts,
                                  unsigned* __restrict__ counts, unsigned long long* __restrict__ count_stats) {
    extern __shared__ long long feature_superrows_shared[];  // [tall] array offsets, [tall] dense blocks, [chunk] marks
    __shared__ unsigned long long height_magic[16];  // feature_divisor(r) of each height r, as a multiplier and a shift
    __shared__ int height_shift[16];
    const FeatureDivisor width[4] = {feature_divisor(c0), feature_divisor(c1), feature_divisor(c2),
                                     feature_divisor(c3)};
    unsigned open = 0;
    int tall = 0;
    for (int w = 0; w < widths; ++w) {
        const unsigned mask = (unsigned)(heights >> (16 * w)) & 0xfffcu;
        const int c = w == 0 ? c0 : w == 1 ? c1 : w == 2 ? c2 : c3;
        const double fill = (double)(row_block_counts[widths + w] * (unsigned long long)c) / (double)nnz;
        tall += __popc(mask);
        if (mask && !(fill > limit)) open |= 1u << w;  // the host's test, to the bit (a correctly rounded quotient)
    }
    if (!open) return;
    long long* offsets = feature_superrows_shared;
    unsigned long long* dense = (unsigned long long*)(feature_superrows_shared + tall);
    int* marks = (int*)(feature_superrows_shared + 2 * tall);
    if (threadIdx.x == 0) {
        feature_count_arrays(rows, widths, heights, [&](int k, int, int r, long long offset) {
            if (r > 1) {
                offsets[k - widths] = offset;
                dense[k - widths] = 0ull;
            }
        });
    }
    if (threadIdx.x < 16) {
        const FeatureDivisor r = feature_divisor(threadIdx.x);
        height_magic[threadIdx.x] = r.magic;
        height_shift[threadIdx.x] = r.shift;
    }
    __syncthreads();
    const auto visit = [&](long long e, int i, bool first) {
        const bool valid = e >= 0;
        long long col = 0, prev = 0, row_start = 0, row_end = 0;
        if (valid) {
            col = (long long)indices[e];
            prev = first ? 0 : (long long)indices[e - 1];
            row_start = (long long)indptr[i];
            row_end = (long long)indptr[i + 1];
        }
        int t = 0;
#pragma unroll
        for (int w = 0; w < 4; ++w) {
            if (w >= widths) break;
            const unsigned mask = (unsigned)(heights >> (16 * w)) & 0xfffcu;
            if (!((open >> w) & 1u)) {
                t += __popc(mask);
                continue;
            }
            const long long c = width[w].d, q = feature_div(col, width[w]), first_col = q * c;
            const bool starts = valid && (first || feature_div(prev, width[w]) != q);
            const bool full = starts && col == first_col && e + c - 1 < row_end &&
                              (long long)indices[e + c - 1] == col + c - 1;
            // rows from i - 1 down to `reach` (the first of i's tallest super-row) are searched: `nearest` is the
            // first holding block b, `run` counts those holding it full from i - 1 on while i's is full and i ends a
            // super-row
            int reach = i, nearest = -1, run = 0;
            bool running = false;
            for (unsigned m = mask; m; m &= m - 1) {
                const int r = __ffs(m) - 1;
                const int top = (int)(((unsigned long long)i * height_magic[r]) >> height_shift[r]) * r;
                reach = top < reach ? top : reach;
                running |= i - top == r - 1;
            }
            running = running && full;
            for (int j = i - 1; starts && j >= reach && (nearest < 0 || running); --j) {
                const long long j_start = (long long)indptr[j], j_end = (long long)indptr[j + 1];
                const long long a = feature_lower_bound(indices, j_start, j_end, j_start + (e - row_start), first_col);
                const bool holds = a < j_end && (long long)indices[a] < first_col + c;
                nearest = holds && nearest < 0 ? j : nearest;
                running = running && holds && (long long)indices[a] == first_col && a + c - 1 < j_end &&
                          (long long)indices[a + c - 1] == first_col + c - 1;
                run += running;
            }
            for (unsigned m = mask; m; m &= m - 1, ++t) {
                const int r = __ffs(m) - 1;
                const int superrow = (int)(((unsigned long long)i * height_magic[r]) >> height_shift[r]);
                feature_run_add(counts + offsets[t], valid ? superrow : -1, starts && nearest < superrow * r);
                if (full && i - superrow * r == r - 1 && run >= r - 1) atomicAdd(&dense[t], 1ull);
            }
        }
    };
    feature_walk(indptr, rows, nnz, chunk, marks, visit, [] {});
    __syncthreads();
    for (int t = threadIdx.x; t < tall; t += blockDim.x) {
        if (dense[t]) atomicAdd(&count_stats[(long long)(widths + t) * (4 + FEATURE_BUCKETS) + 2], dense[t]);
    }
}

// The occupied diagonals of a count table (offset = index + first_offset) as (offset, count) pairs, in no
// order: the first `head` pairs into head_pairs (inside the transferred summary), the rest into more_pairs.  A block
// claims the slots of a tile's pairs with one atomic (per warp they would queue on *found).
extern "C" __global__ void diagonal_compact(const unsigned* __restrict__ table, const long long length,
                                            const long long first_offset, const long long head,
                                            long long* __restrict__ head_pairs, long long* __restrict__ more_pairs,
                                            unsigned long long* __restrict__ found) {
    __shared__ unsigned warp_found[32];
    __shared__ unsigned long long block_base;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long base = (long long)blockIdx.x * blockDim.x; base < length; base += stride) {  // whole blocks
        const long long i = base + threadIdx.x;
        const unsigned count = i < length ? table[i] : 0u;
        const unsigned occupied = __ballot_sync(FEATURE_FULL_MASK, count != 0u);
        if (lane == 0) warp_found[warp] = __popc(occupied);
        __syncthreads();
        unsigned before = 0, all = 0;
        for (int w = 0; w < (int)(blockDim.x >> 5); ++w) {
            before += w < warp ? warp_found[w] : 0u;
            all += warp_found[w];
        }
        if (threadIdx.x == 0) block_base = all ? atomicAdd(found, (unsigned long long)all) : 0ull;
        __syncthreads();
        if (count) {
            const long long slot = (long long)(block_base + before) + __popc(occupied & ((1u << lane) - 1u));
            long long* pair = slot < head ? head_pairs + 2 * slot : more_pairs + 2 * (slot - head);
            pair[0] = i + first_offset;
            pair[1] = (long long)count;
        }
        __syncthreads();  // warp_found and block_base are written again
    }
}

// The windows of group g (one per item_entries of its entries, at most split), its entries into *count.
template <typename I>
__device__ long long scatter_windows(const I* indptr, long long g, long long rows, long long stride_rows,
                                     int group_rows, int split, long long item_entries, long long* count) {
    const long long first = g * stride_rows, last = first + group_rows < rows ? first + group_rows : rows;
    *count = (long long)indptr[last] - (long long)indptr[first];
    const long long windows = (*count + item_entries - 1) / item_entries;
    return windows < split ? windows : split;
}

// Distinct sectors of x read by each sampled group of rows (group g: rows [g * stride_rows, + group_rows), at most
// 32 rows: a lane per row), fine (column / sector_columns) and coarse (the sector of twice the bytes: the fine one
// halved).  A group is cut into up to `split` windows of its sector range, one per `item_entries` of its entries
// (a dense row's group is read once, by many blocks, not once per pass by one); a window's entries are a slice of
// each row (rows are sorted), found by a search per row.  A block counts a window's sectors in a bitmap of the
// window's range in shared memory (coarse: the pairs (2k, 2k + 1) with a bit set, windows starting at even
// sectors), or in a hash set of its sectors where that takes less memory (few entries over a wide range).  A hash
// set of more entries than half the `slots` is filled in passes by the hash of the halved key (a pair stays in one
// pass); past max_passes, or on a full set, *overflow is set and the host counts.  Blocks take the windows of
// interleaved groups (the candidates (window q, group g), checked a block-wide round at a time).  sectors: [fine,
// coarse] summed over the groups; entries: each group's entries.
// Warp 0's part of a window: window q (of `windows`) of the sector range of the group of rows [first, first +
// group_rows) into window[0..1] (its sectors [from, to): a multiple of 32 wide, from a multiple of 32), and each row's
// slice of entries in it: slice_start[r], the offsets slice_offset[r] of the slices laid end to end (33 of them).
template <typename I>
__device__ void scatter_slices(const I* indptr, const I* indices, long long rows, long long first, int group_rows,
                               const FeatureDivisor& sector, long long q, long long windows, long long* slice_start,
                               long long* slice_offset, long long* window) {
    const int lane = threadIdx.x & 31;
    const long long row = first + lane;
    const bool in = lane < group_rows && row < rows;
    const long long a = in ? (long long)indptr[row] : 0, z = in ? (long long)indptr[row + 1] : 0;
    long long low = a < z ? feature_div((long long)indices[a], sector) : 0x7fffffffffffffffll;
    long long high = a < z ? feature_div((long long)indices[z - 1], sector) : -1;
    for (int o = 16; o; o >>= 1) {
        const long long l = __shfl_xor_sync(FEATURE_FULL_MASK, low, o), h = __shfl_xor_sync(FEATURE_FULL_MASK, high, o);
        low = l < low ? l : low;
        high = h > high ? h : high;
    }
    const long long base = low / 32 * 32, width = ((high - base + windows) / windows + 31) / 32 * 32;
    const long long from = base + q * width, to = from + width < high + 1 ? from + width : high + 1;
    long long sa = a, sz = z;
    if (from >= to) {
        sz = sa;
    } else if (windows > 1) {  // guesses in proportion to the window's place in the range
        const double at = (double)(z - a) / (double)(high - base + 1);
        const long long columns = sector.d;
        if (q > 0) sa = feature_lower_bound(indices, a, z, a + (long long)(at * (from - base)), from * columns);
        if (to <= high) sz = feature_lower_bound(indices, sa, z, a + (long long)(at * (to - base)), to * columns);
    }
    long long offset = sz - sa;
    for (int d = 1; d < 32; d <<= 1) {
        const long long other = __shfl_sync(FEATURE_FULL_MASK, offset, lane >= d ? lane - d : lane);
        offset += lane >= d ? other : 0;
    }
    slice_start[lane] = sa;
    slice_offset[lane + 1] = offset;
    if (lane == 0) {
        slice_offset[0] = 0;
        window[0] = from;
        window[1] = to;
    }
}

// The sector of the t-th entry of the slices laid end to end; r: the slice of the thread's last t (t rising).
template <typename I>
__device__ __forceinline__ long long scatter_sector(const I* indices, const FeatureDivisor& sector,
                                                    const long long* slice_start, const long long* slice_offset,
                                                    long long t, int& r) {
    while (slice_offset[r + 1] <= t) ++r;
    return feature_div((long long)indices[slice_start[r] + t - slice_offset[r]], sector);
}

// The fine and coarse sectors of a window's `total` entries, in a bitmap of `words` words from sector `from`
// (coarse: the pairs (2k, 2k + 1) with a bit set, `from` even).  Every thread of the block must call it.
template <typename I>
__device__ void scatter_bitmap(const I* indices, const FeatureDivisor& sector, const long long* slice_start,
                               const long long* slice_offset, long long total, long long from, long long words,
                               unsigned* bits, unsigned long long& fine, unsigned long long& coarse) {
    const int lane = threadIdx.x & 31;
    for (long long w = threadIdx.x; w < words; w += blockDim.x) bits[w] = 0u;
    __syncthreads();
    int r = 0;
    for (long long t = threadIdx.x; t - lane < total; t += blockDim.x) {  // whole warps
        int word = -1;
        unsigned bit = 0u;
        if (t < total) {
            const long long at = scatter_sector(indices, sector, slice_start, slice_offset, t, r) - from;
            word = (int)(at >> 5);
            bit = 1u << (at & 31);
        }
        feature_warp_or(bits, word, bit);
    }
    __syncthreads();
    for (long long w = threadIdx.x; w < words; w += blockDim.x) {
        const unsigned v = bits[w];
        fine += __popc(v);
        coarse += __popc((v | v >> 1) & 0x55555555u);
    }
}

// The same in a hash set of `slots`, in `passes` by the hash of the halved key (a pair stays in one pass).
// Every thread of the block must call it.
template <typename I>
__device__ void scatter_hash(const I* indices, const FeatureDivisor& sector, const long long* slice_start,
                             const long long* slice_offset, long long total, int slots, long long passes,
                             unsigned long long* set, unsigned* overflow, unsigned long long& fine,
                             unsigned long long& coarse) {
    for (long long p = 0; p < passes; ++p) {
        for (int s = threadIdx.x; s < slots; s += blockDim.x) set[s] = FEATURE_EMPTY;
        __syncthreads();
        int r = 0;
        for (long long t = threadIdx.x; t < total; t += blockDim.x) {
            const unsigned long long key = (unsigned long long)scatter_sector(indices, sector, slice_start,
                                                                              slice_offset, t, r);
            // the pass: the top bits of the halved key's hash, scaled to [0, passes)
            const unsigned long long part = ((feature_hash((key >> 1) + 1) >> 32) * (unsigned long long)passes) >> 32;
            if (passes > 1 && (long long)part != p) continue;
            if (feature_insert(set, slots, key) < 0) atomicOr(overflow, 1u);
        }
        __syncthreads();
        for (int s = threadIdx.x; s < slots; s += blockDim.x) {
            const unsigned long long key = set[s];
            if (key == FEATURE_EMPTY) continue;
            ++fine;
            coarse += !((key & 1ull) && feature_contains(set, slots, key - 1));
        }
        __syncthreads();
    }
}

// Lists in `listed` (its count returned) this block's windows among a round of candidates: k = q * groups + g for
// window q of group g, taken where the group has more than q windows (their counts into `windows`).  Writes each
// group's entries.  Every thread of the block must call it.
template <typename I>
__device__ int scatter_list(const I* indptr, long long rows, long long groups, long long stride_rows, int group_rows,
                            int split, long long item_entries, long long round, long long* listed, int* windows,
                            unsigned long long* entries) {
    __shared__ int warp_listed[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long k = (round * blockDim.x + threadIdx.x) * gridDim.x + blockIdx.x;  // interleaved over the blocks
    long long mine = 0;
    if (k < groups * split) {
        long long count;
        mine = scatter_windows(indptr, k % groups, rows, stride_rows, group_rows, split, item_entries, &count);
        if (k < groups) entries[k] = (unsigned long long)count;
    }
    const bool take = k < groups * split && k / groups < mine;
    const unsigned taken = __ballot_sync(FEATURE_FULL_MASK, take);
    if (lane == 0) warp_listed[warp] = __popc(taken);
    __syncthreads();
    int before = __popc(taken & ((1u << lane) - 1u)), items = 0;
    for (int w = 0; w < (int)(blockDim.x >> 5); ++w) {
        before += w < warp ? warp_listed[w] : 0;
        items += warp_listed[w];
    }
    if (take) {
        listed[before] = k;
        windows[before] = (int)mine;
    }
    __syncthreads();  // also: warp_listed is written again by the next round
    return items;
}

template <typename I>
__global__ void scatter_groups(const I* __restrict__ indptr, const I* __restrict__ indices, const long long rows,
                               const long long groups, const long long stride_rows, const int group_rows,
                               const long long sector_columns, const int slots, const int max_passes,
                               const int split, const long long item_entries,
                               unsigned long long* __restrict__ entries, unsigned long long* __restrict__ sectors,
                               unsigned* __restrict__ overflow) {
    extern __shared__ unsigned long long scatter_groups_set[];  // [slots] keys, or the words of a bitmap
    __shared__ long long listed[FEATURE_TILE], slice_start[32], slice_offset[33], window[2];
    __shared__ int windows[FEATURE_TILE];
    const FeatureDivisor sector = feature_divisor(sector_columns);
    unsigned long long fine = 0, coarse = 0;
    for (long long round = 0; round * gridDim.x * blockDim.x < groups * split; ++round) {
        const int items = scatter_list(indptr, rows, groups, stride_rows, group_rows, split, item_entries, round,
                                       listed, windows, entries);
        for (int item = 0; item < items; ++item) {
            if (threadIdx.x < 32) {
                scatter_slices(indptr, indices, rows, listed[item] % groups * stride_rows, group_rows, sector,
                               listed[item] / groups, windows[item], slice_start, slice_offset, window);
            }
            __syncthreads();
            const long long total = slice_offset[32], words = (window[1] - window[0] + 31) / 32;
            int set_slots = slots < 32 ? slots : 32;  // a set of twice the entries where the slots allow
            while (set_slots < 2 * total && set_slots < slots) set_slots *= 2;
            const long long passes = (2 * total + set_slots - 1) / set_slots;
            if (total && 4 * words <= 8ll * set_slots) {  // the bitmap takes no more memory than the set
                scatter_bitmap(indices, sector, slice_start, slice_offset, total, window[0], words,
                               (unsigned*)scatter_groups_set, fine, coarse);
            } else if (total && passes > max_passes) {
                if (threadIdx.x == 0) atomicOr(overflow, 1u);
            } else if (total) {
                scatter_hash(indices, sector, slice_start, slice_offset, total, set_slots, passes, scatter_groups_set,
                             overflow, fine, coarse);
            }
            __syncthreads();  // the slices and the set are written again for the next window
        }
    }
    fine = feature_block_sum(fine);
    coarse = feature_block_sum(coarse);
    if (threadIdx.x == 0 && fine) atomicAdd(&sectors[0], fine);
    if (threadIdx.x == 0 && coarse) atomicAdd(&sectors[1], coarse);
}

// The bits of a value as a set key.  Keys are stored plus one, so that a zeroed table is empty; the one key
// that wraps (all 64 bits set) is flagged in distinct[1] instead.
template <typename K>
__device__ __forceinline__ unsigned long long feature_value_key(const K* values, long long i) {
    return (unsigned long long)values[i] + 1ull;
}

// The distinct keys of the sample values[0], values[step], ... and of zero, into a global hash set of
// `slots` (zeroed, at least twice the sample): distinct[0] counts them (one atomic per block), distinct[1] flags the
// wrapped key.
template <typename K>
__global__ void value_sample(const K* __restrict__ values, const long long nnz, const long long step,
                             unsigned long long* __restrict__ table, const int slots, unsigned* __restrict__ distinct) {
    const long long samples = (nnz + step - 1) / step;
    unsigned long long added = 0;
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
            added += held == 0ull;
            if (held == 0ull || held == key) break;
            s = (s + 1) & (slots - 1);
        }
    }
    added = feature_block_sum(added);
    if (threadIdx.x == 0 && added) atomicAdd(&distinct[0], (unsigned)added);
}

// flags bit 0: some value's bits differ from the first's; bit 1 (tested only with `check` set and fewer than
// `cap` distinct sample keys): some value is none of the sample's.  One atomic per block: per warp, every warp would
// queue on the one flags word.
template <typename K>
__global__ void value_facts(const K* __restrict__ values, const long long nnz, const unsigned long long* __restrict__ table,
                            const int slots, const int check, const unsigned cap, const unsigned* __restrict__ distinct,
                            unsigned* __restrict__ flags) {
    __shared__ unsigned block_flags;
    if (threadIdx.x == 0) block_flags = 0u;
    const bool lookup = check && distinct[0] + distinct[1] < cap;
    const unsigned long long first = feature_value_key(values, 0);
    const long long stride = (long long)gridDim.x * blockDim.x;
    unsigned flag = 0u;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < nnz; i += stride) {
        const unsigned long long key = feature_value_key(values, i);
        flag |= key != first;
        if (lookup && !(flag & 2u)) {
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
    __syncthreads();
    const unsigned differ = __ballot_sync(FEATURE_FULL_MASK, flag & 1u) ? 1u : 0u;
    const unsigned unknown = __ballot_sync(FEATURE_FULL_MASK, flag & 2u) ? 2u : 0u;
    if ((threadIdx.x & 31) == 0 && (differ | unknown)) atomicOr(&block_flags, differ | unknown);
    __syncthreads();
    if (threadIdx.x == 0 && block_flags) atomicOr(flags, block_flags);
}
