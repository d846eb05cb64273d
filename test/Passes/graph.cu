// graph: the launches of a host loop are captured once as a CUDA graph and
// replayed; arguments that change per iteration (a pointer swap, an offset)
// update the executable graph's kernel nodes.
// RUN: cudal1-opt %s --list-transforms | FileCheck %s --check-prefix=LIST
// RUN: cudal1-opt %s --plan '@loop#0: graph; @loop#1: graph; @loop#2: graph' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// Negative cases: each reason is reported and nothing is written.
// RUN: not cudal1-opt %s --plan '@loop#3: graph' -o %t.bad.cu 2>&1 | FileCheck %s --check-prefix=HOSTREAD
// RUN: not test -e %t.bad.cu
// RUN: not cudal1-opt %s --plan '@loop#4: graph' 2>&1 | FileCheck %s --check-prefix=COND
// RUN: not cudal1-opt %s --plan '@loop#5: graph' 2>&1 | FileCheck %s --check-prefix=COPY
// RUN: not cudal1-opt %s --plan '@loop#6: graph' 2>&1 | FileCheck %s --check-prefix=SPLIT
// RUN: not cudal1-opt %s --plan '@#0: graph' 2>&1 | FileCheck %s --check-prefix=SCOPE
#include <cstdio>
#include <cstdlib>
#include <utility>

#define CHECK(call)                                                                \
  do {                                                                             \
    cudaError_t err_ = (call);                                                     \
    if (err_ != cudaSuccess) {                                                     \
      fprintf(stderr, "%s\n", cudaGetErrorString(err_));                           \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

__global__ void stencil(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1)
    out[i] = 0.25f * in[i - 1] + 0.5f * in[i] + 0.25f * in[i + 1];
}

__global__ void project(const float *in, const float *w, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] * w[i];
}

template <typename T> __global__ void axpy(T a, const T *x, T *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] += a * x[i];
}

// A pointer swap after the launch: each iteration updates the node's arguments.
// CHECK: class Cudal1GraphLoop {
// CHECK-LABEL: void jacobi(
void jacobi(float *a, float *b, int n, int steps) {
  // CHECK: Cudal1GraphLoop [[G0:cudal1Graph[0-9]+]];  // cudal1 graph
  // CHECK-NEXT: for (int s = 0; s < steps; ++s) {
  for (int s = 0; s < steps; ++s) {
    // CHECK-NEXT: [[G0]].launch(stencil, (n + 255) / 256, 256, 0, a, b, n); [[G0]].replay(0);
    stencil<<<(n + 255) / 256, 256>>>(a, b, n);
    // CHECK-NEXT: std::swap(a, b);
    std::swap(a, b);
  }
  CHECK(cudaDeviceSynchronize());
}

// An offset per step, a template kernel, a sync after the run, a stream.
// CHECK-LABEL: void sequence(
void sequence(const float *x, const float *w, float *g, float *h, int n, int steps,
              cudaStream_t st) {
  // CHECK: Cudal1GraphLoop [[G1:cudal1Graph[0-9]+]];  // cudal1 graph
  for (int t = 0; t < steps; ++t) {
    // CHECK: [[G1]].launch(project, (n + 127) / 128, 128, 0, x + (size_t)t * n, w, g, n);
    project<<<(n + 127) / 128, 128, 0, st>>>(x + (size_t)t * n, w, g, n);
    // CHECK-NEXT: CHECK(cudaGetLastError());
    CHECK(cudaGetLastError());
    // CHECK-NEXT: [[G1]].launch(axpy<float>, (n + 127) / 128, 128, 0, 0.5f, g, h, n); [[G1]].replay(st);
    axpy<float><<<(n + 127) / 128, 128, 0, st>>>(0.5f, g, h, n);
    // CHECK-NEXT: CHECK(cudaStreamSynchronize(st));
    CHECK(cudaStreamSynchronize(st));
  }
}

// An unbraced body gets braces.
// CHECK-LABEL: void repeat(
void repeat(float *x, float *y, int n, int reps) {
  // CHECK: for (int r = 0; r < reps; ++r)
  // CHECK-NEXT: { [[G2:cudal1Graph[0-9]+]].launch(axpy<float>, (n + 255) / 256, 256, 0, 2.0f, x, y, n); [[G2]].replay(0); }
  for (int r = 0; r < reps; ++r)
    axpy<float><<<(n + 255) / 256, 256>>>(2.0f, x, y, n);
}

// The host reads managed memory in the loop: refused.
void managed(float *m, float *o, int n, int steps) {
  for (int s = 0; s < steps; ++s) {
    stencil<<<(n + 255) / 256, 256>>>(m, o, n);
    cudaDeviceSynchronize();
    m[0] = o[1];
  }
}

// A launch under a condition: not the same kernels every iteration.
void conditional(float *a, float *b, int n, int steps) {
  for (int s = 0; s < steps; ++s) {
    stencil<<<(n + 255) / 256, 256>>>(a, b, n);
    if (s % 2)
      stencil<<<(n + 255) / 256, 256>>>(b, a, n);
  }
}

// A device-to-host copy drives the loop: refused.
void converge(float *a, float *b, int n) {
  float delta = 1;
  while (delta > 1e-3f) {
    stencil<<<(n + 255) / 256, 256>>>(a, b, n);
    cudaMemcpy(&delta, b, sizeof(float), cudaMemcpyDeviceToHost);
  }
}

// Host work between the launches that feeds the next launch's arguments.
void offsets(float *a, float *b, int n, int steps) {
  for (int s = 0; s < steps; ++s) {
    int off = s;
    stencil<<<(n + 255) / 256, 256>>>(a + off, b, n);
    off += 1;
    stencil<<<(n + 255) / 256, 256>>>(a + off, b, n);
  }
}
// LIST: loop #0 in jacobi {{.*}}graph.cu:{{[0-9]+}}:3  launches #0
// LIST-NEXT: graph
// LIST: loop #3 in managed {{.*}}  launches #4
// LIST-NEXT: - graph: the loop reads device data on the host: reads or writes device buffer 'm' on the host
// HOSTREAD: step 1 (graph): not legal at host loop #3 ({{.*}}graph.cu:{{[0-9]+}}:3): the loop reads device data on the host: reads or writes device buffer 'm' on the host
// COND: launch #6 is not a statement of the loop body (conditional, nested or inside an expression)
// COPY: the loop reads device data on the host: copies device data to the host (cudaMemcpy)
// SPLIT: the launches are not one run: line {{[0-9]+}} between them does more than check errors
// SCOPE: applies to a host loop: scope it with @loop#id
