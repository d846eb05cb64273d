// The program's kernels, kept in a .cu file that main.cu includes (a common
// layout); it is never compiled on its own.
#pragma once

__global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

__global__ void scale(float *y, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] *= s;
}

// Host code in the included file launches its own kernel.
void scaleAll(float *y, float s, int n) { scale<<<(n + 255) / 256, 256>>>(y, s, n); }
