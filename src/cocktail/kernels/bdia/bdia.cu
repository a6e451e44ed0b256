// bdia: one thread per row over the banded diagonal format, the band's slice of x staged in
// shared memory (clSpMV §4.2.2).
//
// A block owns rows [base, base + rows) (rows <= blockDim.x). The diagonals of a band of first
// offset o are adjacent, so rows base.. of diagonals o+k0 .. o+k0+w-1 read the contiguous
// columns base+o+k0 .. base+o+k0+rows+w-2: the block stages them once (coalesced, columns
// outside [0, n) as 0) and thread t reads xs[t + k] for diagonal o+k0+k. A band is processed
// in pieces of at most `piece` diagonals so that the slice fits the dynamic shared memory
// (blockDim.x + piece - 1 values). The row, band and piece loops are block-uniform, so every
// thread of the block reaches each __syncthreads; a piece whose columns all fall outside the
// matrix is skipped by the whole block. Each thread reads only the diagonals whose column lies
// inside the matrix (no reads of data slots outside it).
#include "diagonals.cuh"

template <typename T, typename I>
__global__ void bdia(const I m,
                     const I n,
                     const long long nbands,
                     const long long stride,
                     const int piece,
                     const I* __restrict__ offsets,
                     const long long* __restrict__ band_ptr,
                     const T* __restrict__ data,
                     COCKTAIL_PRODUCT_ARGS(T)) {
    extern __shared__ __align__(16) unsigned char bdia_shared[];
    T* xs = reinterpret_cast<T*>(bdia_shared);  // blockDim.x + piece - 1 values
    const int tid = threadIdx.x;
    const int block = blockDim.x;
    const long long grid_stride = (long long)gridDim.x * block;
    for (long long base = (long long)blockIdx.x * block; base < m; base += grid_stride) {
        const long long row = base + tid;
        const bool active = row < m;
        const long long left = (long long)m - base;
        const int rows = left < block ? (int)left : block;  // rows of this block inside the matrix
        T sum = T(0);
        for (long long b = 0; b < nbands; ++b) {
            const long long first = band_ptr[b];
            const long long width = band_ptr[b + 1] - first;
            const long long offset = offsets[b];
            for (long long k0 = 0; k0 < width; k0 += piece) {
                const int w = width - k0 < piece ? (int)(width - k0) : piece;
                const long long c0 = base + offset + k0;  // column of xs[0]
                const int count = rows + w - 1;           // xs[0 .. count) covers every read below
                if (c0 + count <= 0 || c0 >= n) continue;  // block-uniform: no column inside the matrix
                __syncthreads();  // every thread is done reading the previous piece
                for (int s = tid; s < count; s += block) {
                    const long long c = c0 + s;
                    xs[s] = (c >= 0 && c < n) ? load_x(x, c) : T(0);
                }
                __syncthreads();
                if (active) {
                    // Diagonal k of the piece reads column c0 + tid + k: keep k with it in [0, n).
                    int lo, hi;
                    band_window(c0 + tid, w, (long long)n, lo, hi);
                    const T* d = data + (first + k0 + lo) * stride + row;
#pragma unroll 4
                    for (int k = lo; k < hi; ++k, d += stride) {
                        sum += *d * xs[tid + k];
                    }
                }
            }
        }
        if (active) store_y(y, row, sum, alpha, beta);
    }
}
