// Device helpers of the blocked-format kernels (bcsr, bell, sbell; clSpMV §4.4).
//
// The three formats store an R x C block as R units of C consecutive values (1 x C units);
// every unit starts at an element offset that is a multiple of C. With R and C template
// parameters the loops below unroll and the R partial sums and C x values stay in registers.
#pragma once

#include "common.cuh"

// The widest vector type that loads a 1 x C unit of T in whole pieces: VEC values of T in one
// load of at most 16 bytes (VEC == 1: plain loads).
template <typename T, int C>
struct block_vector {
    static constexpr int VEC = 1;
    using type = T;
};
template <> struct block_vector<float, 2> { static constexpr int VEC = 2; using type = float2; };
template <> struct block_vector<float, 4> { static constexpr int VEC = 4; using type = float4; };
template <> struct block_vector<float, 8> { static constexpr int VEC = 4; using type = float4; };
template <> struct block_vector<double, 2> { static constexpr int VEC = 2; using type = double2; };
template <> struct block_vector<double, 4> { static constexpr int VEC = 2; using type = double2; };
template <> struct block_vector<double, 8> { static constexpr int VEC = 2; using type = double2; };

// v[at ..] = the components of w.
template <int C> __device__ __forceinline__ void unpack(float2 w, float (&v)[C], int at) {
    v[at] = w.x; v[at + 1] = w.y;
}
template <int C> __device__ __forceinline__ void unpack(float4 w, float (&v)[C], int at) {
    v[at] = w.x; v[at + 1] = w.y; v[at + 2] = w.z; v[at + 3] = w.w;
}
template <int C> __device__ __forceinline__ void unpack(double2 w, double (&v)[C], int at) {
    v[at] = w.x; v[at + 1] = w.y;
}

// v = the C values at unit, whose element offset from the data array's start is a multiple
// of C. `vec` (uniform; the binder sets it when the data array starts on a 16-byte boundary)
// allows vector loads: the unit then starts on a multiple of C * sizeof(T) bytes, hence of
// the vector's size.
template <typename T, int C>
__device__ __forceinline__ void load_unit(const T* __restrict__ unit, T (&v)[C], bool vec) {
    using V = block_vector<T, C>;
    if constexpr (V::VEC > 1) {
        if (vec) {
            const typename V::type* p = reinterpret_cast<const typename V::type*>(unit);
#pragma unroll
            for (int q = 0; q < C / V::VEC; ++q) unpack(p[q], v, q * V::VEC);
            return;
        }
    }
#pragma unroll
    for (int j = 0; j < C; ++j) v[j] = unit[j];
}

// xv = x[col0 .. col0+C-1], 0 past column n: a block of the last block column can reach past
// the matrix edge (its values there are 0, but x has only n entries).
template <typename T, int C, typename X>
__device__ __forceinline__ void load_x_segment(const X* __restrict__ x, long long col0, long long n, T (&xv)[C]) {
#pragma unroll
    for (int j = 0; j < C; ++j) {
        xv[j] = T(0);
        if (col0 + j < n) xv[j] = load_x(x, col0 + j);
    }
}

// sum[ri] += (unit ri of the block) . xv for the R units at unit0, unit0 + unit_stride, ...
// (element offsets; unit_stride is a multiple of C).
// The values V may be stored narrower than the arithmetic type T (widened exactly).
template <typename T, int R, int C, typename V>
__device__ __forceinline__ void block_multiply(const V* __restrict__ unit0, long long unit_stride, bool vec,
                                               const T (&xv)[C], T (&sum)[R]) {
#pragma unroll
    for (int ri = 0; ri < R; ++ri) {
        V a[C];
        load_unit<V, C>(unit0 + ri * unit_stride, a, vec);
#pragma unroll
        for (int j = 0; j < C; ++j) sum[ri] += widen(a[j]) * xv[j];
    }
}

// y[row0 + ri] = alpha * sum[ri] + beta * y[row0 + ri] for the rows of the superrow below m.
template <typename T, int R, typename X>
__device__ __forceinline__ void store_superrow(X* y, long long row0, long long m, const T (&sum)[R], T alpha,
                                               T beta) {
#pragma unroll
    for (int ri = 0; ri < R; ++ri) {
        if (row0 + ri < m) store_y(y, row0 + ri, sum[ri], alpha, beta);
    }
}
