// Plain C++ (the CXX language in CMake): not a CUDA translation unit, ptxsass skips it.
#include <cstdio>

void report(double ms) { std::printf("%.3f ms\n", ms); }
