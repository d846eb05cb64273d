// Second includer of Inputs/kernels.cuh; the checks live in header-kernels.cu.
// RUN: true
#include "kernels.cuh"
void second(const float *x, float *y, int n) { axpy<<<n / 128 + 1, 128>>>(0.5f, x, y, n); }
