// Dependences between consecutive launches (MLIR Presburger): element-wise
// chains are same-thread, a shifted read is cross-thread with a witness,
// disjoint halves are disjoint, a symbolic stride is unknown.
// RUN: cudal1-opt %s --analyze=text | FileCheck %s
// RUN: cudal1-opt %s --analyze | FileCheck %s --check-prefix=JSON

__global__ void add_bias(float *x, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += b[i];
}
__global__ void relu(float *x, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
__global__ void shift_left(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n - 1) y[i] = x[i + 1];
}
__global__ void upper_half(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[n + i] = 1.0f;
}
__global__ void lower_half(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * y[i];
}
__global__ void rows(float *m, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  m[r * cols] = 0.0f;
}

void forward(float *d_x, float *d_b, float *d_y, int n) {
  add_bias<<<(n + 255) / 256, 256>>>(d_x, d_b, n);
  relu<<<(n + 255) / 256, 256>>>(d_x, n);
  shift_left<<<(n + 255) / 256, 256>>>(d_x, d_y, n);
  upper_half<<<(n + 255) / 256, 256>>>(d_y, n);
  lower_half<<<(n + 255) / 256, 256>>>(d_y, n);
  rows<<<1, 32>>>(d_y, n);
  add_bias<<<(n + 255) / 256, 256>>>(d_x, d_b, n);
}
// CHECK-LABEL: host function forward:
// CHECK: launch #0 -> #1: same-thread
// CHECK-NEXT: d_x ({{.*}}): same-thread
// CHECK-NEXT: launch #1 -> #2: cross-thread
// CHECK-NEXT: d_x (write-read): cross-thread — thread (x={{[0-9]+}}) of the first launch and thread (x={{[0-9]+}}) of the second touch the same element when [n]={{[0-9]+}}
// CHECK-NEXT: launch #2 -> #3: disjoint
// CHECK-NEXT: d_y (write-write): disjoint
// CHECK-NEXT: launch #3 -> #4: disjoint
// CHECK-NEXT: d_y ({{.*}}): disjoint
// CHECK-NEXT: launch #4 -> #5: unknown
// CHECK-NEXT: d_y ({{.*}}): unknown — {{.*}}constant stride
// CHECK-NEXT: launch #5 -> #6: disjoint
// JSON: "dependences": [
// JSON: "result": "same-thread"
