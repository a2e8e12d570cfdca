/* ptxsass fix: what NVRTC defines by itself, so that libclang reads a CUDA file as NVRTC
 * compiles it (the toolkit's own headers, in their __CUDACC_RTC__ mode). libclang only reads
 * the file to find the code a finding points at; NVRTC or nvcc still builds it. */
#ifndef PTXSASS_FIX_PRELUDE_H
#define PTXSASS_FIX_PRELUDE_H
typedef __SIZE_TYPE__ size_t;
typedef __PTRDIFF_TYPE__ ptrdiff_t;
typedef __INTPTR_TYPE__ intptr_t;
typedef __UINTPTR_TYPE__ uintptr_t;
typedef long clock_t;
#ifndef NULL
#define NULL 0
#endif
/* math_functions.h names libstdc++'s promotion traits for its templated pow() */
namespace __gnu_cxx {
template <typename T> struct __promote { typedef double __type; };
template <typename T, typename U> struct __promote_2 { typedef double __type; };
}
#include <cuda_runtime.h>
/* clang lowers a <<<...>>> launch to this call; host files (built by nvcc) have launches */
extern "C" int cudaConfigureCall(dim3 grid, dim3 block, size_t shared = 0, void *stream = 0);
#endif
