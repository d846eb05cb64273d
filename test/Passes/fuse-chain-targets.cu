// fuse at a kernel scope with several targets in one step: each chain gets
// its own fused kernel (incK then twiceK, incK then subK), and two targets
// whose chains share a launch are refused instead of rewriting it twice.
// RUN: cudal1-opt %s --plan '@incK: fuse' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// RUN: not cudal1-opt %s --plan '@addK: fuse' -o %t.bad.cu 2>&1 | FileCheck %s --check-prefix=OVERLAP
// RUN: not test -e %t.bad.cu

__global__ void incK(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] += 1.0f;
}
__global__ void twiceK(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] *= 2.0f;
}
__global__ void subK(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] -= 3.0f;
}
__global__ void addK(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] += 4.0f;
}

// CHECK: // cudal1 fuse: [[F:cudal1Fused[0-9]+]] runs incK then twiceK in each thread
// CHECK-LABEL: void one(
// CHECK: [[F]]<<<(n + 255) / 256, 256>>>(y, n, y, n);
// CHECK-NEXT: /* cudal1 fuse: twiceK<<<(n + 255) / 256, 256>>>(y, n) */;
void one(int n) {
  float *y;
  cudaMalloc(&y, n * sizeof(float));
  incK<<<(n + 255) / 256, 256>>>(y, n);
  twiceK<<<(n + 255) / 256, 256>>>(y, n);
}

// CHECK: // cudal1 fuse: [[G:cudal1Fused[0-9]+]] runs incK then subK in each thread
// CHECK-NOT: [[F]]
// CHECK-LABEL: void two(
// CHECK: [[G]]<<<(n + 255) / 256, 256>>>(y, n, y, n);
// CHECK-NEXT: /* cudal1 fuse: subK<<<(n + 255) / 256, 256>>>(y, n) */;
void two(int n) {
  float *y;
  cudaMalloc(&y, n * sizeof(float));
  incK<<<(n + 255) / 256, 256>>>(y, n);
  subK<<<(n + 255) / 256, 256>>>(y, n);
}

// addK's two launches follow each other: the chain of #4 (#4, #5) and the
// chain of #5 (#5, #6) share #5.
void overlap(int n) {
  float *y;
  cudaMalloc(&y, n * sizeof(float));
  addK<<<(n + 255) / 256, 256>>>(y, n);
  addK<<<(n + 255) / 256, 256>>>(y, n);
  subK<<<(n + 255) / 256, 256>>>(y, n);
}
// OVERLAP: step 1 (fuse): launch #5 is in the chains of two targets of this step
