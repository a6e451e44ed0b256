// stream_partition: csr_stream's items (cocktail.kernels.csr_stream.partition) from the row pointers, in two
// passes and one synchronisation instead of a search, a sort and a dozen array operations.
//
// A row starts a run of rows when it is every rows_per_item-th row, a row longer than own_row or the row after
// one, or the first row at or past a multiple of step = capacity - own_row nonzeros below nnz (searchsorted's
// left side over the pointers).  A start row longer than own_row is cut into pieces of capacity nonzeros.
// stream_pieces writes each row's pieces (0 where it starts no run) and 1 for the sentinel after the last
// row; the caller's inclusive scan of them ends each row's items, and stream_items writes every piece's
// (row, first nonzero), then the sentinel (rows, nnz).

template <typename I>
__device__ __forceinline__ long long stream_row_pieces(const I* __restrict__ indptr, const long long row,
                                                       const long long capacity, const long long own_row,
                                                       const long long rows_per_item, const long long nnz) {
    const long long first = indptr[row], length = (long long)indptr[row + 1] - first;
    bool starts = row % rows_per_item == 0 || length > own_row;
    if (!starts) {  // row > 0 here: row 0 is a multiple of rows_per_item
        const long long previous = indptr[row - 1];
        const long long step = capacity - own_row;
        const long long next_multiple = (previous / step + 1) * step;  // the first multiple past the row before
        starts = first - previous > own_row || (next_multiple <= first && next_multiple < nnz);
    }
    if (!starts) return 0;
    return length > own_row ? (length + capacity - 1) / capacity : 1;
}

template <typename I>
__global__ void stream_pieces(const I* __restrict__ indptr, const long long rows, const long long capacity,
                              const long long own_row, const long long rows_per_item,
                              long long* __restrict__ pieces) {
    const long long nnz = indptr[rows];
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row <= rows; row += stride) {
        pieces[row] = row == rows ? 1 : stream_row_pieces(indptr, row, capacity, own_row, rows_per_item, nnz);
    }
}

template <typename I>
__global__ void stream_items(const I* __restrict__ indptr, const long long rows, const long long capacity,
                             const long long* __restrict__ pieces, const long long* __restrict__ ends,
                             I* __restrict__ item_row, I* __restrict__ item_nz) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row <= rows; row += stride) {
        const long long count = pieces[row];
        const long long first = ends[row] - count;
        for (long long p = 0; p < count; ++p) {
            item_row[first + p] = (I)row;
            item_nz[first + p] = (I)((long long)indptr[row] + p * capacity);
        }
    }
}
