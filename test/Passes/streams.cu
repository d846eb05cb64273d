// streams: a launch runs on a side stream, overlapping the independent
// launches after it; the original stream waits for it before the next
// statement that is not such a launch.
// RUN: cudal1-opt %s --list-transforms | FileCheck %s --check-prefix=LIST
// RUN: cudal1-opt %s --plan '@#0: streams; @#3: streams' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// Negative cases: each reason is reported and nothing is written.
// RUN: not cudal1-opt %s --plan '@#5: streams' -o %t.bad.cu 2>&1 | FileCheck %s --check-prefix=ALIAS
// RUN: not test -e %t.bad.cu
// RUN: not cudal1-opt %s --plan '@#7: streams' 2>&1 | FileCheck %s --check-prefix=DEP
// RUN: not cudal1-opt %s --plan '@#9: streams' 2>&1 | FileCheck %s --check-prefix=PARAMS
// RUN: not cudal1-opt %s --plan '@#1: streams' 2>&1 | FileCheck %s --check-prefix=LAST
#include <cuda_runtime.h>

__global__ void scale(const float *x, float *y, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = s * x[i];
}

__global__ void add(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
}

// Two branches from one input, joined by the add.
// CHECK: struct Cudal1SideStream {
// CHECK-LABEL: int main(
int main() {
  int n = 1 << 20;
  float *x, *p, *q, *r;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&p, n * sizeof(float));
  cudaMalloc(&q, n * sizeof(float));
  cudaMalloc(&r, n * sizeof(float));
  for (int it = 0; it < 10; ++it) {
    // CHECK: static Cudal1SideStream [[S0:cudal1Side[0-9]+]];  // cudal1 streams
    // CHECK-NEXT: scale<<<(n + 255) / 256, 256, 0, [[S0]].fork(0)>>>(x, p, 2.0f, n);
    scale<<<(n + 255) / 256, 256>>>(x, p, 2.0f, n);
    // CHECK-NEXT: scale<<<(n + 255) / 256, 256>>>(x, q, 3.0f, n);
    scale<<<(n + 255) / 256, 256>>>(x, q, 3.0f, n);
    // CHECK-NEXT: [[S0]].join(0);  // cudal1 streams
    // CHECK-NEXT: add<<<(n + 255) / 256, 256>>>(p, q, r, n);
    add<<<(n + 255) / 256, 256>>>(p, q, r, n);
  }
  float h;
  cudaMemcpy(&h, r, sizeof(float), cudaMemcpyDeviceToHost);
  return h > 0;
}

// A named stream, joined at the end of the block.
// CHECK-LABEL: void branches(
void branches(int n, cudaStream_t st) {
  float *x = nullptr, *p = nullptr, *q = nullptr;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&p, n * sizeof(float));
  cudaMalloc(&q, n * sizeof(float));
  {
    // CHECK: scale<<<(n + 255) / 256, 256, 0, [[S1:cudal1Side[0-9]+]].fork(st)>>>(x, p, 2.0f, n);
    scale<<<(n + 255) / 256, 256, 0, st>>>(x, p, 2.0f, n);
    // CHECK-NEXT: scale<<<(n + 255) / 256, 256, 0, st>>>(x, q, 3.0f, n);
    scale<<<(n + 255) / 256, 256, 0, st>>>(x, q, 3.0f, n);
    // CHECK-NEXT: [[S1]].join(st);
    // CHECK-NEXT: }
  }
}

// Aliasing: q points into p, so the two writes may overlap.
void alias(float *p, int n) {
  float *q = p + n / 2;
  scale<<<(n + 255) / 256, 256>>>(p, p, 2.0f, n);
  scale<<<(n + 255) / 256, 256>>>(q, q, 3.0f, n);
}

// The second launch reads what the first writes.
void chain(int n) {
  float *x, *p;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&p, n * sizeof(float));
  scale<<<(n + 255) / 256, 256>>>(x, p, 2.0f, n);
  scale<<<(n + 255) / 256, 256>>>(p, x, 3.0f, n);
}

// Parameters of the host function may alias each other.
void params(float *x, float *p, float *q, int n) {
  scale<<<(n + 255) / 256, 256>>>(x, p, 2.0f, n);
  scale<<<(n + 255) / 256, 256>>>(x, q, 3.0f, n);
}
// LIST: launch #0 scale
// LIST: {{^}}  streams{{$}}
// LIST: launch #5 scale
// LIST: - streams: no independent launch follows it (launch #6: 'p' and 'q' may alias (not both fresh allocations))
// ALIAS: step 1 (streams): not legal at launch site #5 ({{.*}}streams.cu:{{[0-9]+}}:3): no independent launch follows it (launch #6: 'p' and 'q' may alias (not both fresh allocations))
// DEP: launch #8: launch #8 depends on it through 'p' (same-thread)
// PARAMS: 'p' and 'x' may alias (not both fresh allocations)
// LAST: no independent launch follows it (launch #2: launch #2 depends on it through 'q' (same-thread))
