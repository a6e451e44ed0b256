// csr_stream: CSR cut into equal warp items of CAP = 32 * ITEMS nonzeros, products staged in
// shared memory (after Greathouse & Daga's CSR-Adaptive, SC14, with the row-splitting of
// merge-based CSR so that every item is full).
//
// Item i holds nonzeros [i*CAP, min((i+1)*CAP, nnz)). It stores the rows that end inside it:
// rows [item_row[i], item_row[i+1]) (item_row[i] = the first row ending past i*CAP; item 0 also
// takes the empty rows in front). The row item_row[i+1], when it starts before the item's end,
// continues past it: the item writes that row's share to tail[i]. A row that ends in item b but
// began in an earlier item a writes its last share to head[b]; every item a..b that holds a share
// then takes a ticket (kept at ticket[a]), and the warp that takes the last one adds the shares
// in item order (tail[a] .. tail[b-1], head[b]) and stores the row: deterministic, with beta
// applied once. The finisher resets the ticket for the next product.
#include "common.cuh"

// Matrix streams are read once per product: STREAM asks for evict-first loads so that x keeps
// its place in L2.
template <bool STREAM, typename V>
__device__ __forceinline__ V load_matrix(const V* __restrict__ p) {
    if (STREAM) {
        return __ldcs(p);
    }
    return *p;
}

// Adds the shares of `row` (items first..last) and stores it. The whole warp calls it.
template <typename T, typename I>
__device__ __forceinline__ void csr_stream_finish(const long long row, const long long first, const long long last,
                                                  const T* __restrict__ head, const T* __restrict__ tail,
                                                  T* __restrict__ y, const T alpha, const T beta,
                                                  unsigned int* __restrict__ ticket, const int lane) {
    T sum = T(0);
    for (long long i = first + lane; i < last; i += 32) {
        sum += __ldcg(tail + i);  // from L2: other SMs wrote them
    }
    sum = group_sum(sum, 32);
    if (lane == 0) {
        store_y(y, row, sum + __ldcg(head + last), alpha, beta);
        ticket[first] = 0u;
    }
}

// Stores the rows ending in one item from its products; shares of rows spanning items go
// through head/tail and the tickets. The whole warp calls it.
template <typename T, typename I, int ITEMS>
__device__ __forceinline__ void csr_stream_item(const long long item, const long long z0, const long long z1,
                                                const long long r0, const long long r1, const long long bound,
                                                const T* products, const I m, const I* __restrict__ indptr,
                                                T* __restrict__ y, const T alpha, const T beta,
                                                T* __restrict__ head, T* __restrict__ tail,
                                                unsigned int* __restrict__ ticket, const int lane) {
    constexpr int WARP = 32;
    constexpr long long CAP = WARP * ITEMS;
    // The row continuing past the item: its share, summed by the whole warp.
    const long long rows = r1 - r0;
    const long long row_after = __shfl_sync(COCKTAIL_FULL_MASK, bound, (int)(rows < WARP ? rows : 0));
    const long long tail_start = rows < WARP ? row_after : (r1 < (long long)m ? (long long)indptr[r1] : z1);
    const bool has_tail = tail_start < z1;
    if (has_tail) {
        T v = T(0);
        for (long long j = (tail_start > z0 ? tail_start : z0) - z0 + lane; j < z1 - z0; j += WARP) {
            v += products[j];
        }
        v = group_sum(v, WARP);
        if (lane == 0) {
            tail[item] = v;
        }
    }

    // Rows ending in the item; the first may have begun in an earlier item.
    const long long first_start = __shfl_sync(COCKTAIL_FULL_MASK, bound, 0);
    T sum = T(0);
    long long my_row = -1;  // the row this lane finished (lanes with sub == 0 only)
    if (rows < WARP) {      // the row bounds are all in `bound` (row r0 + rows ends at bound[rows])
        int width = WARP;   // lanes per row: rows * width <= 32
        while ((long long)width * rows > WARP) {
            width >>= 1;
        }
        const int group = lane / width;
        const int sub = lane % width;
        const long long start = __shfl_sync(COCKTAIL_FULL_MASK, bound, group);
        const long long end = __shfl_sync(COCKTAIL_FULL_MASK, bound, (group + 1) % WARP);
        if (group < rows) {
            for (long long j = (start > z0 ? start : z0) - z0 + sub; j < end - z0; j += width) {
                sum += products[j];
            }
        }
        sum = group_sum(sum, width);
        if (sub == 0 && group < rows) {
            my_row = r0 + group;
        }
    } else {
        for (long long row = r0 + lane; row < r1; row += WARP) {
            const long long start = indptr[row];
            const long long end = indptr[row + 1];
            T v = T(0);
            for (long long j = (start > z0 ? start : z0) - z0; j < end - z0; ++j) {
                v += products[j];
            }
            if (row == r0) {  // kept for the spanning check below
                sum = v;
                my_row = row;
            } else {
                store_y(y, row, v, alpha, beta);
            }
        }
    }
    const bool spanning = rows > 0 && first_start < z0;  // row r0 began in an earlier item
    if (my_row >= 0 && !(spanning && my_row == r0)) {
        store_y(y, my_row, sum, alpha, beta);
    }

    // Shares of rows that span items: tickets, and the last taker finishes the row.
    bool finish_head = false, finish_tail = false;
    long long head_first = 0, tail_first = 0, tail_last = 0;
    if (spanning && my_row == r0) {
        head[item] = sum;
        head_first = first_start / CAP;
        __threadfence();  // the share is visible before its ticket
        finish_head = atomicAdd(ticket + head_first, 1u) == (unsigned int)(item - head_first);
    }
    if (has_tail && lane == 0) {
        tail_first = tail_start / CAP;
        tail_last = ((long long)indptr[r1 + 1] - 1) / CAP;
        __threadfence();
        finish_tail = atomicAdd(ticket + tail_first, 1u) == (unsigned int)(tail_last - tail_first);
    }
    const unsigned int heads = __ballot_sync(COCKTAIL_FULL_MASK, finish_head);
    if (heads) {
        const int src = __ffs(heads) - 1;
        __threadfence();
        csr_stream_finish<T, I>(r0, __shfl_sync(COCKTAIL_FULL_MASK, head_first, src), item, head, tail, y,
                                alpha, beta, ticket, lane);
    }
    if (__shfl_sync(COCKTAIL_FULL_MASK, finish_tail, 0)) {
        __threadfence();
        csr_stream_finish<T, I>(r1, __shfl_sync(COCKTAIL_FULL_MASK, tail_first, 0),
                                __shfl_sync(COCKTAIL_FULL_MASK, tail_last, 0), head, tail, y, alpha, beta,
                                ticket, lane);
    }
}

