// Column strips of a block product Y = alpha * A X + beta * Y (X n x k, Y m x k, any strides).
//
// A group of LANES lanes works on a tile of LANES * COLS columns; lane `lane` holds, in registers,
// the columns j, j + LANES, ..., j + (COLS - 1) * LANES with j = tile start + lane, so that for row
// -major X consecutive lanes read consecutive addresses. Element (r, c) of X is
// x[r * x_row_step + c * x_col_step], of Y y[r * y_row_step + c * y_col_step]: one kernel serves
// row-major, column-major and strided operands without a copy.
//
// Vector strips (VEC = true, the strip_*_vec helpers): lane `lane` holds the COLS adjacent columns
// j .. j + COLS - 1 with j = tile start + lane * COLS and reads and writes them in 16-byte loads and
// stores (float4, double2). The binder asks for them only when both column steps are 1, k and both row
// steps are multiples of COLS, COLS values fill whole 16-byte words and X and Y start on 16 bytes, so a
// strip lies in one row, aligned, and lies wholly below k when its first column does.
#pragma once

#include "warp.cuh"

// The block's shape and the operands' element steps, the arguments every block kernel takes first.
#define COCKTAIL_BLOCK_ARGS                                                                           \
    const long long k, const long long x_row_step, const long long x_col_step,                      \
        const long long y_row_step, const long long y_col_step

template <typename T, int COLS>
__device__ __forceinline__ void strip_clear(T (&sum)[COLS]) {
#pragma unroll
    for (int c = 0; c < COLS; ++c) sum[c] = T(0);
}

// sum += v * X[x_row, strip columns] for the strip's columns below k (x_row: the row's offset in x).
template <typename T, int LANES, int COLS>
__device__ __forceinline__ void strip_add(T (&sum)[COLS], const T v, const T* __restrict__ x, const long long x_row,
                                          const long long j, const long long k, const long long x_col_step) {
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
        const long long col = j + (long long)c * LANES;
        if (col < k) sum[c] += v * load_x(x, x_row + col * x_col_step);
    }
}

// Y[row, strip columns] = alpha * sum + beta * Y[...] (y_row: the row's offset in y).
template <typename T, int LANES, int COLS>
__device__ __forceinline__ void strip_store(T* __restrict__ y, const long long y_row, const T (&sum)[COLS],
                                            const long long j, const long long k, const long long y_col_step,
                                            const T alpha, const T beta) {
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
        const long long col = j + (long long)c * LANES;
        if (col < k) store_y(y, y_row + col * y_col_step, sum[c], alpha, beta);
    }
}

// out[offset + strip columns] = sum (a partial result kept for a later pass; columns contiguous).
template <typename T, int LANES, int COLS>
__device__ __forceinline__ void strip_keep(T* __restrict__ out, const long long offset, const T (&sum)[COLS],
                                           const long long j, const long long k) {
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
        const long long col = j + (long long)c * LANES;
        if (col < k) out[offset + col] = sum[c];
    }
}

// The first column of this lane's strip in the tile starting at column t0.
template <int LANES, int COLS, bool VEC>
__device__ __forceinline__ long long strip_first(const long long t0, const int lane) {
    return VEC ? t0 + (long long)lane * COLS : t0 + lane;
}

// 16 bytes of values: the word type of each value type, and its values in and out of v[].
template <typename T>
struct Word16;
template <>
struct Word16<float> {
    using type = float4;
    static __device__ __forceinline__ void unpack(const float4 w, float* v) {
        v[0] = w.x;
        v[1] = w.y;
        v[2] = w.z;
        v[3] = w.w;
    }
    static __device__ __forceinline__ float4 pack(const float* v) { return make_float4(v[0], v[1], v[2], v[3]); }
};
template <>
struct Word16<double> {
    using type = double2;
    static __device__ __forceinline__ void unpack(const double2 w, double* v) {
        v[0] = w.x;
        v[1] = w.y;
    }
    static __device__ __forceinline__ double2 pack(const double* v) { return make_double2(v[0], v[1]); }
};

// 16 bytes of x (through the read-only path where COCKTAIL_LDG), of y (plain: y is written), and a store.
template <typename T>
__device__ __forceinline__ void load16(const T* __restrict__ p, T* v) {
    using W = typename Word16<T>::type;
#if COCKTAIL_LDG
    Word16<T>::unpack(__ldg(reinterpret_cast<const W*>(p)), v);
#else
    Word16<T>::unpack(*reinterpret_cast<const W*>(p), v);
#endif
}

template <typename T>
__device__ __forceinline__ void read16(const T* p, T* v) {
    Word16<T>::unpack(*reinterpret_cast<const typename Word16<T>::type*>(p), v);
}

template <typename T>
__device__ __forceinline__ void store16(T* p, const T* v) {
    *reinterpret_cast<typename Word16<T>::type*>(p) = Word16<T>::pack(v);
}

// sum += v * X[x_row, j .. j + COLS) for a vector strip starting below k (x_row: the row's offset in x).
template <typename T, int COLS>
__device__ __forceinline__ void strip_add_vec(T (&sum)[COLS], const T v, const T* __restrict__ x,
                                              const long long x_row, const long long j) {
    constexpr int N = 16 / sizeof(T);
    static_assert(COLS % N == 0, "a vector strip fills whole 16-byte words");
#pragma unroll
    for (int i = 0; i < COLS; i += N) {
        T w[N];
        load16(x + x_row + j + i, w);
#pragma unroll
        for (int c = 0; c < N; ++c) sum[i + c] += v * w[c];
    }
}

