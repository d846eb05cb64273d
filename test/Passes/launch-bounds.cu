// launch-bounds: __launch_bounds__(threads, min-blocks) from the largest
// constant block size among the kernel's launches in the file.
// RUN: cudal1-opt %s --plan '@scale: launch-bounds(threads=256, min-blocks=2); @tile: launch-bounds(threads=256, min-blocks=4); @tmpl: launch-bounds' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// RUN: cudal1-opt %s --list-transforms | FileCheck %s --check-prefix=SPACE
// Negative cases: each reason is reported and nothing is written.
// RUN: not cudal1-opt %s --plan '@scale: launch-bounds(threads=128)' -o %t.bad.cu 2>&1 | FileCheck %s --check-prefix=BELOW
// RUN: not test -e %t.bad.cu
// RUN: not cudal1-opt %s --plan '@dynamic: launch-bounds' 2>&1 | FileCheck %s --check-prefix=DYNAMIC
// RUN: not cudal1-opt %s --plan '@bounded: launch-bounds' 2>&1 | FileCheck %s --check-prefix=HAS
// RUN: not cudal1-opt %s --plan '@unlaunched: launch-bounds' 2>&1 | FileCheck %s --check-prefix=NOLAUNCH
// RUN: not cudal1-opt %s --plan '@scale: launch-bounds(threads=256, min-blocks=16)' 2>&1 | FileCheck %s --check-prefix=TOOMANY
// RUN: not cudal1-opt %s --plan '@scale: launch-bounds(blocks=2)' 2>&1 | FileCheck %s --check-prefix=PARAM

// Launched with 128 and 256 threads: the bound is 256.
// CHECK-LABEL: {{^}}__global__ void __launch_bounds__(256, 2) scale(float *x, float s, int n) {
__global__ void scale(float *x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= s;
}

// A dim3 variable initialised with constants: 16 x 16 = 256.
// CHECK-LABEL: {{^}}__global__ void __launch_bounds__(256, 4) tile(float *a, int w) {
__global__ void tile(float *a, int w) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  a[y * w + x] = 0.0f;
}

// A template: one attribute on the definition; defaults threads=largest, min-blocks=1.
// CHECK-LABEL: {{^}}template <int B> __global__ void __launch_bounds__(512, 1) tmpl(float *a) {
template <int B> __global__ void tmpl(float *a) { a[blockIdx.x * B + threadIdx.x] = 1.0f; }

// The block size comes from a run-time value.
__global__ void dynamic(float *a) { a[threadIdx.x] = 0.0f; }

// Already bounded.
__global__ void __launch_bounds__(128) bounded(float *a) { a[threadIdx.x] = 0.0f; }

// Never launched here.
__global__ void unlaunched(float *a) { a[threadIdx.x] = 0.0f; }

void run(float *x, int n, int threads) {
  scale<<<(n + 127) / 128, 128>>>(x, 2.0f, n);
  scale<<<(n + 255) / 256, 256>>>(x, 2.0f, n);
  dim3 block(16, 16);
  tile<<<dim3(4, 4), block>>>(x, 64);
  tmpl<256><<<n / 256, 256>>>(x);
  tmpl<512><<<n / 512, 512>>>(x);
  dynamic<<<1, threads>>>(x);
  bounded<<<1, 128>>>(x);
}
// SPACE-LABEL: kernel scale
// SPACE: launch-bounds(threads=256, min-blocks=1|2|4)
// SPACE-LABEL: kernel tmpl
// SPACE: launch-bounds(threads=512, min-blocks=1|2|4)
// BELOW: plan:1:9: error: step 1 (launch-bounds): threads=128 is below the block size 256 of launch #1 at kernel 'scale'
// DYNAMIC: not legal at kernel 'dynamic': the block size of launch #5 (threads) is not a compile-time constant
// HAS: not legal at kernel 'bounded': the kernel already has __launch_bounds__
// NOLAUNCH: not legal at kernel 'unlaunched': the kernel has no launch in this file, so its block size is unknown
// TOOMANY: threads * min-blocks = 4096 exceeds the 2048 resident threads of a multiprocessor
// PARAM: unknown parameter 'blocks'
