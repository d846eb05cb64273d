// fuse(count=N): a chain of N consecutive launches (only error checks
// between) becomes one launch of a kernel running the N bodies in order.
// RUN: cudal1-opt %s --plan '@#0: fuse(count=3)' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// count=2 is plain fuse: the same output but for the plan in the first line.
// RUN: cudal1-opt %s --plan '@#0: fuse' -o %t.pair.cu
// RUN: cudal1-opt %s --plan '@#0: fuse(count=2)' -o %t.pair2.cu
// RUN: tail -n +2 %t.pair.cu > %t.pair.body
// RUN: tail -n +2 %t.pair2.cu > %t.pair2.body
// RUN: cmp %t.pair.body %t.pair2.body
// RUN: grep -v "^ *// [A-Z-]*:" %t.pair.cu | FileCheck %s --check-prefix=PAIR
// The listing: plain fuse and the longer chain beside it.
// RUN: cudal1-opt %s --list-transforms | FileCheck %s --check-prefix=LIST
// RUN: cudal1-opt %s --list-transforms=json | FileCheck %s --check-prefix=JSON
// Refusals, each with its reason; nothing is written.
// RUN: not cudal1-opt %s --plan '@#0: fuse(count=4)' -o %t.bad.cu 2>&1 | FileCheck %s --check-prefix=LONG
// RUN: not test -e %t.bad.cu
// RUN: not cudal1-opt %s --plan '@#3: fuse(count=3)' 2>&1 | FileCheck %s --check-prefix=GAP
// RUN: not cudal1-opt %s --plan '@#6: fuse(count=3)' 2>&1 | FileCheck %s --check-prefix=FAR
// RUN: not cudal1-opt %s --plan '@#9: fuse(count=3)' 2>&1 | FileCheck %s --check-prefix=CONFIG
// RUN: not cudal1-opt %s --plan '@#0: fuse(count=9)' 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not cudal1-opt %s --plan '@#0: fuse(count=x)' 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not cudal1-opt %s --plan '@#0: fuse(width=3)' 2>&1 | FileCheck %s --check-prefix=PARAM
// A synchronization between the second and the third launch: the pair
// fuses, the chain is refused and listed as enabled by drop-sync of it.
// RUN: not cudal1-opt %s --plan '@#12: fuse(count=3)' 2>&1 | FileCheck %s --check-prefix=SYNC
// RUN: cudal1-opt %s --plan '@#12: fuse' -o %t.sync-pair.cu
// RUN: cudal1-opt %s --plan '@sync#0: drop-sync; @#12: fuse(count=3)' -o %t.sync.cu
// RUN: FileCheck %s --check-prefix=SYNCOUT < %t.sync.cu
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.sync.o %t.sync.cu %}

#include <cstdio>
#include <cuda_runtime.h>

#define CHECK(x)                                                                                   \
  do {                                                                                             \
    cudaError_t e = (x);                                                                           \
    if (e != cudaSuccess)                                                                          \
      std::printf("%s\n", cudaGetErrorString(e));                                                  \
  } while (0)

__global__ void addK(const float *a, const float *b, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  out[i] = a[i] + b[i];
}

__global__ void scaleK(const float *a, float s, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = a[i] * s;
}

__global__ void reluK(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = y[i] > 0.0f ? y[i] : 0.0f;
}

// Reads the neighbour's element: cross-thread against whoever wrote it.
__global__ void shiftK(const float *a, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i + 1 < n)
    out[i] = a[i + 1];
}

// CHECK: // cudal1 fuse: [[F:cudal1Fused[0-9]+]] runs addK, scaleK then reluK in each thread
// CHECK-NEXT: __global__ void [[F]](const float * a0, const float * a1, float * a2, int a3, const float * b0, float b1, float * b2, int b3, float * c0, int c1) {
// CHECK-NEXT:   [](const float *a, const float *b, float *out, int n) {
// CHECK:          return;
// CHECK:        }(a0, a1, a2, a3);
// CHECK-NEXT:   [](const float *a, float s, float *out, int n) {
// CHECK:        }(b0, b1, b2, b3);
// CHECK-NEXT:   [](float *y, int n) {
// CHECK:        }(c0, c1);
// CHECK-NEXT: }
// CHECK-LABEL: void chain(
// PAIR: cudal1-opt plan: @#0: fuse
// PAIR: cudal1Fused{{[0-9]+}}<<<(n + 255) / 256, 256>>>(x, b, t, n, t, 2.0f, y, n);
// PAIR-NEXT: CHECK(cudaGetLastError());
// PAIR-NEXT: /* cudal1 fuse: scaleK<<<(n + 255) / 256, 256>>>(t, 2.0f, y, n) */;
// PAIR-NEXT: reluK<<<(n + 255) / 256, 256>>>(y, n);
// An error check between launches keeps them consecutive; host code ends
// the chain.
void chain(int n) {
  float *x, *b, *t, *y, *z, *w;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&b, n * sizeof(float));
  cudaMalloc(&t, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  cudaMalloc(&z, n * sizeof(float));
  cudaMalloc(&w, n * sizeof(float));
  // CHECK: [[F]]<<<(n + 255) / 256, 256>>>(x, b, t, n, t, 2.0f, y, n, y, n);
  addK<<<(n + 255) / 256, 256>>>(x, b, t, n);
  // CHECK-NEXT: CHECK(cudaGetLastError());
  CHECK(cudaGetLastError());
  // CHECK-NEXT: /* cudal1 fuse: scaleK<<<(n + 255) / 256, 256>>>(t, 2.0f, y, n) */;
  scaleK<<<(n + 255) / 256, 256>>>(t, 2.0f, y, n);
  // CHECK-NEXT: /* cudal1 fuse: reluK<<<(n + 255) / 256, 256>>>(y, n) */;
  reluK<<<(n + 255) / 256, 256>>>(y, n);
  // CHECK-NEXT: n = n - 1;
  n = n - 1;
  // CHECK-NEXT: scaleK<<<
  scaleK<<<(n + 255) / 256, 256>>>(z, 3.0f, w, n);
  scaleK<<<(n + 255) / 256, 256>>>(w, 3.0f, z, n);
  n = n + 1;
  reluK<<<(n + 255) / 256, 256>>>(z, n);
}

