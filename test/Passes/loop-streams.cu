// loop-streams: the iterations of a loop of one launch over independent
// buffers go to side streams (iteration i on stream i % S), forked before
// the loop and joined right after it.
// RUN: cudal1-opt %s --list-transforms | FileCheck %s --check-prefix=LIST
// RUN: cudal1-opt %s --plan '@loop#1: loop-streams(streams=2); @loop#2: loop-streams(streams=4); @loop#4: loop-streams' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -o %t.exe %t.cu %}
// Negative cases: each reason is reported and nothing is written.
// RUN: not cudal1-opt %s --plan '@loop#6: loop-streams' -o %t.bad.cu 2>&1 | FileCheck %s --check-prefix=SAME
// RUN: not test -e %t.bad.cu
// RUN: not cudal1-opt %s --plan '@loop#7: loop-streams' 2>&1 | FileCheck %s --check-prefix=OFFSET
// RUN: not cudal1-opt %s --plan '@loop#8: loop-streams' 2>&1 | FileCheck %s --check-prefix=NEXT
// RUN: not cudal1-opt %s --plan '@loop#9: loop-streams' 2>&1 | FileCheck %s --check-prefix=INDEX
// RUN: not cudal1-opt %s --plan '@loop#10: loop-streams' 2>&1 | FileCheck %s --check-prefix=TWO
// RUN: not cudal1-opt %s --plan '@loop#11: loop-streams' 2>&1 | FileCheck %s --check-prefix=BODY
// RUN: not cudal1-opt %s --plan '@loop#13: loop-streams' 2>&1 | FileCheck %s --check-prefix=READ
// RUN: not cudal1-opt %s --plan '@loop#15: loop-streams' 2>&1 | FileCheck %s --check-prefix=ALIASED
// RUN: not cudal1-opt %s --plan '@loop#16: loop-streams' 2>&1 | FileCheck %s --check-prefix=WHILE
// RUN: not cudal1-opt %s --plan '@loop#1: loop-streams(streams=3)' 2>&1 | FileCheck %s --check-prefix=PARAM
#include <cstdio>
#include <cuda_runtime.h>

__global__ void rowsum(const float *A, float *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = 0.0f;
    for (int c = 0; c < cols; ++c)
      s += A[r * cols + c];
    out[r] = s;
  }
}

__global__ void scale(float *x, float f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= f;
}

#define CHECK_LAUNCH()                                                                             \
  do {                                                                                             \
    cudaError_t e = cudaGetLastError();                                                            \
    if (e != cudaSuccess)                                                                          \
      printf("error %s\n", cudaGetErrorString(e));                                                 \
  } while (0)

// CHECK: struct Cudal1SideStream {
// CHECK-LABEL: void spread(
void spread(int rows, int cols, cudaStream_t st, bool again) {
  float *A[4], *out[4];
  float *x = nullptr;
  cudaMalloc(&x, rows * sizeof(float));
  for (int k = 0; k < 4; ++k) {
    cudaMalloc(&A[k], rows * cols * sizeof(float));
    cudaMalloc((void **)&out[k], rows * sizeof(float));
  }
  // The issue's shape: a braceless body.
  // CHECK: static Cudal1SideStream [[S:cudal1Iter[0-9]+]]Streams[2];  // cudal1 loop-streams: iteration i on stream i % 2
  // CHECK-NEXT: unsigned [[S]] = 0;
  // CHECK-NEXT: [[S]]Streams[0].fork(0); [[S]]Streams[1].fork(0);
  // CHECK-NEXT: for (int k = 0; k < 4; ++k)
  // CHECK-NEXT: rowsum<<<(rows + 127) / 128, 128, 0, [[S]]Streams[[[S]]++ % 2].stream>>>(A[k], out[k], rows, cols);
  // CHECK-NEXT: [[S]]Streams[0].join(0); [[S]]Streams[1].join(0);  /* cudal1 loop-streams: join */
  // CHECK-NEXT: cudaDeviceSynchronize();
  for (int k = 0; k < 4; ++k)
    rowsum<<<(rows + 127) / 128, 128>>>(A[k], out[k], rows, cols);
  cudaDeviceSynchronize();
  // A block with an error check, on a stream variable; in place (x[i] *= f
  // on out[k], its own buffer in each iteration), reading a fresh buffer.
  // CHECK: static Cudal1SideStream [[T:cudal1Iter[0-9]+]]Streams[4];  // cudal1 loop-streams: iteration i on stream i % 4
  // CHECK: [[T]]Streams[0].fork(st); [[T]]Streams[1].fork(st); [[T]]Streams[2].fork(st); [[T]]Streams[3].fork(st);
  // CHECK-NEXT: for (int k = 3; k >= 0; k -= 1) {
  // CHECK-NEXT: scale<<<(rows + 255) / 256, 256, 0, [[T]]Streams[[[T]]++ % 4].stream>>>(out[k], 0.5f, rows);
  // CHECK-NEXT: CHECK_LAUNCH();
  // CHECK-NEXT: }
  // CHECK-NEXT: [[T]]Streams[0].join(st); [[T]]Streams[1].join(st); [[T]]Streams[2].join(st); [[T]]Streams[3].join(st);  /* cudal1 loop-streams: join */
  for (int k = 3; k >= 0; k -= 1) {
    scale<<<(rows + 255) / 256, 256, 0, st>>>(out[k], 0.5f, rows);
    CHECK_LAUNCH();
  }
  // (loop #3 launches nothing.) A loop that is the braceless body of an if gets braces.
  for (int k = 0; k < 4; ++k)
    cudaMemset(out[k], 0, rows * sizeof(float));
  // CHECK: if (again)
  // CHECK-NEXT: { static Cudal1SideStream [[U:cudal1Iter[0-9]+]]Streams[2];
  // CHECK: for (int k = 0; k < 4; k++) rowsum<<<(rows + 127) / 128, 128, 0, [[U]]Streams[[[U]]++ % 2].stream>>>(A[k], out[k], rows, x == nullptr ? 1 : cols);
  // CHECK-NEXT: [[U]]Streams[0].join(0); [[U]]Streams[1].join(0);  /* cudal1 loop-streams: join */ }
  if (again)
    for (int k = 0; k < 4; k++) rowsum<<<(rows + 127) / 128, 128>>>(A[k], out[k], rows, x == nullptr ? 1 : cols);
  cudaDeviceSynchronize();
}

