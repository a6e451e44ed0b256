// Shared device helpers for Cocktail's SpMV kernels: operand loads and stores, the argument
// lists every kernel shares, and the grid-stride loop over one item per thread.
//
// COCKTAIL_LDG (0 or 1, set at compile time) routes reads of x through the read-only
// data path (__ldg): the modern form of the texture-cached x of Bell & Garland §4.7.
#pragma once

#include "precision.cuh"

#ifndef COCKTAIL_LDG
#define COCKTAIL_LDG 1
#endif

#define COCKTAIL_FULL_MASK 0xffffffffu

// The operands of y = alpha * A x + beta * y, the last arguments of every kernel that applies beta itself,
// for precision P (precision.cuh): x and y in its operand type, alpha and beta in its arithmetic type.
#define COCKTAIL_PRODUCT_ARGS(P) \
    const operand_t<P>* __restrict__ x, operand_t<P>* __restrict__ y, const compute_t<P> alpha, const compute_t<P> beta
// The same for kernels that add into a y already scaled by beta (the COO kernels).
#define COCKTAIL_SCALED_PRODUCT_ARGS(P) \
    const operand_t<P>* __restrict__ x, operand_t<P>* __restrict__ y, const compute_t<P> alpha
// The three arrays of a CSR matrix, its values stored in P's value type.
#define COCKTAIL_CSR_ARGS(P, I) \
    const I* __restrict__ indptr, const I* __restrict__ indices, const stored_t<P>* __restrict__ data
// The three arrays of a row-sorted COO matrix.
#define COCKTAIL_COO_ARGS(P, I) \
    const I* __restrict__ row, const I* __restrict__ col, const stored_t<P>* __restrict__ data

// x[i] in the arithmetic type (widened from a half x).
template <typename X>
__device__ __forceinline__ auto load_x(const X* __restrict__ x, long long i) {
    return widen(load_cached<(COCKTAIL_LDG != 0)>(x + i));
}

// How a CSR kernel finds the value of entry j (its VALUES template argument; spec.py's csr_values):
//  STORED_VALUES  data[j] (csr);
//  ONE_VALUE      data[0] for every entry (csr_pattern: a cached load, no value per entry);
//  CODED_VALUES   data[codes[j]] (csr_vi: data is its table of at most 256 values, one byte per entry).
// Every product is value * x as CSR's, so all three give CSR's results bit for bit (NaN and Inf
// included; an empty row stays 0). The value is widened to the arithmetic type (exactly) from
// narrower storage.
enum : int { STORED_VALUES = 0, ONE_VALUE = 1, CODED_VALUES = 2 };
// A CSR kernel's arrays with the codes of a csr_vi matrix (null and never read for the other two).
#define COCKTAIL_CODED_CSR_ARGS(P, I) COCKTAIL_CSR_ARGS(P, I), const unsigned char* __restrict__ codes
template <int VALUES, typename V>
__device__ __forceinline__ auto entry_value(const V* __restrict__ data, const unsigned char* __restrict__ codes,
                                            long long j) {
    return widen(data[VALUES == ONE_VALUE ? 0 : VALUES == CODED_VALUES ? (long long)codes[j] : j]);
}
// The same for kernels with no coded instantiation: PATTERN is ONE_VALUE.
template <bool PATTERN, typename V>
__device__ __forceinline__ auto entry_value(const V* __restrict__ data, long long j) {
    return widen(data[PATTERN ? 0 : j]);
}

// y = alpha * sum + beta * y, never reading y when beta == 0 (so NaN/Inf there never propagate); the
// result is rounded once to y's type X.
template <typename X, typename T>
__device__ __forceinline__ void store_y(X* y, long long row, T sum, T alpha, T beta) {
    y[row] = narrow<X>((beta == T(0)) ? alpha * sum : alpha * sum + beta * widen(y[row]));
}

// y += v, in y's type X (a kernel that adds a row's sum, or a carry, into a y already written).
template <typename X, typename T>
__device__ __forceinline__ void add_y(X* y, long long row, T v) {
    y[row] = narrow<X>(widen(y[row]) + v);
}

// for (i = this thread's index in the grid; i < n; i += threads in the grid): a grid-stride loop,
// one item per thread (Caffe's and PyTorch's CUDA_KERNEL_LOOP); one statement, its step declared
// in the loop's own scope.
#define COCKTAIL_GRID_STRIDE_LOOP(i, n)                                                              \
    for (long long i##_grid_stride = (long long)gridDim.x * blockDim.x,                                \
                   i = (long long)blockIdx.x * blockDim.x + threadIdx.x;                               \
         i < (n); i += i##_grid_stride)
