// Strides along threadIdx.x of 1-D, 2-D and 3-D kernels with int and size_t indices.
// RUN: cudal1-opt %s --analyze=text -- -x cuda | FileCheck %s

#include <cstddef>

// CHECK-LABEL: kernel saxpy
// CHECK: guarded: yes
// CHECK: write y[i]  stride_x=1  line
// CHECK: read  x[i]  stride_x=1  line
// CHECK: read  y[i]  stride_x=1  line
__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

// A naive transpose: the read is coalesced, the write strides by rows.
// CHECK-LABEL: kernel transpose
// CHECK: guarded: yes
// CHECK: write out[x * rows + y]  stride_x=rows  line
// CHECK: read  in[y * cols + x]  stride_x=1  line
__global__ void transpose(const float *in, float *out, int rows, int cols) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < cols && y < rows)
    out[x * rows + y] = in[y * cols + x];
}

// size_t indices and a 3-D thread space; the second access walks z fastest.
// CHECK-LABEL: kernel copy3d
// CHECK: guarded: yes
// CHECK: write out[(z * ny + y) * nx + x]  stride_x=1  line
// CHECK: read  in[(x * ny + y) * nz + z]  stride_x=ny * nz  line
__global__ void copy3d(const double *in, double *out, size_t nx, size_t ny, size_t nz) {
  size_t x = blockIdx.x * blockDim.x + threadIdx.x;
  size_t y = blockIdx.y * blockDim.y + threadIdx.y;
  size_t z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= nx || y >= ny || z >= nz)
    return;
  out[(z * ny + y) * nx + x] = in[(x * ny + y) * nz + z];
}

// Constant strides, a uniform access and a gather whose stride is unknown.
// CHECK-LABEL: kernel mixed
// CHECK: guarded: no
// CHECK: write b[idx[i]]  stride_x=?  unguarded
// CHECK: read  idx[i]  stride_x=1  unguarded
// CHECK: read  a[4 * i + 1]  stride_x=4  unguarded
// CHECK: read  a[0]  stride_x=0  unguarded
// CHECK: read  a[i << 1]  stride_x=2  unguarded
__global__ void mixed(const float *a, float *b, const int *idx) {
  unsigned i = threadIdx.x + blockDim.x * blockIdx.x;
  b[idx[i]] = a[4 * i + 1] + a[0] + a[i << 1];
}
