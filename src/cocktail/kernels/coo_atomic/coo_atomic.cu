// coo_atomic: balanced warp chunks with atomic row updates (Flegar & Anzt 2017, §3).
//
// The nnz entries form units = ceil(nnz/32) groups of 32; warp w takes a contiguous run of
// them, the first units % warps warps one group more than the others.  Each lane keeps a
// partial sum of the warp's current row; when a step of 32 entries reaches another row
// (warp vote), the warp runs a segmented scan and the lowest lane of each finished row
// segment adds it to y with one atomicAdd.  y has been scaled by beta beforehand.
#include "coo.cuh"

template <typename P, typename I>
__global__ void coo_atomic(const long long nnz,
                           const long long warps,
                           COCKTAIL_COO_ARGS(P, I),
                           COCKTAIL_SCALED_PRODUCT_ARGS(P)) {
    using T = compute_t<P>;  // the operands are float or double here (atomicAdd into y)
    const int lane = warp_lane();
    const long long warp = grid_warp();
    if (warp >= warps) {
        return;  // whole warp: the launch rounds the warp count up to whole blocks
    }
    const long long units = (nnz + 31) / 32;
    const long long share = units / warps;
    const long long extra = units % warps;
    const long long first = warp * share + (warp < extra ? warp : extra);
    const long long begin = 32 * first;
    const long long stop = begin + 32 * (share + (warp < extra ? 1 : 0));
    const long long end = stop < nnz ? stop : nnz;

    I current = row[begin];  // warp-uniform running row
    T partial = T(0);        // this lane's share of the running row's sum
    for (long long base = begin; base < end; base += 32) {  // warp-uniform trip count
        I r;
        T v = coo_product<P>(row, col, data, x, base + lane, end, r);
        if (!__any_sync(COCKTAIL_FULL_MASK, r != current)) {
            partial += v;  // the whole step is in the running row
            continue;
        }
        const T running = group_sum(partial, 32);  // lane 0: the running row so far
        const I r_next = __shfl_down_sync(COCKTAIL_FULL_MASK, r, 1);
        const unsigned tails = __ballot_sync(COCKTAIL_FULL_MASK, lane == 31 || r != r_next);
        const unsigned heads = (tails << 1) | 1u;
        const int seg_end = lane + __ffs(tails >> lane) - 1;  // last lane of my segment
        const int last_head = 31 - __clz(heads);                // first lane of the last segment
        if (lane == 0) {
            if (r == current) {
                v += running;
            } else {
                atomicAdd(y + current, alpha * running);  // the running row ended before this step
            }
        }
        v = segmented_scan_down(v, lane, seg_end);  // the first lane of each segment gets its total
        // Every segment but the last is a finished row; the last one becomes the running row.
        if (((heads >> lane) & 1u) && lane != last_head) {
            atomicAdd(y + r, alpha * v);
        }
        current = __shfl_sync(COCKTAIL_FULL_MASK, r, 31);
        partial = (lane == last_head) ? v : T(0);
    }
    const T running = group_sum(partial, 32);
    if (lane == 0) {
        atomicAdd(y + current, alpha * running);
    }
}
