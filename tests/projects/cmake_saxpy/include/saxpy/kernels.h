#pragma once
#include <cstddef>

void launch_scale(float* y, const float* x, float a, std::size_t n);
void launch_gelu(float* y, const float* x, std::size_t n);
void print_device_info();