// Launch 1 writes t, launch 2 touches neither t nor what 1 reads, launch 3
// reads t at a neighbour's index: every adjacent pair fuses, 1 and 3 do not.
void far(int n) {
  float *x, *b, *t, *y, *z;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&b, n * sizeof(float));
  cudaMalloc(&t, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  cudaMalloc(&z, n * sizeof(float));
  addK<<<(n + 255) / 256, 256>>>(x, b, t, n);
  reluK<<<(n + 255) / 256, 256>>>(y, n);
  shiftK<<<(n + 255) / 256, 256>>>(t, z, n);
}

// The third launch has another block size.
void config(int n) {
  float *x, *b, *t, *y;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&b, n * sizeof(float));
  cudaMalloc(&t, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  addK<<<(n + 255) / 256, 256>>>(x, b, t, n);
  scaleK<<<(n + 255) / 256, 256>>>(t, 2.0f, y, n);
  reluK<<<(n + 127) / 128, 128>>>(y, n);
}

// A synchronization between the second and the third launch.
void synced(int n) {
  float *x, *b, *t, *y;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&b, n * sizeof(float));
  cudaMalloc(&t, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  addK<<<(n + 255) / 256, 256>>>(x, b, t, n);
  scaleK<<<(n + 255) / 256, 256>>>(t, 2.0f, y, n);
  CHECK(cudaDeviceSynchronize());
  reluK<<<(n + 255) / 256, 256>>>(y, n);
  CHECK(cudaDeviceSynchronize());
}

// LIST-LABEL: launch #0 addK
// LIST-NOT:   launch #1
// LIST:       {{^  }}fuse{{$}}
// LIST-NEXT:  {{^  }}fuse(count=3){{$}}
// LIST-LABEL: launch #1 scaleK
// LIST:       {{^  }}fuse{{$}}
// LIST-NOT:   count=
// LIST-LABEL: launch #6 addK
// LIST:       {{^  }}fuse{{$}}
// LIST-NOT:   count=
// LIST-LABEL: launch #9 addK
// LIST:       {{^  }}fuse{{$}}
// LIST-NOT:   count=
// LIST-LABEL: launch #12 addK
// LIST:       {{^  }}fuse{{$}}
// LIST-NEXT:  - fuse: count=3: the third launch of the chain is not reached: a host synchronization (sync #0) follows launch #13
// LIST-NEXT:    + fuse(count=3)  enabled by @sync#0: drop-sync
// LIST-LABEL: launch #13 scaleK
// LIST:       - fuse: no launch follows it in its block
// LIST-NEXT:    + fuse  enabled by @sync#0: drop-sync

// The json listing has two fuse entries at launch #12, the second enabled.
// JSON:      "id": 12,
// JSON:      "name": "fuse",
// JSON-NEXT: "params": []
// JSON-NEXT: },
// JSON-NEXT: {
// JSON-NEXT: "enabled_by": [
// JSON-NEXT: "@sync#0: drop-sync"
// JSON-NEXT: ],
// JSON-NEXT: "legal": false,
// JSON-NEXT: "name": "fuse",
// JSON-NEXT: "params": [
// JSON-NEXT: {
// JSON-NEXT: "name": "count",
// JSON-NEXT: "values": [
// JSON-NEXT: "3"
// JSON-NEXT: ]
// JSON-NEXT: }
// JSON-NEXT: ],
// JSON-NEXT: "reason": "count=3: the third launch of the chain is not reached: a host synchronization (sync #0) follows launch #13"

// LONG: step 1 (fuse): the fourth launch of the chain is not reached: a statement that is not an error check follows launch #2 at launch site #0
// GAP: step 1 (fuse): the third launch of the chain is not reached: a statement that is not an error check follows launch #4 at launch site #3
// FAR: step 1 (fuse): launch #8 (third of the chain) against launch #6 (first of the chain): launch #8 depends on it through 't' (cross-thread
// CONFIG: step 1 (fuse): launch #11 (third of the chain) has another configuration (<<<(n + 127) / 128, 128>>> vs <<<(n + 255) / 256, 256>>>)
// RANGE: step 1 (fuse): parameter count={{9|x}} is not an integer from 2 to 8
// PARAM: step 1 (fuse): unknown parameter 'width'
// SYNC: step 1 (fuse): the third launch of the chain is not reached: a host synchronization (sync #0) follows launch #13 at launch site #12

// SYNCOUT: cudal1-opt plan: @sync#0: drop-sync; @#12: fuse(count=3)
// SYNCOUT: runs addK, scaleK then reluK in each thread
// SYNCOUT: void synced(
// SYNCOUT: cudal1Fused{{[0-9]+}}<<<(n + 255) / 256, 256>>>(x, b, t, n, t, 2.0f, y, n, y, n);
// SYNCOUT-NEXT: /* cudal1 fuse: scaleK<<<(n + 255) / 256, 256>>>(t, 2.0f, y, n) */;
// SYNCOUT-NEXT: /* cudal1 drop-sync: CHECK(cudaDeviceSynchronize()) */;
// SYNCOUT-NEXT: /* cudal1 fuse: reluK<<<(n + 255) / 256, 256>>>(y, n) */;
// SYNCOUT-NEXT: CHECK(cudaDeviceSynchronize());
