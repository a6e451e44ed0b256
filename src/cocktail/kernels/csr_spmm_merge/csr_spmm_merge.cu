// csr_spmm_merge: Y = alpha * A X + beta * Y over CSR with the merge-path balance of csr_merge
// (Merrill & Garland, SC16), every stored entry read once per tile of LANES * COLS columns.
//
// The merge of the row ends with the nonzeros (m + nnz items) is cut into shares of `items`
// items; a group of LANES lanes takes one (share, tile) unit, its lanes holding strips of the
// tile's columns (spmm.cuh). share_row[s] (computed once, when the launches are bound) is the
// number of row ends before share s, so no search runs per product. Deterministic, no atomics:
//  * every row is finished (its row end consumed) by exactly one share, which stores
//    alpha * (its part) + beta * Y[row], so beta is applied once per row;
//  * the part of a row that a share consumes without finishing it (its carry: at most one row
//    per share, share_row[s + 1]) is kept in carry[s, :]; csr_spmm_merge_fixup then adds
//    alpha * (the carries of each row, in share order) to Y. The runs of shares carrying one row
//    are listed once per matrix: (row, first share, count).
// A launch covers the columns [col0, min(col0 + chunk, k)), so the carry buffer (shares x chunk)
// is made once per matrix whatever k is: a wider block runs a pair of launches per chunk.
// VEC: vector strips (spmm.cuh); the binder asks for them only where chunk is a multiple of COLS too, so
// a strip starting below a chunk's end lies wholly inside it.
// PATTERN: a csr_pattern matrix, every entry holding data[0] (one cached load, no value per entry).
#include "spmm.cuh"

// sum += v * X[x_row, strip columns]: a vector strip's 16-byte loads, or a scalar strip's columns below col_end.
template <typename T, int LANES, int COLS, bool VEC>
__device__ __forceinline__ void add_entry(T (&sum)[COLS], const T v, const T* __restrict__ x, const long long x_row,
                                          const long long j, const long long col_end, const long long x_col_step) {
    if constexpr (VEC) {
        strip_add_vec<T, COLS>(sum, v, x, x_row, j);
    } else {
        strip_add<T, LANES, COLS>(sum, v, x, x_row, j, col_end, x_col_step);
    }
}

template <typename T, typename I, int LANES, int COLS, bool VEC, bool PATTERN>
__global__ void csr_spmm_merge(const long long shares, const long long items, const long long total,
                               const I* __restrict__ share_row, const long long col0, const long long chunk,
                               COCKTAIL_BLOCK_ARGS, COCKTAIL_CSR_ARGS(T, I), COCKTAIL_PRODUCT_ARGS(T),
                               T* __restrict__ carry) {
    const RowGroups g = row_groups<LANES>();
    constexpr long long TILE = (long long)LANES * COLS;
    const long long col_end = min(col0 + chunk, k);
    const long long tiles = (col_end - col0 + TILE - 1) / TILE;
    const long long units = shares * tiles;
    for (long long base = g.first; base < units; base += g.stride) {
        const long long unit = base + g.group_in_warp;
        if (unit >= units) continue;
        const long long share = unit / tiles;
        const long long j = strip_first<LANES, COLS, VEC>(col0 + (unit - share * tiles) * TILE, g.lane);
        if (j >= col_end) continue;  // a lane past the chunk's columns (no lane waits for another)
        const long long d0 = share * items;
        const long long d1 = min(d0 + items, total);
        long long row = share_row[share];
        const long long carry_row = share_row[share + 1];
        long long e = d0 - row;  // the share's first nonzero
        T sum[COLS];
        strip_clear(sum);
        for (; row < carry_row; ++row) {
            for (const long long end = indptr[row + 1]; e < end; ++e) {
                add_entry<T, LANES, COLS, VEC>(sum, entry_value<PATTERN>(data, e), x, (long long)indices[e] * x_row_step, j, col_end,
                                               x_col_step);
            }
            if constexpr (VEC) {
                strip_store_vec<T, COLS>(y, row * y_row_step, sum, j, alpha, beta);
            } else {
                strip_store<T, LANES, COLS>(y, row * y_row_step, sum, j, col_end, y_col_step, alpha, beta);
            }
            strip_clear(sum);
        }
        for (const long long end = d1 - carry_row; e < end; ++e) {
            add_entry<T, LANES, COLS, VEC>(sum, entry_value<PATTERN>(data, e), x, (long long)indices[e] * x_row_step, j, col_end,
                                           x_col_step);
        }
        if constexpr (VEC) {
#pragma unroll
            for (int c = 0; c < COLS; ++c) carry[share * chunk - col0 + j + c] = sum[c];
        } else {
            strip_keep<T, LANES, COLS>(carry, share * chunk - col0, sum, j, col_end);
        }
    }
}

// Y[row, c] += alpha * (carry[first, c] + ... + carry[first + count - 1, c]) for every listed run and
// every column c of the launch's chunk.
// Short runs: a thread per (run, column), summing in share order. Long runs (LONG = true): a block
// per run, its warps taking every warp-count-th share and its lanes 32 columns at a time, the
// warps' sums added in warp order: the same order on every product.
template <typename T, bool LONG>
__global__ void csr_spmm_merge_fixup(const long long runs, const long long* __restrict__ run_row,
                                     const long long* __restrict__ run_first, const long long* __restrict__ run_count,
                                     const T* __restrict__ carry, const long long col0, const long long chunk,
                                     COCKTAIL_BLOCK_ARGS, T* __restrict__ y, const T alpha) {
    const long long width = min(chunk, k - col0);  // the chunk's columns
    if (!LONG) {
        COCKTAIL_GRID_STRIDE_LOOP(i, runs * width) {
            const long long run = i / width;
            const long long c = i - run * width;
            const long long first = run_first[run];
            const long long last = first + run_count[run];
            T sum = T(0);
            for (long long s = first; s < last; ++s) sum += carry[s * chunk + c];
            y[run_row[run] * y_row_step + (col0 + c) * y_col_step] += alpha * sum;
        }
        return;
    }
    constexpr int WARP = 32;
    __shared__ T part[WARP][WARP + 1];  // [warp][lane]: each warp's sum of one column (blockDim.x <= 1024)
    const int lane = threadIdx.x % WARP;
    const int warp = threadIdx.x / WARP;
    const int warps = blockDim.x / WARP;
    for (long long run = blockIdx.x; run < runs; run += gridDim.x) {
        const long long first = run_first[run];
        const long long last = first + run_count[run];
        for (long long c0 = 0; c0 < width; c0 += WARP) {
            const long long c = c0 + lane;
            T sum = T(0);
            if (c < width) {
                for (long long s = first + warp; s < last; s += warps) sum += carry[s * chunk + c];
            }
            part[warp][lane] = sum;
            __syncthreads();
            if (warp == 0 && c < width) {
                T total = T(0);
                for (int w = 0; w < warps; ++w) total += part[w][lane];
                y[run_row[run] * y_row_step + (col0 + c) * y_col_step] += alpha * total;
            }
            __syncthreads();
        }
    }
}
