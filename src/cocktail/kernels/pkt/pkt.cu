// pkt: the packet phase of the PKT product (Bell & Garland §4.6, Fig. 26); the COO
// remainder is added afterwards by a COO kernel (see pkt.py).
//
// One block of threads_per_packet lanes per packet (block-stride loop over packets, so all
// control flow around the barriers is block-uniform). The packet's vertices are staged
// in dynamic shared memory: x_local[v] = x[perm[p0 + v]] and y_local[v] = 0. Lane t then
// walks its column of slots; every row of the packet belongs to exactly one lane, so the
// updates of y_local never race. Finally the block writes y_local back to y.
#include "common.cuh"

#define COCKTAIL_PKT_EMPTY 0xFFFFFFFFu
#define COCKTAIL_PKT_LOCAL_BITS 16
#define COCKTAIL_PKT_LOCAL_MASK 0xFFFFu

template <typename T, typename I>
__global__ void pkt(const I m,
                    const I n,
                    const long long npackets,
                    const int max_vertices,
                    const I* __restrict__ perm,
                    const I* __restrict__ packet_ptr,
                    const long long* __restrict__ packet_offset,
                    const unsigned int* __restrict__ index,
                    const T* __restrict__ data,
                    COCKTAIL_PRODUCT_ARGS(T)) {
    extern __shared__ __align__(16) unsigned char pkt_shared[];
    T* x_local = reinterpret_cast<T*>(pkt_shared);
    T* y_local = x_local + max_vertices;
    const int lane = threadIdx.x;
    const int lanes = blockDim.x;
    for (long long p = blockIdx.x; p < npackets; p += gridDim.x) {
        const long long first = packet_ptr[p];
        const int nv = (int)((long long)packet_ptr[p + 1] - first);
        for (int v = lane; v < nv; v += lanes) {
            const long long g = perm[first + v];
            x_local[v] = g < n ? load_x(x, g) : T(0);
            y_local[v] = T(0);
        }
        __syncthreads();
        const long long s0 = packet_offset[p];
        const long long width = (packet_offset[p + 1] - s0) / lanes;
        for (long long i = 0; i < width; ++i) {
            const long long slot = s0 + i * lanes + lane;
            const unsigned int packed = index[slot];
            if (packed != COCKTAIL_PKT_EMPTY) {
                y_local[packed >> COCKTAIL_PKT_LOCAL_BITS] += data[slot] * x_local[packed & COCKTAIL_PKT_LOCAL_MASK];
            }
        }
        __syncthreads();
        for (int v = lane; v < nv; v += lanes) {
            const long long g = perm[first + v];
            if (g < m) store_y(y, g, y_local[v], alpha, beta);
        }
        __syncthreads();  // the next packet restages x_local and y_local
    }
}
