// graph after streams: a loop whose launches the streams pass forked onto a
// side stream is captured as one graph with the same fork and join (the
// side stream forks from the capture stream, joins back before the capture
// ends); replays launch the graph on the original stream.
// RUN: cudal1-opt %s --plan '@#0: streams; @loop#0: graph' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// A join after an error check still belongs to the run.
// RUN: cudal1-opt %s --plan '@#7: streams; @loop#2: graph' -o %t.check.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.check.cu | FileCheck %s --check-prefix=CHECKED
// Negative cases: each reason is reported and nothing is written.
// RUN: not cudal1-opt %s --plan '@#4: streams; @loop#1: graph' -o %t.bad.cu 2>&1 | FileCheck %s --check-prefix=DECL
// RUN: not test -e %t.bad.cu
// RUN: not cudal1-opt %s --plan '@loop#3: graph' 2>&1 | FileCheck %s --check-prefix=UNJOINED
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

// The streams pass's helper, written out so that a test can use it by hand.
#define CUDAL1_SIDE_STREAM
struct Cudal1SideStream {
  cudaStream_t stream = nullptr;
  cudaEvent_t forked = nullptr, done = nullptr;
  cudaStream_t fork(cudaStream_t origin) {
    cudaEventRecord(forked, origin);
    cudaStreamWaitEvent(stream, forked, 0);
    return stream;
  }
  void join(cudaStream_t origin) {
    cudaEventRecord(done, stream);
    cudaStreamWaitEvent(origin, done, 0);
  }
};

__global__ void project(const float *in, const float *w, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] * w[i];
}

__global__ void gates(const float *gx, const float *gh, float *h, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    h[i] = 0.5f * h[i] + gx[i] * gh[i];
}

// A GRU-like step: two independent projections, then the gates.
// CHECK: class Cudal1GraphLoop {
// CHECK: void launchSide(S &side,
// CHECK-LABEL: void gru(
void gru(int n, int steps) {
  float *x, *wx, *wh, *gx, *gh, *h;
  cudaMalloc(&x, (size_t)steps * n * sizeof(float));
  cudaMalloc(&wx, n * sizeof(float));
  cudaMalloc(&wh, n * sizeof(float));
  cudaMalloc(&gx, n * sizeof(float));
  cudaMalloc(&gh, n * sizeof(float));
  cudaMalloc(&h, n * sizeof(float));
  // CHECK: Cudal1GraphLoop [[G:cudal1Graph[0-9]+]];  // cudal1 graph
  // CHECK-NEXT: for (int t = 0; t < steps; ++t) {
  for (int t = 0; t < steps; ++t) {
    // CHECK-NEXT: static Cudal1SideStream [[S:cudal1Side[0-9]+]];  // cudal1 streams
    // CHECK-NEXT: [[G]].launchSide([[S]], project, (n + 127) / 128, 128, 0, x + (size_t)t * n, wx, gx, n);
    project<<<(n + 127) / 128, 128>>>(x + (size_t)t * n, wx, gx, n);
    // CHECK-NEXT: [[G]].launch(project, (n + 127) / 128, 128, 0, h, wh, gh, n);
    project<<<(n + 127) / 128, 128>>>(h, wh, gh, n);
    // CHECK-NEXT: [[G]].join([[S]]);  // cudal1 streams
    // CHECK-NEXT: [[G]].launch(gates, (n + 127) / 128, 128, 0, gx, gh, h, n); [[G]].replay(0);
    gates<<<(n + 127) / 128, 128>>>(gx, gh, h, n);
  }
  cudaDeviceSynchronize();
  cudaFree(x);
}

// The side stream of the second launch would be declared inside the run
// (created during the capture): refused.
void second(int n, int steps) {
  float *a, *b, *c, *d;
  cudaMalloc(&a, n * sizeof(float));
  cudaMalloc(&b, n * sizeof(float));
  cudaMalloc(&c, n * sizeof(float));
  cudaMalloc(&d, n * sizeof(float));
  for (int t = 0; t < steps; ++t) {
    project<<<(n + 127) / 128, 128>>>(a, a, b, n);
    project<<<(n + 127) / 128, 128>>>(a, a, c, n);
    project<<<(n + 127) / 128, 128>>>(a, a, d, n);
    gates<<<(n + 127) / 128, 128>>>(b, c, d, n);
  }
}

#define CHECK(call)                                                                \
  do {                                                                             \
    cudaError_t err_ = (call);                                                     \
    if (err_ != cudaSuccess) {                                                     \
      fprintf(stderr, "%s\n", cudaGetErrorString(err_));                           \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

// CHECKED-LABEL: void checked(
void checked(int n, int steps) {
  float *a, *b, *c;
  cudaMalloc(&a, n * sizeof(float));
  cudaMalloc(&b, n * sizeof(float));
  cudaMalloc(&c, n * sizeof(float));
  // CHECKED: for (int t = 0; t < steps; ++t) {
  for (int t = 0; t < steps; ++t) {
    // CHECKED: [[G:cudal1Graph[0-9]+]].launchSide([[S:cudal1Side[0-9]+]], project, {{.*}}, a, a, b, n);
    project<<<(n + 127) / 128, 128>>>(a, a, b, n);
    // CHECKED-NEXT: [[G]].launch(project, {{.*}}, a, a, c, n);
    project<<<(n + 127) / 128, 128>>>(a, a, c, n);
    // CHECKED-NEXT: CHECK(cudaGetLastError());
    CHECK(cudaGetLastError());
    // CHECKED-NEXT: [[G]].join([[S]]); [[G]].replay(0);
  }
}

// The side stream is joined after host code, outside the run of launches:
// the capture would end with the side stream still forked. Refused.
void unjoined(int n, int steps) {
  float *a, *b, *c;
  cudaMalloc(&a, n * sizeof(float));
  cudaMalloc(&b, n * sizeof(float));
  cudaMalloc(&c, n * sizeof(float));
  static Cudal1SideStream side;
  int count = 0;
  for (int t = 0; t < steps; ++t) {
    project<<<(n + 127) / 128, 128, 0, side.fork(0)>>>(a, a, b, n);
    project<<<(n + 127) / 128, 128>>>(a, a, c, n);
    ++count;
    side.join(0);
  }
}
// DECL: side stream 'cudal1Side{{[0-9]+}}' is declared between the launches (it would be created during the capture)
// UNJOINED: side stream 'side' is not joined back within the run of launches (the capture must end joined)
