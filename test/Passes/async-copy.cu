// async-copy: a device-to-host copy goes through a pinned staging buffer on
// a side stream, overlapped with the independent launches after it; the
// copy is finished (origin stream and host wait, staging copied into the
// destination) before the next statement that is not such a launch.
// RUN: cudal1-opt %s --list-transforms | FileCheck %s --check-prefix=LIST
// RUN: cudal1-opt %s --plan '@copy#0: async-copy' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -o %t.exe %t.cu %}
// Negative cases: each reason is reported and nothing is written.
// RUN: not cudal1-opt %s --plan '@copy#1: async-copy' -o %t.bad.cu 2>&1 | FileCheck %s --check-prefix=SRC
// RUN: not test -e %t.bad.cu
// RUN: not cudal1-opt %s --plan '@copy#2: async-copy' 2>&1 | FileCheck %s --check-prefix=READ
// RUN: not cudal1-opt %s --plan '@copy#3: async-copy' 2>&1 | FileCheck %s --check-prefix=H2D
// RUN: not cudal1-opt %s --plan '@copy#4: async-copy' 2>&1 | FileCheck %s --check-prefix=USED
// RUN: not cudal1-opt %s --plan '@copy#5: async-copy' 2>&1 | FileCheck %s --check-prefix=STREAM
// RUN: not cudal1-opt %s --plan '@#0: async-copy' 2>&1 | FileCheck %s --check-prefix=SCOPE
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                \
  do {                                                                             \
    cudaError_t err_ = (call);                                                     \
    if (err_ != cudaSuccess) {                                                     \
      fprintf(stderr, "%s\n", cudaGetErrorString(err_));                           \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

__global__ void step(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = 0.5f * in[i] + 1.0f;
}

// The copy of `a` overlaps the two launches that write `b` and `c`; the
// host reads the copy after the finish.
// CHECK: struct Cudal1AsyncCopy {
// CHECK-LABEL: int main(
int main() {
  int n = 1 << 20;
  float *a, *b, *c;
  CHECK(cudaMalloc(&a, n * sizeof(float)));
  CHECK(cudaMalloc(&b, n * sizeof(float)));
  CHECK(cudaMalloc(&c, n * sizeof(float)));
  CHECK(cudaMemset(a, 0, n * sizeof(float)));
  std::vector<float> h(n);
  step<<<(n + 255) / 256, 256>>>(a, a, n);
  // CHECK: static Cudal1AsyncCopy [[C:cudal1Copy[0-9]+]];  // cudal1 async-copy
  // CHECK-NEXT: [[C]].start(h.data(), a, n * sizeof(float), 0);
  CHECK(cudaMemcpy(h.data(), a, n * sizeof(float), cudaMemcpyDeviceToHost));
  // CHECK-NEXT: step<<<(n + 255) / 256, 256>>>(a, b, n);
  step<<<(n + 255) / 256, 256>>>(a, b, n);
  // CHECK-NEXT: CHECK(cudaGetLastError());
  CHECK(cudaGetLastError());
  // CHECK-NEXT: step<<<(n + 255) / 256, 256>>>(b, c, n);
  step<<<(n + 255) / 256, 256>>>(b, c, n);
  // CHECK-NEXT: [[C]].finish(0);  // cudal1 async-copy
  // CHECK-NEXT: printf("%f\n", h[0]);
  printf("%f\n", h[0]);
  // The next launch writes the copy's source: the copy finishes before it.
  step<<<(n + 255) / 256, 256>>>(b, a, n);
  CHECK(cudaMemcpy(h.data(), a, n * sizeof(float), cudaMemcpyDeviceToHost));
  step<<<(n + 255) / 256, 256>>>(b, a, n);
  // The host reads the destination right away: nothing to overlap.
  CHECK(cudaMemcpy(h.data(), c, n * sizeof(float), cudaMemcpyDeviceToHost));
  printf("%f\n", h[1]);
  // Host to device: not this pass.
  CHECK(cudaMemcpy(a, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  // The result is used.
  cudaError_t e = cudaMemcpy(h.data(), c, n * sizeof(float), cudaMemcpyDeviceToHost);
  step<<<(n + 255) / 256, 256>>>(a, b, n);
  return e != cudaSuccess;
}

// Launches on a named stream: the copy's origin (the default stream) would
// not order them.
void streamed(float *d, float *o, float *host, int n, cudaStream_t st) {
  cudaMemcpy(host, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  step<<<(n + 255) / 256, 256, 0, st>>>(d, o, n);
}
// LIST: copy #0 cudaMemcpy {{.*}}async-copy.cu:{{[0-9]+}}:
// LIST-NEXT: async-copy
// LIST: copy #3 cudaMemcpy
// LIST-NEXT: - async-copy: only device-to-host copies (kind written as cudaMemcpyDeviceToHost)
// SRC: step 1 (async-copy): not legal at host copy #1: no independent launch follows the copy (launch #{{[0-9]+}}: it writes 'a', which may be the copy's source 'a')
// READ: no independent launch follows the copy in its block
// H2D: only device-to-host copies (kind written as cudaMemcpyDeviceToHost)
// USED: the copy's result is used (only a plain call or an error check around it)
// STREAM: the function launches on explicit streams (the copy's origin is the default stream)
// SCOPE: applies to a host copy: scope it with @copy#id
