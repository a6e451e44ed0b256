// csr_stream: CSR in balanced warp items, products staged in shared memory (after Greathouse &
// Daga's CSR-Adaptive, SC14, at warp rather than block granularity).
//
// Work is cut at construction into items of at most CAP = 32 * ITEMS nonzeros, listed by
// item_row / item_nz (item i covers rows [item_row[i], item_row[i+1]) and nonzeros
// [item_nz[i], item_nz[i+1])). An item is either
//  * a run of whole rows: the warp streams the run's products into its slice of shared memory
//    (ITEMS independent loads per lane in flight), then reduces each row with the widest power
//    of two lanes that lets every row have its own lanes (one lane per row past 32 rows); or
//  * a piece of a row longer than CAP (item_row[i+1] == item_row[i], or item_nz[i] past the
//    row's start): the warp writes the piece's sum to partial[i]; the warp that takes the row's
//    last ticket (a ticket per row, kept at its first piece; atomicInc wraps it back to 0) adds
//    the pieces in a fixed order (lane-strided, then a shuffle tree) and stores the row, so the
//    result is deterministic.
// VALUES: how an entry's value is found (common.cuh's entry_value): csr; csr_pattern, every entry holding
// data[0] (read once, cached: no value per entry); csr_vi, a streamed one-byte code into the table data.
// SHORT_SHIFT: 0 for full columns; else short columns (csr_family.py): indices holds 16-bit offsets from
// column_base[j >> SHORT_SHIFT], the lowest column of entry j's chunk (read as x is, through the read-only
// cache with ldg: a warp's 32 entries share one or two).
// Rows are stored through store_y, so beta is applied once per row and y is never read when beta == 0.
#include "warp.cuh"

// Matrix streams are read once per product: STREAM asks for evict-first loads so that x keeps
// its place in L2.
template <bool STREAM, typename V>
__device__ __forceinline__ V load_matrix(const V* __restrict__ p) {
    if (STREAM) {
        return __ldcs(p);
    }
    return *p;
}
// A half value through its 16 bits (__ldcs has no overload for the half structs).
template <bool STREAM, typename H>
__device__ __forceinline__ H load_half_matrix(const H* __restrict__ p) {
    H h;
    h.bits = load_matrix<STREAM>(reinterpret_cast<const unsigned short*>(p));
    return h;
}
template <bool STREAM>
__device__ __forceinline__ f16 load_matrix(const f16* __restrict__ p) {
    return load_half_matrix<STREAM>(p);
}
template <bool STREAM>
__device__ __forceinline__ bf16 load_matrix(const bf16* __restrict__ p) {
    return load_half_matrix<STREAM>(p);
}

// The value of entry j, its value or code loaded as the matrix streams are.
template <int VALUES, bool STREAM, typename V>
__device__ __forceinline__ auto stream_value(const V* __restrict__ data, const unsigned char* __restrict__ codes,
                                             long long j) {
    if constexpr (VALUES == ONE_VALUE) {
        return widen(data[0]);
    } else if constexpr (VALUES == CODED_VALUES) {
        return widen(data[load_matrix<STREAM>(codes + j)]);
    } else {
        return widen(load_matrix<STREAM>(data + j));
    }
}

// The column of entry j, full or short (SHORT_SHIFT), its index loaded as the matrix streams are.
template <int SHORT_SHIFT, bool STREAM, typename I>
__device__ __forceinline__ long long stream_column(const I* __restrict__ indices, const I* __restrict__ column_base,
                                                   long long j) {
    if constexpr (SHORT_SHIFT == 0) {
        return (long long)load_matrix<STREAM>(indices + j);
    } else {
        const unsigned short* offsets = reinterpret_cast<const unsigned short*>(indices);
        return (long long)load_cached<(COCKTAIL_LDG != 0)>(column_base + (j >> SHORT_SHIFT)) +
               (long long)load_matrix<STREAM>(offsets + j);
    }
}

