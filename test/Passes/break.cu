// break: the test-only faults (passes/Break.h). Without CUDAL1_TEST_TRANSFORMS=1
// the transform does not exist; with it, each kind rewrites what it says.
// RUN: not cudal1-opt %s --plan '@scale: break(kind=skip-work)' 2>&1 | FileCheck %s --check-prefix=HIDDEN
// RUN: cudal1-opt %s --list-transforms | FileCheck %s --check-prefix=UNLISTED
// RUN: env CUDAL1_TEST_TRANSFORMS=1 cudal1-opt %s --list-transforms | FileCheck %s --check-prefix=SPACE
// RUN: env CUDAL1_TEST_TRANSFORMS=1 cudal1-opt %s --plan '@scale: break(kind=off-by-one)' -o %t.obo.cu
// RUN: FileCheck %s --check-prefix=OBO < %t.obo.cu
// RUN: env CUDAL1_TEST_TRANSFORMS=1 cudal1-opt %s --plan '@scale: break(kind=partial-write)' -o %t.pw.cu
// RUN: FileCheck %s --check-prefix=PW < %t.pw.cu
// RUN: env CUDAL1_TEST_TRANSFORMS=1 cudal1-opt %s --plan '@scale: break(kind=skip-work)' -o %t.sw.cu
// RUN: FileCheck %s --check-prefix=SW < %t.sw.cu
// RUN: env CUDAL1_TEST_TRANSFORMS=1 cudal1-opt %s --plan '@sum: break(kind=race)' -o %t.race.cu
// RUN: FileCheck %s --check-prefix=RACE < %t.race.cu
// RUN: env CUDAL1_TEST_TRANSFORMS=1 cudal1-opt %s --plan '@scale: break(kind=side-stream)' -o %t.ss.cu
// RUN: FileCheck %s --check-prefix=SS < %t.ss.cu
// RUN: for f in obo pw sw race ss; do cudal1-clang++ -x cuda --cuda-gpu-arch=sm_90 -std=c++17 -fsyntax-only -Wall -Werror %t.$f.cu || exit 1; done
// RUN: not env CUDAL1_TEST_TRANSFORMS=1 cudal1-opt %s --plan '@scale: break(kind=race)' 2>&1 | FileCheck %s --check-prefix=NORACE
// RUN: not env CUDAL1_TEST_TRANSFORMS=1 cudal1-opt %s --plan '@reads: break(kind=skip-work)' 2>&1 | FileCheck %s --check-prefix=NOWRITE
// RUN: not env CUDAL1_TEST_TRANSFORMS=1 cudal1-opt %s --plan '@streamed: break(kind=side-stream)' 2>&1 | FileCheck %s --check-prefix=NOSIDE
#include <cstdio>

__global__ void scale(float *x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = x[i] * s;
}

__global__ void sum(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(out, x[i] * x[i]);
}

__global__ void reads(const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] < 0)
    printf("negative\n");
}

// Launched on a stream of its own: nothing for side-stream to move.
__global__ void streamed(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = 0.0f;
}

int main() {
  int n = 1 << 20;
  float *x, *out;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&out, sizeof(float));
  scale<<<(n + 255) / 256, 256>>>(x, 2.0f, n);
  sum<<<(n + 255) / 256, 256>>>(x, out, n);
  reads<<<(n + 255) / 256, 256>>>(x, n);
  cudaStream_t st;
  cudaStreamCreate(&st);
  streamed<<<(n + 255) / 256, 256, 0, st>>>(x, n);
  float h;
  cudaMemcpy(&h, out, 4, cudaMemcpyDeviceToHost);
  printf("%f\n", h);
}

// HIDDEN: step 1 (break): unknown transform
// UNLISTED-NOT: break(
// SPACE-LABEL: kernel scale
// SPACE: break(kind=off-by-one|partial-write|side-stream|skip-work)
// SPACE-LABEL: kernel sum
// SPACE: break(kind=race|side-stream|skip-work)
// SPACE-LABEL: kernel reads
// SPACE: - break: the kernel writes no global memory, so no fault would show
// OBO: x[(i) + 1] = x[i] * s;
// PW: ((threadIdx.x & 1) ? (void)0 : (void)(x[i] = x[i] * s));
// SW: if (cudal1_all > 1 && cudal1_t >= cudal1_all / 2)
// SW-NEXT: return;
// RACE: template <class T> __device__ T cudal1BreakRacyAdd(T *p, T v) {
// RACE: cudal1BreakRacyAdd(out, x[i] * x[i]);
// SS: __global__ void cudal1BreakDelay() {
// SS: static cudaStream_t cudal1BreakSideStream() {
// SS: cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
// SS: scale<<<(n + 255) / 256, 256, 0, cudal1BreakSideStream()>>>(x, 2.0f, n);
// SS-NEXT: sum<<<(n + 255) / 256, 256>>>(x, out, n);
// NORACE: kind=race has nothing to break in this kernel (it offers: off-by-one, partial-write, side-stream, skip-work)
// NOSIDE: kind=side-stream has nothing to break in this kernel (it offers: off-by-one, partial-write, skip-work)
// NOWRITE: the kernel writes no global memory, so no fault would show
