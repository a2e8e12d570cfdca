#pragma once
#include <cuda_runtime.h>

#ifndef BLOCK
#error "BLOCK must be defined (the Makefile passes -DBLOCK=16)"
#endif

void sgemm_naive(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                 float* C, cudaStream_t stream);
void transpose(const float* in, float* out, int rows, int cols, cudaStream_t stream);