template <typename P, typename I, int ITEMS, bool STREAM, int VALUES, int SHORT_SHIFT>
__global__ void csr_stream(const long long n_items,
                           const I* __restrict__ item_row,
                           const I* __restrict__ item_nz,
                           COCKTAIL_CODED_CSR_ARGS(P, I),
                           const I* __restrict__ column_base,
                           COCKTAIL_PRODUCT_ARGS(P),
                           compute_t<P>* __restrict__ partial,
                           unsigned int* __restrict__ ticket) {
    using T = compute_t<P>;
    constexpr int WARP = 32;
    constexpr int CAP = WARP * ITEMS;
    extern __shared__ __align__(16) unsigned char csr_stream_shared[];
    const int lane = threadIdx.x % WARP;
    const int warp_in_block = threadIdx.x / WARP;
    T* products = reinterpret_cast<T*>(csr_stream_shared) + warp_in_block * CAP;
    // A warp-stride loop over the items: the grid is capped at the device's limit, so a matrix with
    // more items than gridDim.x can hold warps still runs (one pass per warp for every smaller one).
    // The early exits are warp-uniform (one item per warp), so nothing synchronises beyond the warp.
    const long long warps_per_block = blockDim.x / WARP;
    const long long warp_stride = (long long)gridDim.x * warps_per_block;
    for (long long item = (long long)blockIdx.x * warps_per_block + warp_in_block; item < n_items;
         item += warp_stride) {
        __syncwarp();  // the previous item's reads of products end before they are overwritten
        const long long r0 = item_row[item];
        const long long r1 = item_row[item + 1];
        const long long z0 = item_nz[item];
        const long long z1 = item_nz[item + 1];
        const long long row_start = indptr[r0];

#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const long long j = z0 + k * WARP + lane;
            T v = T(0);
            if (j < z1) {
                v = stream_value<VALUES, STREAM>(data, codes, j) *
                    load_x(x, stream_column<SHORT_SHIFT, STREAM>(indices, column_base, j));
            }
            products[k * WARP + lane] = v;
        }
        __syncwarp();

        if (r1 == r0 || z0 != row_start) {  // a piece of a long row
            T v = T(0);
#pragma unroll
            for (int k = 0; k < ITEMS; ++k) {
                v += products[k * WARP + lane];
            }
            v = group_sum(v, WARP);
            const long long first = item - (z0 - row_start) / CAP;
            const long long pieces = ((long long)indptr[r0 + 1] - row_start + CAP - 1) / CAP;
            unsigned int finisher = 0;
            if (lane == 0) {
                partial[item] = v;
                // atomicInc wraps the ticket back to 0 on the last piece: ready for the next product
                // without a separate reset, and self-healing if products ever overlapped. The increment
                // releases the piece's sum, and only the finisher acquires the others': a full
                // __threadfence() on every piece also invalidated L1, costing x's hits there (5-7% on
                // the web graphs, H100).
#if __CUDA_ARCH__ >= 700
                unsigned int before;
                asm volatile("atom.release.gpu.global.inc.u32 %0, [%1], %2;"
                             : "=r"(before) : "l"(ticket + first), "r"((unsigned int)(pieces - 1)) : "memory");
                finisher = before == (unsigned int)(pieces - 1);
                if (finisher) {
                    asm volatile("fence.acq_rel.gpu;" ::: "memory");
                }
#else
                __threadfence();
                finisher = atomicInc(ticket + first, (unsigned int)(pieces - 1)) == (unsigned int)(pieces - 1);
                __threadfence();
#endif
            }
            if (!__shfl_sync(COCKTAIL_FULL_MASK, finisher, 0)) {
                continue;
            }
            __syncwarp();
            T sum = T(0);
            for (long long p = lane; p < pieces; p += WARP) {
                sum += __ldcg(partial + first + p);  // from L2: other SMs wrote them
            }
            sum = group_sum(sum, WARP);
            if (lane == 0) {
                store_y(y, r0, sum, alpha, beta);
            }
            continue;
        }

        const long long rows = r1 - r0;
        if (rows <= WARP) {
            int width = WARP;  // lanes per row: rows * width <= 32
            while ((long long)width * rows > WARP) {
                width >>= 1;
            }
            const int group = lane / width;
            const int sub = lane % width;
            const long long row = r0 + group;
            T v = T(0);
            if (group < rows) {
                const long long end = (long long)indptr[row + 1] - z0;
                for (long long j = (long long)indptr[row] - z0 + sub; j < end; j += width) {
                    v += products[j];
                }
            }
            v = group_sum(v, width);
            if (sub == 0 && group < rows) {
                store_y(y, row, v, alpha, beta);
            }
            continue;
        }
        for (long long row = r0 + lane; row < r1; row += WARP) {
            T v = T(0);
            const long long end = (long long)indptr[row + 1] - z0;
            for (long long j = (long long)indptr[row] - z0; j < end; ++j) {
                v += products[j];
            }
            store_y(y, row, v, alpha, beta);
        }
    }
}
