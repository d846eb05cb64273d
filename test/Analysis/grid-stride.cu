// Grid-stride loops: the loop counter is an affine dimension, the loop
// condition guards the accesses; a while loop over a mutated index is opaque.
// RUN: cudal1-opt %s --analyze=text | FileCheck %s

// CHECK-LABEL: kernel scale
// CHECK: guarded: yes   grid-stride: yes
// CHECK: loop 0 (for, depth 0) i < n  grid-stride
// CHECK: read  a[i]  stride_x=1  line
// CHECK: write a[i]  stride_x=1  line
__global__ void scale(float *a, float s, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    a[i] *= s;
}

// A nested reduction loop inside a guarded thread: stride of the row-major
// read of A is the row length, of x it is 0 (all threads read the same).
// CHECK-LABEL: kernel matvec
// CHECK: guarded: yes   grid-stride: no
// CHECK: loop 0 (for, depth 0) k < cols
// CHECK: read  A[row * cols + k]  stride_x=cols  line
// CHECK: read  x[k]  stride_x=0  line
// CHECK: write y[row]  stride_x=1  line
__global__ void matvec(const float *A, const float *x, float *y, int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    float acc = 0.0f;
    for (int k = 0; k < cols; ++k)
      acc += A[row * cols + k] * x[k];
    y[row] = acc;
  }
}

// CHECK-LABEL: kernel walk
// CHECK: guarded: no   grid-stride: no
// CHECK: loop 0 (while, depth 0) ?
// CHECK: write a[i]  stride_x=?  unguarded
__global__ void walk(float *a, int n) {
  int i = threadIdx.x;
  while (i < n) {
    a[i] = 0.0f;
    i = i * 2 + 1;
  }
}
