// dia_vi: the dia kernel over one-byte value codes (Kourtis, Goumas & Koziris, CF 2008: CSR-VI's
// value table on DIA).
//
// The block stages the value table (at most 256 values) in shared memory once, and the diagonal
// offsets blockDim.x at a time as dia does. Each thread takes ROWS consecutive rows: with ROWS = 4
// it loads their four codes of a diagonal as one uchar4, so a warp reads 128 contiguous bytes of
// codes per diagonal (the binder asks for ROWS = 4 only when the row stride and the codes pointer
// are multiples of 4). The row loop iterates on a block-uniform base so that every thread of the
// block reaches each __syncthreads, including threads whose rows are past the end of the matrix.
#include "diagonals.cuh"

template <int ROWS>
struct RowCodes;

template <>
struct RowCodes<1> {
    unsigned char c[1];
    __device__ __forceinline__ void load(const unsigned char* __restrict__ p) { c[0] = p[0]; }
};

template <>
struct RowCodes<4> {
    unsigned char c[4];
    __device__ __forceinline__ void load(const unsigned char* __restrict__ p) {
        const uchar4 v = *reinterpret_cast<const uchar4*>(p);
        c[0] = v.x;
        c[1] = v.y;
        c[2] = v.z;
        c[3] = v.w;
    }
};

template <typename T, typename I, int ROWS>
__global__ void dia_vi(const I m,
                       const I n,
                       const I ndiag,
                       const long long stride,
                       const int ntable,
                       const I* __restrict__ offsets,
                       const unsigned char* __restrict__ codes,
                       const T* __restrict__ table,
                       COCKTAIL_PRODUCT_ARGS(T)) {
    extern __shared__ __align__(16) unsigned char dia_vi_shared[];
    I* staged = reinterpret_cast<I*>(dia_vi_shared);                 // blockDim.x offsets
    T* values = reinterpret_cast<T*>(dia_vi_shared + blockDim.x * sizeof(I));  // ntable values
    const int tid = threadIdx.x;
    const long long chunk = blockDim.x;
    for (int k = tid; k < ntable; k += blockDim.x) values[k] = table[k];
    // With a single chunk the offsets are staged once for the whole grid-stride loop.
    const bool staged_once = (long long)ndiag <= chunk;
    if (staged_once && tid < ndiag) staged[tid] = offsets[tid];
    __syncthreads();
    const long long rows_per_block = chunk * ROWS;
    const long long grid_stride = (long long)gridDim.x * rows_per_block;
    for (long long base = (long long)blockIdx.x * rows_per_block; base < m; base += grid_stride) {
        const long long row0 = base + (long long)tid * ROWS;
        const bool active = row0 < m;
        T sum[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; ++r) sum[r] = T(0);
        for (long long d0 = 0; d0 < ndiag; d0 += chunk) {
            if (!staged_once) stage_offsets(staged, offsets, ndiag, d0, tid);
            if (active) {
                const long long left = (long long)ndiag - d0;
                const int count = left < chunk ? (int)left : (int)chunk;
                for (int k = 0; k < count; ++k) {
                    const long long col0 = row0 + (long long)staged[k];
                    if (col0 + ROWS <= 0 || col0 >= n) continue;  // no row of this thread reaches the matrix
                    RowCodes<ROWS> c;
                    c.load(codes + (d0 + k) * stride + row0);  // row0 + ROWS <= stride: never past the row
#pragma unroll
                    for (int r = 0; r < ROWS; ++r) {
                        const long long col = col0 + r;
                        if (row0 + r < m && col >= 0 && col < n) {
                            sum[r] += values[c.c[r]] * load_x(x, col);
                        }
                    }
                }
            }
        }
        if (active) {
#pragma unroll
            for (int r = 0; r < ROWS; ++r) {
                if (row0 + r < m) store_y(y, row0 + r, sum[r], alpha, beta);
            }
        }
    }
}
