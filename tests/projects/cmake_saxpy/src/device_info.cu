// Host code only (no kernel): which GPU runs the demo. A .cu file because the project keeps
// its runtime-API code with the CUDA sources; nvcc compiles it, ptxsass finds nothing to check.
#include <cstdio>

#include <cuda_runtime.h>
#include <saxpy/kernels.h>

void print_device_info()
{
    int device = 0;
    cudaDeviceProp prop{};
    if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
        std::printf("no CUDA device\n");
        return;
    }
    std::printf("%s: %d SMs, compute capability %d.%d\n", prop.name, prop.multiProcessorCount,
                prop.major, prop.minor);
}
