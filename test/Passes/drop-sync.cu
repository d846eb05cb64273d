// drop-sync: a host synchronization that nothing on the host depends on
// before the next synchronizing call is removed.
// RUN: cudal1-opt %s --list-transforms | FileCheck %s --check-prefix=LIST
// RUN: cudal1-opt %s --plan '@sync#3: drop-sync; @sync#0: drop-sync' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// Negative cases: each reason is reported and nothing is written.
// RUN: not cudal1-opt %s --plan '@sync#1: drop-sync' -o %t.bad.cu 2>&1 | FileCheck %s --check-prefix=HOSTREAD
// RUN: not test -e %t.bad.cu
// RUN: not cudal1-opt %s --plan '@sync#4: drop-sync' 2>&1 | FileCheck %s --check-prefix=END
// RUN: not cudal1-opt %s --plan '@sync#5: drop-sync' 2>&1 | FileCheck %s --check-prefix=TIMING
// RUN: not cudal1-opt %s --plan '@sync#7: drop-sync' 2>&1 | FileCheck %s --check-prefix=USED
// RUN: not cudal1-opt %s --plan '@sync#9: drop-sync' 2>&1 | FileCheck %s --check-prefix=STREAM
// RUN: not cudal1-opt %s --plan '@#0: drop-sync' 2>&1 | FileCheck %s --check-prefix=SCOPE
#include <chrono>
#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                \
  do {                                                                             \
    cudaError_t err_ = (call);                                                     \
    if (err_ != cudaSuccess) {                                                     \
      fprintf(stderr, "%s\n", cudaGetErrorString(err_));                           \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

__global__ void scale(float *x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= s;
}

// The sync per step is redundant: the copy after the loop synchronizes.
// CHECK-LABEL: float steps(
float steps(float *d, int n, int reps) {
  for (int r = 0; r < reps; ++r) {
    scale<<<(n + 255) / 256, 256>>>(d, 0.5f, n);
    // CHECK: /* cudal1 drop-sync: CHECK(cudaDeviceSynchronize()) */;
    CHECK(cudaDeviceSynchronize());
  }
  // An error check on the way exits only on an error: it does not block.
  CHECK(cudaGetLastError());
  float h = 0;
  CHECK(cudaMemcpy(&h, d, sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

// Managed memory read on the host between two launches: the sync is needed.
float managed(float *m, int n) {
  scale<<<(n + 255) / 256, 256>>>(m, 2.0f, n);
  cudaDeviceSynchronize();
  float first = m[0];
  scale<<<(n + 255) / 256, 256>>>(m, first, n);
  cudaDeviceSynchronize();
  return m[1];
}

// A sync followed by a plain cudaStreamSynchronize(0) is redundant.
// CHECK-LABEL: void twice(
void twice(float *d, int n) {
  scale<<<(n + 255) / 256, 256>>>(d, 2.0f, n);
  // CHECK: /* cudal1 drop-sync: cudaDeviceSynchronize() */;
  cudaDeviceSynchronize();
  // CHECK-NEXT: cudaStreamSynchronize(0);
  cudaStreamSynchronize(0);
}

// Host timing: the sync makes the clock see the kernel's end.
double timed(float *d, int n) {
  auto t0 = std::chrono::steady_clock::now();
  scale<<<(n + 255) / 256, 256>>>(d, 2.0f, n);
  cudaDeviceSynchronize();
  auto t1 = std::chrono::steady_clock::now();
  cudaDeviceSynchronize();
  return std::chrono::duration<double>(t1 - t0).count();
}

// The result is used.
int used(float *d, int n) {
  scale<<<(n + 255) / 256, 256>>>(d, 2.0f, n);
  cudaError_t e = cudaDeviceSynchronize();
  cudaDeviceSynchronize();
  return e;
}

// A named stream: only a device-wide sync or one of the same stream counts.
void streamed(float *d, int n, cudaStream_t s) {
  scale<<<(n + 255) / 256, 256, 0, s>>>(d, 2.0f, n);
  cudaStreamSynchronize(s);
  float h;
  cudaMemcpy(&h, d, sizeof(float), cudaMemcpyDeviceToHost);
  printf("%f\n", h);
  cudaDeviceSynchronize();
}
// LIST: sync #0 cudaDeviceSynchronize
// LIST-NEXT: {{^}}  drop-sync{{$}}
// LIST: sync #1 cudaDeviceSynchronize
// LIST-NEXT: - drop-sync: needed before a host access of device buffer 'm' at line
// HOSTREAD: step 1 (drop-sync): not legal at host synchronization #1 ({{.*}}drop-sync.cu:{{[0-9]+}}:3): needed before a host access of device buffer 'm' at line
// END: nothing synchronizes again before the end of twice
// TIMING: needed before host timing code (now)
// USED: the result of the synchronization is used
// STREAM: not legal at host synchronization #9 {{.*}}: needed before cudaMemcpy at line {{[0-9]+}} (a default-stream copy may not wait for work on other streams)
// SCOPE: applies to a host synchronization: scope it with @sync#id