// Y[row, j .. j + COLS) = alpha * sum + beta * Y[...], never reading Y when beta == 0.
template <typename T, int COLS>
__device__ __forceinline__ void strip_store_vec(T* __restrict__ y, const long long y_row, const T (&sum)[COLS],
                                                const long long j, const T alpha, const T beta) {
    constexpr int N = 16 / sizeof(T);
#pragma unroll
    for (int i = 0; i < COLS; i += N) {
        T w[N];
        if (beta == T(0)) {
#pragma unroll
            for (int c = 0; c < N; ++c) w[c] = alpha * sum[i + c];
        } else {
            read16(y + y_row + j + i, w);
#pragma unroll
            for (int c = 0; c < N; ++c) w[c] = alpha * sum[i + c] + beta * w[c];
        }
        store16(y + y_row + j + i, w);
    }
}

// w = X[x_row, strip columns], zero for the columns at or past k (a strip held for several rows' use).
template <typename T, int LANES, int COLS>
__device__ __forceinline__ void strip_load(T (&w)[COLS], const T* __restrict__ x, const long long x_row,
                                           const long long j, const long long k, const long long x_col_step) {
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
        const long long col = j + (long long)c * LANES;
        w[c] = col < k ? load_x(x, x_row + col * x_col_step) : T(0);
    }
}

// w = X[x_row, j .. j + COLS) for a vector strip starting below k.
template <typename T, int COLS>
__device__ __forceinline__ void strip_load_vec(T (&w)[COLS], const T* __restrict__ x, const long long x_row,
                                               const long long j) {
    constexpr int N = 16 / sizeof(T);
    static_assert(COLS % N == 0, "a vector strip fills whole 16-byte words");
#pragma unroll
    for (int i = 0; i < COLS; i += N) load16(x + x_row + j + i, w + i);
}

// sum += v * w, column by column.
template <typename T, int COLS>
__device__ __forceinline__ void strip_fma(T (&sum)[COLS], const T v, const T (&w)[COLS]) {
#pragma unroll
    for (int c = 0; c < COLS; ++c) sum[c] += v * w[c];
}

// Groups of ROWS consecutive rows over diagonals (dia_spmm, dia_vi_spmm, bdia_spmm): for a diagonal whose
// column for the group's first row is c0, row row0 + i reads X row c0 + i, so the group holds the strips of
// the ROWS X rows c0 .. c0 + ROWS - 1 in registers (win[i]); on the next diagonal, one column further
// (c0 + 1: a stencil's neighbours, a band's next diagonal), ROWS - 1 of them are reused and one is loaded.

// w = X[c, strip columns] for a column c inside [0, n), else zeros.
template <typename T, int LANES, int COLS, bool VEC>
__device__ __forceinline__ void window_row(T (&w)[COLS], const T* __restrict__ x, const long long c,
                                           const long long n, const long long j, const long long k,
                                           const long long x_row_step, const long long x_col_step) {
    if (c < 0 || c >= n) {
        strip_clear(w);
    } else if constexpr (VEC) {
        strip_load_vec<T, COLS>(w, x, c * x_row_step, j);
    } else {
        strip_load<T, LANES, COLS>(w, x, c * x_row_step, j, k, x_col_step);
    }
}

// win = the strips of X rows c0 .. c0 + ROWS - 1; held: the X row win[0] held before (updated to c0).
template <typename T, int LANES, int COLS, bool VEC, int ROWS>
__device__ __forceinline__ void window_step(T (&win)[ROWS][COLS], long long& held, const long long c0,
                                            const T* __restrict__ x, const long long n, const long long j,
                                            const long long k, const long long x_row_step,
                                            const long long x_col_step) {
    if (ROWS > 1 && c0 == held + 1) {
#pragma unroll
        for (int i = 0; i + 1 < ROWS; ++i) {
#pragma unroll
            for (int c = 0; c < COLS; ++c) win[i][c] = win[i + 1][c];
        }
        window_row<T, LANES, COLS, VEC>(win[ROWS - 1], x, c0 + ROWS - 1, n, j, k, x_row_step, x_col_step);
    } else {
#pragma unroll
        for (int i = 0; i < ROWS; ++i) window_row<T, LANES, COLS, VEC>(win[i], x, c0 + i, n, j, k, x_row_step, x_col_step);
    }
    held = c0;
}

// No X row held yet (below any column a diagonal can start at).
#define COCKTAIL_NO_ROW_HELD (-(1LL << 62))

// Y[row0 + i, strip columns] = alpha * sum[i] + beta * Y[...] for the group's rows below m.
template <typename T, int LANES, int COLS, bool VEC, int ROWS>
__device__ __forceinline__ void rows_store(T* __restrict__ y, const long long row0, const long long m,
                                           const T (&sum)[ROWS][COLS], const long long j, const long long k,
                                           const long long y_row_step, const long long y_col_step, const T alpha,
                                           const T beta) {
#pragma unroll
    for (int i = 0; i < ROWS; ++i) {
        const long long row = row0 + i;
        if (row >= m) break;
        if constexpr (VEC) {
            strip_store_vec<T, COLS>(y, row * y_row_step, sum[i], j, alpha, beta);
        } else {
            strip_store<T, LANES, COLS>(y, row * y_row_step, sum[i], j, k, y_col_step, alpha, beta);
        }
    }
}
