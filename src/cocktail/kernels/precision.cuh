// The value precisions of Cocktail's kernels. A kernel's first template parameter P names one:
//   float, double   x, y, the stored values and the arithmetic all in that type;
//   f16, bf16       x, y and the values in half precision (IEEE binary16, bfloat16), summed in float;
//   mixed<X, V>     x and y in X, the values stored in the narrower V (f16 or bf16 under float, float
//                   under double), summed in X's arithmetic type;
//   cfloat, cdouble complex values and operands (complex_of<float>, complex_of<double>: NumPy's complex64 and
//                   complex128 layout, real part first), summed in complex arithmetic.
// Inside a kernel, compute_t<P> is the arithmetic type (kernels name it T), operand_t<P> the type of
// x and y, stored_t<P> the type of the value arrays. widen() turns any of them into the arithmetic
// type exactly; narrow<X>() rounds a sum to nearest even on its way to y.
//
// The half types are plain structs over their bits (no cuda_fp16.h, so NVRTC needs no CUDA headers);
// their conversions are single cvt instructions or bit shifts.
#pragma once

struct f16 {
    unsigned short bits;
};
struct bf16 {
    unsigned short bits;
};
template <typename X, typename V>
struct mixed {};

// A complex number of R parts, laid out as NumPy's (re, im) and aligned like float2 / double2. Trivially
// default-constructible, so it may live in shared memory; T(0) and T(r) are the real numbers.
template <typename R>
struct alignas(2 * sizeof(R)) complex_of {
    R re, im;
    complex_of() = default;
    __device__ __forceinline__ constexpr complex_of(R r) : re(r), im(R(0)) {}
    __device__ __forceinline__ constexpr complex_of(R r, R i) : re(r), im(i) {}
    __device__ __forceinline__ complex_of& operator+=(const complex_of& o) {
        re += o.re;
        im += o.im;
        return *this;
    }
};
using cfloat = complex_of<float>;
using cdouble = complex_of<double>;

template <typename R>
__device__ __forceinline__ complex_of<R> operator+(complex_of<R> a, complex_of<R> b) {
    return complex_of<R>(a.re + b.re, a.im + b.im);
}
template <typename R>
__device__ __forceinline__ complex_of<R> operator*(complex_of<R> a, complex_of<R> b) {
    return complex_of<R>(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
template <typename R>
__device__ __forceinline__ bool operator==(complex_of<R> a, complex_of<R> b) {
    return a.re == b.re && a.im == b.im;
}
// The read-only, L2 and streaming loads, the warp shuffles and the atomic add of a complex: part by part, or as
// the float2 / double2 of the same bytes.
__device__ __forceinline__ cfloat complex_from(float2 v) { return cfloat(v.x, v.y); }
__device__ __forceinline__ cdouble complex_from(double2 v) { return cdouble(v.x, v.y); }
template <typename R> struct complex_pair;
template <> struct complex_pair<float> { using type = float2; };
template <> struct complex_pair<double> { using type = double2; };
template <typename R>
__device__ __forceinline__ const typename complex_pair<R>::type* pair_of(const complex_of<R>* p) {
    return reinterpret_cast<const typename complex_pair<R>::type*>(p);
}
template <typename R>
__device__ __forceinline__ complex_of<R> __ldg(const complex_of<R>* p) { return complex_from(__ldg(pair_of(p))); }
template <typename R>
__device__ __forceinline__ complex_of<R> __ldcg(const complex_of<R>* p) { return complex_from(__ldcg(pair_of(p))); }
template <typename R>
__device__ __forceinline__ complex_of<R> __ldcs(const complex_of<R>* p) { return complex_from(__ldcs(pair_of(p))); }
template <typename R>
__device__ __forceinline__ complex_of<R> __shfl_sync(unsigned mask, complex_of<R> v, int lane, int width = 32) {
    return complex_of<R>(__shfl_sync(mask, v.re, lane, width), __shfl_sync(mask, v.im, lane, width));
}
template <typename R>
__device__ __forceinline__ complex_of<R> __shfl_up_sync(unsigned mask, complex_of<R> v, unsigned d, int width = 32) {
    return complex_of<R>(__shfl_up_sync(mask, v.re, d, width), __shfl_up_sync(mask, v.im, d, width));
}
template <typename R>
__device__ __forceinline__ complex_of<R> __shfl_down_sync(unsigned mask, complex_of<R> v, unsigned d,
                                                          int width = 32) {
    return complex_of<R>(__shfl_down_sync(mask, v.re, d, width), __shfl_down_sync(mask, v.im, d, width));
}
template <typename R>
__device__ __forceinline__ complex_of<R> __shfl_xor_sync(unsigned mask, complex_of<R> v, int m, int width = 32) {
    return complex_of<R>(__shfl_xor_sync(mask, v.re, m, width), __shfl_xor_sync(mask, v.im, m, width));
}
template <typename R>
__device__ __forceinline__ void atomicAdd(complex_of<R>* p, complex_of<R> v) {
    R* parts = reinterpret_cast<R*>(p);
    atomicAdd(parts, v.re);
    atomicAdd(parts + 1, v.im);
}

template <typename P>
struct precision {
    using operand = P;
    using stored = P;
    using compute = P;
};
template <>
struct precision<f16> {
    using operand = f16;
    using stored = f16;
    using compute = float;
};
template <>
struct precision<bf16> {
    using operand = bf16;
    using stored = bf16;
    using compute = float;
};
template <typename X, typename V>
struct precision<mixed<X, V>> {
    using operand = X;
    using stored = V;
    using compute = typename precision<X>::compute;
};

template <typename P> using operand_t = typename precision<P>::operand;
template <typename P> using stored_t = typename precision<P>::stored;
template <typename P> using compute_t = typename precision<P>::compute;

__device__ __forceinline__ float widen(float v) { return v; }
__device__ __forceinline__ double widen(double v) { return v; }
template <typename R>
__device__ __forceinline__ complex_of<R> widen(complex_of<R> v) { return v; }
// The bits of a float and back (the CUDA intrinsics; a copy of the bytes where the source is compiled for the host,
// as the tests' host emulation of the kernels does).
__device__ __forceinline__ float float_of_bits(unsigned int u) {
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float f;
    __builtin_memcpy(&f, &u, sizeof f);
    return f;
#endif
}
__device__ __forceinline__ unsigned int bits_of_float(float f) {
#ifdef __CUDA_ARCH__
    return __float_as_uint(f);
#else
    unsigned int u;
    __builtin_memcpy(&u, &f, sizeof u);
    return u;
#endif
}

__device__ __forceinline__ float widen(f16 v) {
#ifdef __CUDA_ARCH__
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.bits));
    return f;
#else  // the host: the same value from the bits (subnormals scaled exactly, Inf and NaN kept)
    const unsigned int sign = (v.bits & 0x8000u) << 16, e = (v.bits >> 10) & 0x1fu, m = v.bits & 0x3ffu;
    if (e == 0) {
        const float f = (float)m * 5.9604644775390625e-8f;  // m * 2^-24
        return sign ? -f : f;
    }
    return float_of_bits(sign | (e == 31 ? 0x7f800000u | (m << 13) : ((e + 112u) << 23) | (m << 13)));
#endif
}
__device__ __forceinline__ float widen(bf16 v) { return float_of_bits((unsigned int)v.bits << 16); }

