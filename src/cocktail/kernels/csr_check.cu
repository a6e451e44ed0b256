// csr_check: whether row pointers and column indices make a valid CSR, and a canonical one (columns rising within
// every row), in one pass and without a reduction: every check that fails sets its flag, which a valid matrix never
// does, so the flags see no contention.
//
// flags[0]: a pointer is wrong (indptr[0] != 0, indptr[rows] != nnz, or a step down); flags[1]: a column index is
// outside [0, cols); flags[2]: a pair of consecutive entries does not rise and the second does not start a row
// (found by a search of the pointers, made only for the pairs that fall: one a row in a canonical matrix).
// With a wrong pointer the third flag means nothing: the caller checks the first two first.

// The largest row r in [0, rows] with indptr[r] <= entry.
template <typename I>
__device__ __forceinline__ long long csr_check_row_of(const I* indptr, long long entry, long long rows) {
    long long lo = 0, hi = rows;
    while (lo < hi) {
        const long long mid = (lo + hi + 1) >> 1;
        if ((long long)indptr[mid] <= entry) lo = mid; else hi = mid - 1;
    }
    return lo;
}

template <typename I>
__global__ void csr_check(const I* __restrict__ indptr, const I* __restrict__ indices, const long long rows,
                          const long long nnz, const long long cols, unsigned* __restrict__ flags) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long span = rows + 1 > nnz ? rows + 1 : nnz;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < span; i += stride) {
        if (i <= rows) {
            const long long p = (long long)indptr[i];
            const bool wrong = (i == 0 && p != 0) || (i == rows && p != nnz) || (i > 0 && p < (long long)indptr[i - 1]);
            if (wrong) atomicOr(&flags[0], 1u);
        }
        if (i < nnz) {
            const long long c = (long long)indices[i];
            if (c < 0 || c >= cols) atomicOr(&flags[1], 1u);
            if (i > 0 && c <= (long long)indices[i - 1]) {
                const long long r = csr_check_row_of(indptr, i, rows);
                if ((long long)indptr[r] != i) atomicOr(&flags[2], 1u);
            }
        }
    }
}
