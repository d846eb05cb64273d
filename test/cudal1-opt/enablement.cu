// Enablement (issue 18 item 2): a step refused only because of something a
// gatekeeper step removes is listed as enabled by it. A chain of
// element-wise kernels with a cudaDeviceSynchronize after each: fuse is
// refused (a sync lies between the launches) and offered as enabled by
// drop-sync of that sync; the plan that composes them applies in the order
// the listing gives and the output compiles.
// RUN: cudal1-opt %s --list-transforms | FileCheck %s --check-prefix=LIST
// RUN: cudal1-opt %s --list-transforms=json | FileCheck %s --check-prefix=JSON
// RUN: cudal1-opt %s --plan '@sync#0: drop-sync; @#0: fuse' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s --check-prefix=OUT
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// Two pairs: the syncs last first, then the later pair first, so that every
// id stays the listing's.
// RUN: cudal1-opt %s --plan '@sync#2: drop-sync; @sync#0: drop-sync; @#2: fuse; @#0: fuse' -o %t.two.cu
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.two.o %t.two.cu %}
// restrict before vectorize, one scope for both.
// RUN: cudal1-opt %s --plan '@twoOut: restrict; vectorize(width=16)' -o %t.vec.cu
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.vec.o %t.vec.cu %}
// Without the gatekeeper fuse stays refused.
// RUN: not cudal1-opt %s --plan '@#0: fuse' 2>&1 | FileCheck %s --check-prefix=ALONE

#include <cstdio>
#include <cuda_runtime.h>

#define CHECK(x)                                                                                   \
  do {                                                                                             \
    cudaError_t e = (x);                                                                           \
    if (e != cudaSuccess) {                                                                        \
      std::printf("%s\n", cudaGetErrorString(e));                                                  \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

__global__ void addK(const float *a, const float *b, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = a[i] + b[i];
}
__global__ void scaleK(const float *a, float s, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = a[i] * s;
}
__global__ void reluK(const float *a, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = a[i] > 0.0f ? a[i] : 0.0f;
}
__global__ void squareK(const float *a, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = a[i] * a[i];
}

// Negative: the host reads the first result between the two launches, so
// the synchronization cannot be dropped and fuse stays refused.
__global__ void negK(const float *a, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = -a[i];
}
__global__ void halfK(const float *a, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = 0.5f * a[i];
}

// restrict before vectorize: y is stored before x is read, so vectorize
// refuses pointers that may alias; the launch passes distinct fresh buffers,
// so restrict is legal, and after it vectorize is.
__global__ void twoOut(const float *x, float *y, float *z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = x[i] * 2.0f;
    z[i] = x[i] + 1.0f;
  }
}

int main() {
  const int n = 1 << 20;
  float *a, *b, *t1, *t2, *t3, *y, *m;
  CHECK(cudaMalloc(&a, n * sizeof(float)));
  CHECK(cudaMalloc(&b, n * sizeof(float)));
  CHECK(cudaMalloc(&t1, n * sizeof(float)));
  CHECK(cudaMalloc(&t2, n * sizeof(float)));
  CHECK(cudaMalloc(&t3, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  CHECK(cudaMallocManaged(&m, n * sizeof(float)));
  CHECK(cudaMemset(a, 0, n * sizeof(float)));
  CHECK(cudaMemset(b, 0, n * sizeof(float)));
  dim3 block(256), grid((n + 255) / 256);
  addK<<<grid, block>>>(a, b, t1, n);
  CHECK(cudaDeviceSynchronize());
  scaleK<<<grid, block>>>(t1, 2.0f, t2, n);
  CHECK(cudaDeviceSynchronize());
  reluK<<<grid, block>>>(t2, t3, n);
  CHECK(cudaDeviceSynchronize());
  squareK<<<grid, block>>>(t3, y, n);
  CHECK(cudaDeviceSynchronize());
  // The negative case: m is read on the host after the sync.
  negK<<<grid, block>>>(y, m, n);
  CHECK(cudaDeviceSynchronize());
  std::printf("m0=%f\n", m[0]);
  halfK<<<grid, block>>>(m, t1, n);
  twoOut<<<grid, block>>>(t1, t2, t3, n);
  CHECK(cudaDeviceSynchronize());
  return 0;
}

// LIST-LABEL: kernel twoOut
// LIST:       - vectorize: the body reads x after storing to y
// LIST-NEXT:    + vectorize(width=8|16)  enabled by @twoOut: restrict
// LIST-LABEL: launch #0 addK
// LIST:       - fuse: no launch follows it in its block
// LIST-NEXT:    + fuse  enabled by @sync#0: drop-sync
// LIST-LABEL: launch #1 scaleK
// LIST:         + fuse  enabled by @sync#1: drop-sync
// LIST-LABEL: launch #2 reluK
// LIST:         + fuse  enabled by @sync#2: drop-sync
// squareK writes y, which negK reads and writes into m, managed memory the
// host reads: not a fresh allocation, so y and m may alias and fuse stays
// refused after drop-sync too (no enablement is listed).
// LIST-LABEL: launch #3 squareK
// LIST:       - fuse: no launch follows it in its block
// LIST-NOT:     enabled by
// The host reads m between negK and halfK: sync #4 cannot be dropped.
// LIST-LABEL: launch #4 negK
// LIST:       - fuse: no launch follows it in its block
// LIST-NOT:     enabled by
// LIST-LABEL: launch #5 halfK
// LIST-LABEL: sync #4 cudaDeviceSynchronize
// LIST:       - drop-sync: needed before

// JSON:      "kernel": "addK",
// JSON:      "enabled_by": [
// JSON-NEXT:   "@sync#0: drop-sync"
// JSON-NEXT: ],
// JSON-NEXT: "legal": false,
// JSON-NEXT: "name": "fuse",
// JSON-NEXT: "params": [],
// JSON-NEXT: "reason": "no launch follows it in its block

// OUT: cudal1Fused{{[0-9]+}}<<<grid, block>>>(a, b, t1, n, t1, 2.0f, t2, n);
// OUT-NEXT: /* cudal1 drop-sync: CHECK(cudaDeviceSynchronize()) */;
// OUT-NEXT: /* cudal1 fuse: scaleK<<<grid, block>>>(t1, 2.0f, t2, n) */;

// ALONE: not legal at launch site #0 {{.*}}: no launch follows it in its block
