// build_words.cuh: what the format builds' helper kernels (block_build.cu, diagonal_build.cu) share.  A value is moved
// as its bits, a word of its size (unsigned char for DIA-VI's codes, unsigned short, unsigned int, unsigned long long,
// word16 for a complex128), so one instantiation serves every value type of that size; a zero slot is the word of
// all-zero bits (+0, as the host's zeros).  An explicit zero is a stored value that compares equal to 0: its bits are
// zero outside the sign bits, which `zero_mask` (from the host, per value type) keeps out.

#pragma once

// The bits of one complex128 (two doubles); 8-byte aligned as CuPy's complex128 arrays.
struct word16 {
    unsigned long long lo, hi;
};

// The word holding `bits` (a word16: in its low half).
template <typename W>
__device__ __forceinline__ W build_word(const unsigned long long bits) {
    return (W)bits;
}
template <>
__device__ __forceinline__ word16 build_word<word16>(const unsigned long long bits) {
    word16 w;
    w.lo = bits;
    w.hi = 0ull;
    return w;
}

// Whether the value of bits `v` compares equal to zero: its bits under `zero_mask` (all but the sign bits of each
// part; for a word16, of each half) are zero.
template <typename W>
__device__ __forceinline__ bool build_is_zero(const W v, const unsigned long long zero_mask) {
    return ((unsigned long long)v & zero_mask) == 0ull;
}
template <>
__device__ __forceinline__ bool build_is_zero<word16>(const word16 v, const unsigned long long zero_mask) {
    return ((v.lo | v.hi) & zero_mask) == 0ull;
}

// Counters and maxima the builds gather across threads (non-negative values).
__device__ __forceinline__ void build_add(int* p, const long long v) { atomicAdd(p, (int)v); }
__device__ __forceinline__ void build_add(long long* p, const long long v) {
    atomicAdd((unsigned long long*)p, (unsigned long long)v);
}
__device__ __forceinline__ void build_max(long long* p, const long long v) {
    atomicMax((unsigned long long*)p, (unsigned long long)v);
}