void refused(int rows, int cols, const float *w, float *param) {
  float *A[4], *out[4], *B[4];
  float *one = nullptr, *flat = nullptr;
  cudaMalloc(&one, rows * sizeof(float));
  cudaMalloc(&flat, 4 * rows * sizeof(float));
  for (int k = 0; k < 4; ++k) {
    cudaMalloc(&A[k], rows * cols * sizeof(float));
    cudaMalloc(&out[k], rows * sizeof(float));
    B[k] = param + k * rows;
  }
  // Every iteration writes the same buffer.
  for (int k = 0; k < 4; ++k)
    rowsum<<<1, 128>>>(A[k], one, rows, cols);
  // Offsets into one buffer: not proved disjoint.
  for (int k = 0; k < 4; ++k)
    rowsum<<<1, 128>>>(A[k], flat + k * rows, rows, cols);
  // Iteration k reads the buffer iteration k + 1 writes.
  for (int k = 0; k < 3; ++k)
    rowsum<<<1, 128>>>(out[k + 1], out[k], rows, 1);
  // Not indexed by the counter.
  for (int k = 0; k < 4; ++k)
    rowsum<<<1, 128>>>(A[k], out[0], rows, cols);
  // Two launches.
  for (int k = 0; k < 4; ++k) {
    rowsum<<<1, 128>>>(A[k], out[k], rows, cols);
    scale<<<1, 128>>>(out[k], 2.0f, rows);
  }
  // Host work in the body.
  for (int k = 0; k < 4; ++k) {
    rowsum<<<1, 128>>>(A[k], out[k], rows, cols);
    cols = cols + 1;
  }
  // (loop #12 launches nothing.) A read of a parameter pointer: it may be one of the outputs.
  for (int k = 0; k < 4; ++k)
    cudaMemset(out[k], 0, rows * sizeof(float));
  for (int k = 0; k < 4; ++k)
    rowsum<<<1, 128>>>(w, out[k], rows, 1);
  // (loop #14 launches nothing.) B's elements are offsets into a parameter.
  for (int k = 0; k < 4; ++k)
    cudaMemset(out[k], 0, rows * sizeof(float));
  for (int k = 0; k < 4; ++k)
    scale<<<1, 128>>>(B[k], 2.0f, rows);
  // No counter.
  int k = 0;
  while (k < 4)
    scale<<<1, 128>>>(out[k], 2.0f, rows);
}

int main() {
  spread(256, 64, 0, true);
  return 0;
}

// LIST: loop #1 in spread
// LIST-NEXT: graph
// LIST-NEXT: loop-streams(streams=2|4)
// LIST: loop #6 in refused
// LIST-NEXT: graph
// LIST-NEXT: - loop-streams: every iteration writes through 'one' (the same buffer)
// SAME: every iteration writes through 'one' (the same buffer)
// OFFSET: the kernel writes through 'flat + k * rows', an offset into one buffer: that the iterations' elements are disjoint is not proved
// NEXT: the kernel reads 'out[k + 1]', an element of an array another iteration writes
// INDEX: the kernel writes through 'out[0]', not indexed by the loop's counter 'k'
// TWO: the loop holds 2 launches (loop-streams spreads the iterations of one launch)
// BODY: the loop's body holds a statement other than the launch and error checks (line
// READ: the kernel reads 'w', not known to be distinct from the buffers the iterations write
// ALIASED: the elements of 'B' are not known to be distinct allocations: an element is assigned something other than an allocation
// WHILE: the loop's counter is not known
// PARAM: parameter streams=3 is not one of {2, 4}