// The item's entries this lane reads: ITEMS values and column indices, loaded together.
template <typename T, typename I, int ITEMS, bool STREAM>
struct csr_stream_entries {
    T value[ITEMS];
    I column[ITEMS];

    __device__ __forceinline__ void load(const T* __restrict__ data, const I* __restrict__ indices,
                                         const long long z0, const long long z1, const int lane) {
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const long long j = z0 + k * 32 + lane;
            value[k] = j < z1 ? load_matrix<STREAM>(data + j) : T(0);
            column[k] = j < z1 ? load_matrix<STREAM>(indices + j) : I(0);
        }
    }
};

// Warps loop over the items (item, item + all warps, ...); each loads its next item's entries
// before it reduces the current one, so those loads are in flight during the reduction.
template <typename T, typename I, int ITEMS, bool STREAM>
__global__ void csr_stream(const long long n_items,
                           const I m,
                           const long long nnz,
                           const I* __restrict__ item_row,
                           const I* __restrict__ indptr,
                           const I* __restrict__ indices,
                           const T* __restrict__ data,
                           const T* __restrict__ x,
                           T* __restrict__ y,
                           const T alpha,
                           const T beta,
                           T* __restrict__ head,
                           T* __restrict__ tail,
                           unsigned int* __restrict__ ticket) {
    constexpr int WARP = 32;
    constexpr long long CAP = WARP * ITEMS;
    extern __shared__ __align__(16) unsigned char csr_stream_shared[];
    const int lane = threadIdx.x % WARP;
    const int warp_in_block = threadIdx.x / WARP;
    T* products = reinterpret_cast<T*>(csr_stream_shared) + warp_in_block * CAP;
    const long long warps = (long long)gridDim.x * (blockDim.x / WARP);
    long long item = (long long)blockIdx.x * (blockDim.x / WARP) + warp_in_block;
    csr_stream_entries<T, I, ITEMS, STREAM> entries;
    long long r0 = 0, r1 = 0;
    if (item < n_items) {
        entries.load(data, indices, item * CAP, min(item * CAP + CAP, nnz), lane);
        r0 = item_row[item];
        r1 = item_row[item + 1];
    }
    for (; item < n_items; item += warps) {  // warp-uniform
        const long long z0 = item * CAP;
        const long long z1 = z0 + CAP < nnz ? z0 + CAP : nnz;
        // Starts of rows r0 .. r0 + 31 (clamped to indptr's end).
        const long long bound = indptr[r0 + lane < (long long)m ? r0 + lane : (long long)m];
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            products[k * WARP + lane] = entries.value[k] * load_x(x, entries.column[k]);
        }
        const long long next = item + warps;
        long long next_r0 = 0, next_r1 = 0;
        if (next < n_items) {
            entries.load(data, indices, next * CAP, min(next * CAP + CAP, nnz), lane);
            next_r0 = item_row[next];
            next_r1 = item_row[next + 1];
        }
        __syncwarp();
        csr_stream_item<T, I, ITEMS>(item, z0, z1, r0, r1, bound, products, m, indptr, y, alpha, beta, head, tail,
                                     ticket, lane);
        __syncwarp();  // every lane is done reading products before the next item writes them
        r0 = next_r0;
        r1 = next_r1;
    }
}
