// coo_segmented: warp segmented reduction over row-sorted COO (Bell & Garland §4.4, Figs. 24-25).
//
// Warp w owns entries [w*interval, min((w+1)*interval, nnz)) and walks them 32 at a time.
// y has been scaled by beta beforehand; every row segment is added (times alpha) by exactly
// one thread of this kernel, except the sum of a row that continues past the end of a warp's
// interval: that partial goes to carry_row/carry_val[w], and coo_segmented_fixup adds the
// carries afterwards in warp order.  No atomics: the result is bit-identical from run to run.
#include "coo.cuh"

template <typename P, typename I>
__global__ void coo_segmented(const long long nnz,
                              const long long interval,
                              COCKTAIL_COO_ARGS(P, I),
                              COCKTAIL_SCALED_PRODUCT_ARGS(P),
                              I* __restrict__ carry_row,
                              compute_t<P>* __restrict__ carry_val) {
    using T = compute_t<P>;
    const int lane = warp_lane();
    const long long warp = grid_warp();
    const long long begin = warp * interval;
    if (begin >= nnz) {
        return;  // whole warp: the launch rounds the warp count up to whole blocks
    }
    const long long end = (begin + interval < nnz) ? begin + interval : nnz;

    // The carry is the running sum of the row segment that reached lane 31 of the previous
    // step (warp-uniform, in every lane's registers).  Starting it as (row[begin], 0) means
    // the first step always continues it.
    I carry_r = row[begin];
    T carry_v = T(0);
    for (long long base = begin; base < end; base += 32) {  // warp-uniform trip count
        I r;
        T v = coo_product<P>(row, col, data, x, base + lane, end, r);

        const I r_prev = __shfl_up_sync(COCKTAIL_FULL_MASK, r, 1);
        const unsigned heads = __ballot_sync(COCKTAIL_FULL_MASK, lane == 0 || r != r_prev);
        const int start = 31 - __clz(heads & (COCKTAIL_FULL_MASK >> (31 - lane)));  // my segment's first lane

        if (lane == 0) {
            if (r == carry_r) {
                v += carry_v;
            } else {
                add_y(y, carry_r, alpha * carry_v);  // the carried row ended with the previous step
            }
        }
        v = segmented_scan_up(v, lane, start);  // Fig. 24 with shuffles
        // A segment ending before lane 31 is a finished row: its last lane holds the total.
        if (lane < 31 && ((heads >> (lane + 1)) & 1u)) {
            add_y(y, r, alpha * v);
        }
        carry_r = __shfl_sync(COCKTAIL_FULL_MASK, r, 31);
        carry_v = __shfl_sync(COCKTAIL_FULL_MASK, v, 31);
    }

    if (lane == 0) {
        if (end < nnz && row[end] == carry_r) {
            carry_row[warp] = carry_r;  // the row goes on in the next interval
            carry_val[warp] = carry_v;
        } else {
            add_y(y, carry_r, alpha * carry_v);
            carry_row[warp] = I(-1);
        }
    }
}

// Adds the carries to y.  A row continuing across several intervals is carried by a run of
// consecutive warps; the warp at the start of each run sums the run's carries in a fixed
// order (lane-strided partial sums, then a shuffle tree) and adds alpha * sum to y.
template <typename P, typename I>
__global__ void coo_segmented_fixup(const long long warps,
                                    const I* __restrict__ carry_row,
                                    const compute_t<P>* __restrict__ carry_val,
                                    operand_t<P>* __restrict__ y,
                                    const compute_t<P> alpha) {
    using T = compute_t<P>;
    const int lane = warp_lane();
    const long long first = grid_warp();
    if (first >= warps) {
        return;
    }
    const I r = carry_row[first];
    if (r < 0 || (first > 0 && carry_row[first - 1] == r)) {
        return;  // warp-uniform: no carry here, or not the start of a run
    }
    T sum = T(0);
    for (long long base = first;; base += 32) {  // warp-uniform exit through the ballot
        const long long k = base + lane;
        const bool same = k < warps && carry_row[k] == r;
        if (same) {
            sum += carry_val[k];
        }
        // A run is contiguous and a row never comes back, so a short step is the last one.
        if (__ballot_sync(COCKTAIL_FULL_MASK, same) != COCKTAIL_FULL_MASK) {
            break;
        }
    }
    sum = group_sum(sum, 32);
    if (lane == 0) {
        add_y(y, r, alpha * sum);
    }
}
