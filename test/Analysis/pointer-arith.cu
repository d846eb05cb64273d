// Pointer arithmetic: a row pointer into a parameter, *(p + i), and an
// offset parameter pointer; accesses are attributed to the parameter with
// the full index.
// RUN: cudal1-opt %s --analyze=text | FileCheck %s

// CHECK-LABEL: kernel row_sum
// CHECK: read  A[r * n + k]  stride_x=n
// CHECK: write out[r]  stride_x=1
__global__ void row_sum(const float *A, float *out, int rows, int n) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows)
    return;
  const float *row = A + r * n;
  float s = 0.0f;
  for (int k = 0; k < n; ++k)
    s += row[k];
  *(out + r) = s;
}

// CHECK-LABEL: kernel halo
// CHECK-NEXT: params: const float * src (r), float * dst (w), int n
// CHECK-NEXT: guarded: yes
// CHECK-NEXT: write dst[i]  stride_x=1
// CHECK-NEXT: read  src[1 + i]  stride_x=1
__global__ void halo(const float *src, float *dst, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float *inner = &src[1];
  if (i < n)
    dst[i] = inner[i];
}