template <typename X> struct narrowing;
template <> struct narrowing<float> {
    __device__ static __forceinline__ float from(float v) { return v; }
};
template <> struct narrowing<double> {
    __device__ static __forceinline__ double from(double v) { return v; }
};
template <typename R> struct narrowing<complex_of<R>> {
    __device__ static __forceinline__ complex_of<R> from(complex_of<R> v) { return v; }
};
template <> struct narrowing<f16> {
    __device__ static __forceinline__ f16 from(float v) {
        f16 h;
#ifdef __CUDA_ARCH__
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(v));
#else  // the host: round to nearest even on the bits
        const unsigned int x = bits_of_float(v), sign = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
        if (a > 0x7f800000u) {
            h.bits = (unsigned short)(sign | 0x7e00u);  // NaN
        } else if (a >= 0x477ff000u) {
            h.bits = (unsigned short)(sign | 0x7c00u);  // 65520 and past it: Inf
        } else if (a < 0x38800000u) {                   // below 2^-14: a subnormal half, m * 2^-24
            const float scaled = float_of_bits(a) * 16777216.0f;
            unsigned int m = (unsigned int)scaled;
            const float rest = scaled - (float)m;
            m += (rest > 0.5f || (rest == 0.5f && (m & 1u))) ? 1u : 0u;
            h.bits = (unsigned short)(sign | m);
        } else {
            const unsigned int r = a - 0x38000000u;  // the exponent rebiased from 127 to 15
            h.bits = (unsigned short)(sign | ((r + 0x0fffu + ((r >> 13) & 1u)) >> 13));
        }
#endif
        return h;
    }
};
template <> struct narrowing<bf16> {
    // Round to nearest even on the bits (cvt.rn.bf16.f32 needs sm_80); a NaN stays a (quiet) NaN.
    __device__ static __forceinline__ bf16 from(float v) {
        const unsigned int u = bits_of_float(v);
        bf16 b;
        if ((u & 0x7fffffffu) > 0x7f800000u) {
            b.bits = (unsigned short)((u >> 16) | 0x40u);
        } else {
            b.bits = (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
        }
        return b;
    }
};

// v rounded to the operand type X (nearest even).
template <typename X, typename C>
__device__ __forceinline__ X narrow(C v) {
    return narrowing<X>::from(v);
}

// *p through the read-only path when LDG (a half type through its 16 bits).
template <bool LDG, typename T>
__device__ __forceinline__ T load_cached(const T* __restrict__ p) {
    if (LDG) return __ldg(p);
    return *p;
}
template <bool LDG>
__device__ __forceinline__ f16 load_cached(const f16* __restrict__ p) {
    f16 h;
    h.bits = load_cached<LDG>(reinterpret_cast<const unsigned short*>(p));
    return h;
}
template <bool LDG>
__device__ __forceinline__ bf16 load_cached(const bf16* __restrict__ p) {
    bf16 b;
    b.bits = load_cached<LDG>(reinterpret_cast<const unsigned short*>(p));
    return b;
}
