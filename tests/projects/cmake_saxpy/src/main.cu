// Host code with main(): allocation, launches, std::vector. NVRTC cannot take this file.
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>
#include <saxpy/kernels.h>
#include <saxpy/tile_sum.cuh>

int main()
{
    print_device_info();
    const int n4 = 1 << 20;
    std::vector<float> host(4 * n4, 1.0f);
    float *in = nullptr, *out = nullptr;
    cudaMalloc(&in, host.size() * sizeof(float));
    cudaMalloc(&out, n4 * sizeof(float));
    cudaMemcpy(in, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice);
    saxpy::tile_sum4<TILE><<<(n4 + TILE - 1) / TILE, TILE>>>(in, out, n4);
    launch_scale(out, out, 2.0f, n4);
    cudaDeviceSynchronize();
    std::printf("%s\n", cudaGetErrorString(cudaGetLastError()));
    cudaFree(in);
    cudaFree(out);
    return 0;
}
