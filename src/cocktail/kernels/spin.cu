// A busy wait of a given number of clock cycles. The benchmark harness queues it ahead of
// products issued from Python, so the GPU runs them back to back instead of waiting for the host.
extern "C" __global__ void spin(long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
}
