// unroll: _Pragma("unroll N") in front of the chosen loop, on its own line so
// that line numbers stay; loops with a hint already are not offered again.
// RUN: cudal1-opt %s --plan '@dot: unroll(loop=1, factor=4); @dot: unroll(loop=0, factor=2)' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// RUN: cudal1-opt %s --list-transforms | FileCheck %s --check-prefix=LIST
// RUN: not cudal1-opt %s --plan '@hinted: unroll(loop=0, factor=2)' 2>&1 | FileCheck %s --check-prefix=HINTED
// RUN: not cudal1-opt %s --plan '@flat: unroll(loop=0, factor=2)' 2>&1 | FileCheck %s --check-prefix=NOLOOP
// RUN: not cudal1-opt %s --plan '@dot: unroll(loop=7, factor=2)' 2>&1 | FileCheck %s --check-prefix=NOSUCH
// RUN: not cudal1-opt %s --plan '@dot: unroll(loop=0)' 2>&1 | FileCheck %s --check-prefix=MISSING
// The same loop twice conflicts: the second step sees the first one's hint.
// RUN: not cudal1-opt %s --plan '@dot: unroll(loop=0, factor=2); unroll(loop=0, factor=4)' 2>&1 | FileCheck %s --check-prefix=TWICE

// CHECK: /* cudal1-opt plan: @dot: unroll(loop=1, factor=4); unroll(loop=0, factor=2) */
// CHECK-LABEL: __global__ void dot(
// CHECK: _Pragma("unroll 2") for (int r = 0; r < rows; ++r) {
// CHECK: _Pragma("unroll 4") for (int k = 0; k < 64; ++k)
__global__ void dot(const float *a, const float *b, float *out, int rows) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int r = 0; r < rows; ++r) {
    float s = 0.0f;
    for (int k = 0; k < 64; ++k)
      s += a[r * 64 + k] * b[k * 1024 + i];
    out[r * 1024 + i] = s;
  }
}

__global__ void hinted(float *a, int n) {
#pragma unroll 4
  for (int k = 0; k < n; ++k)
    a[k] += 1.0f;
}

__global__ void flat(float *a) { a[threadIdx.x] = 0.0f; }

// LIST-LABEL: kernel dot
// LIST: unroll(loop=0|1, factor=2|4|8)
// LIST-LABEL: kernel hinted
// LIST: - unroll: every for loop already carries an unroll hint
// LIST-LABEL: kernel flat
// LIST: - unroll: the kernel has no loop
// HINTED: not legal at kernel 'hinted': every for loop already carries an unroll hint
// NOLOOP: not legal at kernel 'flat': the kernel has no loop
// NOSUCH: loop 7 is not a for loop without an unroll hint at kernel 'dot'
// MISSING: missing parameter factor=N
// TWICE: plan:1:{{[0-9]+}}: error: step 2 (unroll): loop 0 is not a for loop without an unroll hint at kernel 'dot'
