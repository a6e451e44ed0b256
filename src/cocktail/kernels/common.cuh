// Shared device helpers for Cocktail's SpMV kernels: operand loads and stores, the argument
// lists every kernel shares, and the grid-stride loop over one item per thread.
//
// COCKTAIL_LDG (0 or 1, set at compile time) routes reads of x through the read-only
// data path (__ldg): the modern form of the texture-cached x of Bell & Garland §4.7.
#pragma once

#ifndef COCKTAIL_LDG
#define COCKTAIL_LDG 1
#endif

#define COCKTAIL_FULL_MASK 0xffffffffu

// The operands of y = alpha * A x + beta * y, the last arguments of every kernel that applies beta itself.
#define COCKTAIL_PRODUCT_ARGS(T) const T* __restrict__ x, T* __restrict__ y, const T alpha, const T beta
// The same for kernels that add into a y already scaled by beta (the COO kernels).
#define COCKTAIL_SCALED_PRODUCT_ARGS(T) const T* __restrict__ x, T* __restrict__ y, const T alpha
// The three arrays of a CSR matrix.
#define COCKTAIL_CSR_ARGS(T, I) \
    const I* __restrict__ indptr, const I* __restrict__ indices, const T* __restrict__ data
// The three arrays of a row-sorted COO matrix.
#define COCKTAIL_COO_ARGS(T, I) \
    const I* __restrict__ row, const I* __restrict__ col, const T* __restrict__ data

template <typename T>
__device__ __forceinline__ T load_x(const T* __restrict__ x, long long i) {
#if COCKTAIL_LDG
    return __ldg(x + i);
#else
    return x[i];
#endif
}

// The value of CSR entry j: data[j], or for a csr_pattern matrix (PATTERN), whose entries all hold data[0],
// that one value (a cached load, no value per entry). Every product is value * x as CSR's, so a pattern
// matrix gives CSR's results bit for bit (NaN and Inf included; an empty row stays 0).
template <bool PATTERN, typename T>
__device__ __forceinline__ T entry_value(const T* __restrict__ data, long long j) {
    return data[PATTERN ? 0 : j];
}

// y = alpha * sum + beta * y, never reading y when beta == 0 (so NaN/Inf there never propagate).
template <typename T>
__device__ __forceinline__ void store_y(T* y, long long row, T sum, T alpha, T beta) {
    y[row] = (beta == T(0)) ? alpha * sum : alpha * sum + beta * y[row];
}

// for (i = this thread's index in the grid; i < n; i += threads in the grid): a grid-stride loop,
// one item per thread (Caffe's and PyTorch's CUDA_KERNEL_LOOP); one statement, its step declared
// in the loop's own scope.
#define COCKTAIL_GRID_STRIDE_LOOP(i, n)                                                              \
    for (long long i##_grid_stride = (long long)gridDim.x * blockDim.x,                                \
                   i = (long long)blockIdx.x * blockDim.x + threadIdx.x;                               \
         i < (n); i += i##_grid_stride)
