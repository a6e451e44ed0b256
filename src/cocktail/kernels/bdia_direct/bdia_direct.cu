// bdia_direct: one thread per row over the banded diagonal format, x read directly (clSpMV
// §4.2.2, the variant without shared-memory caching).
//
// Grid-stride loop over rows. For each band the thread computes the first column once
// (row + offset of the band's first diagonal) and walks the band's consecutive diagonals,
// keeping only those whose column lies inside the matrix: no per-diagonal offsets are read.
#include "diagonals.cuh"

template <typename T, typename I>
__global__ void bdia_direct(const I m,
                            const I n,
                            const long long nbands,
                            const long long stride,
                            const I* __restrict__ offsets,
                            const long long* __restrict__ band_ptr,
                            const T* __restrict__ data,
                            COCKTAIL_PRODUCT_ARGS(T)) {
    COCKTAIL_GRID_STRIDE_LOOP(row, m) {
        T sum = T(0);
        for (long long b = 0; b < nbands; ++b) {
            const long long first = band_ptr[b];
            const long long width = band_ptr[b + 1] - first;
            const long long c = row + (long long)offsets[b];  // column of the band's first diagonal
            // Diagonal k of the band reads column c + k: keep k with it in [0, n).
            long long lo, hi;
            band_window(c, width, (long long)n, lo, hi);
            const T* d = data + (first + lo) * stride + row;
            for (long long k = lo; k < hi; ++k, d += stride) {
                sum += *d * load_x(x, c + k);
            }
        }
        store_y(y, row, sum, alpha, beta);
    }
}
