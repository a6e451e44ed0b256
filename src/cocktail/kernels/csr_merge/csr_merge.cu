// csr_merge: merge-path CSR (Merrill & Garland, SC16).
//
// The merge of the row ends (indptr[1:]) with the nonzero indices 0..nnz-1 has m + nnz items;
// thread t consumes the items on diagonals [t*k, (t+1)*k) of the merge path, k = items_per_thread.
// A row end precedes a nonzero index equal to it, so row r ends right after its last nonzero.
//
// Rows that span threads are fixed up deterministically, without atomics:
//  * every row is finished (its row end consumed) by exactly one thread, which writes
//    alpha * (partial) + beta * y_old through store_y, so beta is applied once per row;
//  * each thread's carry (the partial sum of its last, unfinished row x1) is combined in the
//    block by a segmented scan keyed on x1 (keys are non-decreasing in thread order): a
//    thread finishing a row that started earlier in its block adds the carries before it;
//  * the merge block's last run of carries, whose row ends in a later merge block, goes to
//    carry_row / carry_val[merge_block]; csr_merge_fixup adds alpha * (those, in merge-block
//    order) to y.  A thread block takes merge blocks blockIdx.x, blockIdx.x + gridDim.x, ...
#include "common.cuh"

// Row ends consumed before `diagonal` on the merge path (the nonzeros consumed are diagonal - result).
template <typename I>
__device__ __forceinline__ long long csr_merge_search(const long long diagonal, const I m, const I nnz,
                                                      const I* __restrict__ indptr) {
    long long lo = diagonal > (long long)nnz ? diagonal - nnz : 0;
    long long hi = diagonal < (long long)m ? diagonal : (long long)m;
    while (lo < hi) {
        const long long pivot = (lo + hi) >> 1;
        // row end `pivot` against nonzero `diagonal - pivot - 1`: a row end wins ties
        if ((long long)indptr[pivot + 1] <= diagonal - pivot - 1) {
            lo = pivot + 1;
        } else {
            hi = pivot;
        }
    }
    return lo;
}

// blockDim.x must be a multiple of 32; needs (blockDim.x + 1) * sizeof(I) bytes of dynamic shared memory.
// Every thread of a block takes part in each merge block's scan; a block takes merge blocks
// blockIdx.x, blockIdx.x + gridDim.x, ... so the grid may be smaller than their number.
template <typename P, typename I>
__global__ void csr_merge(const I m,
                          const I nnz,
                          const long long items_per_thread,
                          COCKTAIL_CSR_ARGS(P, I),
                          COCKTAIL_PRODUCT_ARGS(P),
                          I* __restrict__ carry_row,
                          compute_t<P>* __restrict__ carry_val) {
    using T = compute_t<P>;
    constexpr int WARP = 32;
    extern __shared__ __align__(16) unsigned char csr_merge_shared[];
    I* start_row = reinterpret_cast<I*>(csr_merge_shared);  // row coordinate of each thread's start, + block end
    __shared__ I warp_row[WARP];                             // carry row of each warp's last lane
    __shared__ T warp_run[WARP];                             // and that lane's in-warp run of carries

    const int lane = threadIdx.x % WARP;
    const int warp = threadIdx.x / WARP;
    const long long total = (long long)m + nnz;
    // A block-stride loop over the merge blocks (one carry each): the grid is capped at the device's
    // limit, so a matrix with more blocks than gridDim.x can hold still runs; the loop is
    // block-uniform, so every thread reaches each __syncthreads.
    const long long per_block = items_per_thread * blockDim.x;
    const long long merge_blocks = total > 0 ? (total + per_block - 1) / per_block : 1;
    for (long long merge_block = blockIdx.x; merge_block < merge_blocks; merge_block += gridDim.x) {
        __syncthreads();  // the previous merge block's reads of start_row, warp_row and warp_run are done
        const long long thread = merge_block * blockDim.x + threadIdx.x;
        const long long d0 = min(thread * items_per_thread, total);
        const long long d1 = min(d0 + items_per_thread, total);  // == the next thread's d0

        start_row[threadIdx.x] = (I)csr_merge_search(d0, m, nnz, indptr);
        if (threadIdx.x == blockDim.x - 1) {
            start_row[blockDim.x] = (I)csr_merge_search(d1, m, nnz, indptr);
        }
        __syncthreads();
        const I x0 = start_row[threadIdx.x];      // first row end of the share
        const I x1 = start_row[threadIdx.x + 1];  // first row end after it: the carry row
        const I y1 = (I)(d1 - x1);
        I j = (I)(d0 - x0);                       // next nonzero

        // Row x0 may have begun before this share: its sum waits for the block scan.
        T head = T(0);
        if (x0 < x1) {
            for (const I end = indptr[x0 + 1]; j < end; ++j) {
                head += widen(data[j]) * load_x(x, indices[j]);
            }
            for (I row = x0 + 1; row < x1; ++row) {
                T sum = T(0);
                for (const I end = indptr[row + 1]; j < end; ++j) {
                    sum += widen(data[j]) * load_x(x, indices[j]);
                }
                store_y(y, row, sum, alpha, beta);
            }
        }
        T carry = T(0);
        for (; j < y1; ++j) {
            carry += widen(data[j]) * load_x(x, indices[j]);
        }

        // In-warp inclusive segmented scan of the carries, keyed on x1 (Hillis-Steele; keys sorted,
        // so a lane with the same key `offset` lanes back means the whole window shares it).
        T run = carry;
        for (int offset = 1; offset < WARP; offset *= 2) {
            const T v = __shfl_up_sync(COCKTAIL_FULL_MASK, run, offset);
            const I r = __shfl_up_sync(COCKTAIL_FULL_MASK, x1, offset);
            if (lane >= offset && r == x1) {
                run += v;
            }
        }
        const T run_before = __shfl_up_sync(COCKTAIL_FULL_MASK, run, 1);  // lane - 1's run, keyed x1(lane-1) == x0
        if (lane == WARP - 1) {
            warp_row[warp] = x1;
            warp_run[warp] = run;
        }
        __syncthreads();

        if (x0 < x1) {
            // Carries for row x0 from earlier threads of the block: this warp's, then earlier warps'
            // while their last lane still carries x0 (sorted keys: the first other key ends the run).
            T prefix = lane > 0 ? run_before : T(0);
            for (int w = warp - 1; w >= 0 && warp_row[w] == x0; --w) {
                prefix += warp_run[w];
            }
            store_y(y, x0, prefix + head, alpha, beta);
        }
        if (threadIdx.x == blockDim.x - 1) {
            T out = run;
            for (int w = warp - 1; w >= 0 && warp_row[w] == x1; --w) {
                out += warp_run[w];
            }
            carry_row[merge_block] = x1;  // == m when nothing is left to carry
            carry_val[merge_block] = out;
        }
    }
}

// y[r] += alpha * (sum of the block carries for row r, in block order): one thread per run of equal rows.
template <typename P, typename I>
__global__ void csr_merge_fixup(const long long carries,
                                const I m,
                                const I* __restrict__ carry_row,
                                const compute_t<P>* __restrict__ carry_val,
                                operand_t<P>* __restrict__ y,
                                const compute_t<P> alpha) {
    using T = compute_t<P>;
    COCKTAIL_GRID_STRIDE_LOOP(b, carries) {
        const I row = carry_row[b];
        if (row < m && (b == 0 || carry_row[b - 1] != row)) {
            T sum = T(0);
            for (long long c = b; c < carries && carry_row[c] == row; ++c) {
                sum += carry_val[c];
            }
            add_y(y, row, alpha * sum);
        }
    }
}
