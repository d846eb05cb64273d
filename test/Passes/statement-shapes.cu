// Statements as people write them (issue 18): launches, loops and copies
// that are the braceless body of a for, while, if or else, launches in a
// macro's argument or inside an expression, dim3 built inline. A pass that
// puts statements around its target gives a braceless body braces
// (lib/Rewrite/HostCode.h, makeRoomAround); where it cannot rewrite, it
// says precisely why.
// RUN: cudal1-opt %s --list-transforms -- -x cuda | FileCheck %s --check-prefix=LIST
//
// library: the sum's two statements inside the braceless for, then and else.
// RUN: cudal1-opt %s --plan '@#0: library; @#1: library' -o %t.lib.cu -- -x cuda
// RUN: grep -v "^ *// [A-Z-]*:" %t.lib.cu | FileCheck %s --check-prefix=LIB
// RUN: %if nvcc && cub %{ nvcc -arch=sm_90 -c -o %t.lib.o %t.lib.cu %}
//
// graph: the captured loop is the braceless body of an outer loop; its
// declaration goes inside that body, so the outer loop gets braces.
// RUN: cudal1-opt %s --plan '@loop#4: graph' -o %t.graph.cu -- -x cuda
// RUN: grep -v "^ *// [A-Z-]*:" %t.graph.cu | FileCheck %s --check-prefix=GRAPH
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.graph.o %t.graph.cu %}
//
// Launch configurations: dim3 built inline, a launch that is a macro's
// argument (its text is the file's).
// RUN: cudal1-opt %s --plan '@#3: launch-config(block=128); @#6: launch-config(block=128)' \
// RUN:   -o %t.config.cu -- -x cuda
// RUN: grep -v "^ *// [A-Z-]*:" %t.config.cu | FileCheck %s --check-prefix=CONFIG
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.config.o %t.config.cu %}
//
// The refusals, each with its reason; nothing is written.
// RUN: not cudal1-opt %s --plan '@#8: launch-config(block=128)' -- -x cuda 2>&1 | FileCheck %s --check-prefix=MACRO-BODY
// RUN: not cudal1-opt %s --plan '@#9: coarsen(factor=2)' -- -x cuda 2>&1 | FileCheck %s --check-prefix=MACRO-GRID
// RUN: not cudal1-opt %s --plan '@#0: streams' -o %t.bad.cu -- -x cuda 2>&1 \
// RUN:   | FileCheck %s --check-prefix=STREAMS-FOR
// RUN: not test -e %t.bad.cu
// RUN: not cudal1-opt %s --plan '@#6: library' -- -x cuda 2>&1 | FileCheck %s --check-prefix=MACRO-ARG
// RUN: not cudal1-opt %s --plan '@#7: library' -- -x cuda 2>&1 | FileCheck %s --check-prefix=OPERAND
// RUN: not cudal1-opt %s --plan '@copy#0: async-copy' -- -x cuda 2>&1 | FileCheck %s --check-prefix=COPY
#include <cstdio>
#include <cuda_runtime.h>

#define GRID(n) (((n) + 255) / 256)
#define LAUNCH_SCALE(p) scale<<<GRID(n), 256>>>(p, 2.0f, n)
#define TIMED(...)                                                                                 \
  do {                                                                                             \
    __VA_ARGS__;                                                                                   \
  } while (0)

__global__ void total(const float *a, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(out, a[i]);
}

__global__ void scale(float *a, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    a[i] *= s;
}

// LIB-LABEL: int main(
// GRAPH-LABEL: int main(
// CONFIG-LABEL: int main(
int main() {
  const int n = 1 << 20, parts = 4;
  float *A[4], *out, *x;
  for (int k = 0; k < parts; ++k)
    cudaMalloc(&A[k], n * sizeof(float));
  cudaMalloc(&out, parts * sizeof(float));
  cudaMalloc(&x, n * sizeof(float));
  // LIB: cudaMalloc(&x, n * sizeof(float));
  // LIB-NEXT: for (int k = 0; k < parts; ++k)
  // LIB-NEXT: { static Cudal1CubScratch [[C0:cudal1Cub[0-9]+]];  // cudal1 library
  // LIB-NEXT: cudal1SumInto([[C0]], A[k], n, out + k, Cudal1AsOut<float>(), 0); /* cudal1 library: was total<<<...>>> */ }
  for (int k = 0; k < parts; ++k)
    total<<<(n + 255) / 256, 256>>>(A[k], out + k, n);
  // LIB: if (n > 1000)
  // LIB-NEXT: { static Cudal1CubScratch [[C1:cudal1Cub[0-9]+]];  // cudal1 library
  // LIB-NEXT: cudal1SumInto([[C1]], x, n, out, Cudal1AsOut<float>(), 0); /* cudal1 library: was total<<<...>>> */ }
  // LIB-NEXT: else
  // LIB-NEXT: scale<<<(n + 255) / 256, 256>>>(x, 0.5f, n);
  if (n > 1000)
    total<<<(n + 255) / 256, 256>>>(x, out, n);
  else
    scale<<<(n + 255) / 256, 256>>>(x, 0.5f, n);
  int r = 0;
  // CONFIG: while (r++ < 2)
  // CONFIG-NEXT: scale<<<dim3((dim3(dim3((n + 255) / 256)).x * dim3(dim3(256)).x + 127) / 128, {{.*}}), dim3(128, 1, 1)>>>(x, 2.0f, n);
  while (r++ < 2)
    scale<<<dim3((n + 255) / 256), dim3(256)>>>(x, 2.0f, n);
  // GRAPH: for (int rep = 0; rep < 2; ++rep)
  // GRAPH-NEXT: { Cudal1GraphLoop [[G:cudal1Graph[0-9]+]];  // cudal1 graph
  // GRAPH-NEXT: for (int it = 0; it < 10; ++it) {
  // GRAPH-NEXT: [[G]].launch(scale, (n + 255) / 256, 256, 0, x, 1.0f, n);
  // GRAPH-NEXT: [[G]].launch(scale, dim3((n + 255) / 256, 1, 1), dim3(256, 1, 1), 0, A[0], 1.0f, n); [[G]].replay(0);
  // GRAPH-NEXT: } }
  for (int rep = 0; rep < 2; ++rep)
    for (int it = 0; it < 10; ++it) {
      scale<<<(n + 255) / 256, 256>>>(x, 1.0f, n);
      scale<<<dim3((n + 255) / 256, 1, 1), dim3(256, 1, 1)>>>(A[0], 1.0f, n);
    }
  // CONFIG: TIMED(total<<<(unsigned)(((size_t)((n + 255) / 256) * (256) + 127) / 128), 128>>>(x, out, n));
  TIMED(total<<<(n + 255) / 256, 256>>>(x, out, n));
  cudaError_t e = (total<<<(n + 255) / 256, 256>>>(x, out, n), cudaGetLastError());
  LAUNCH_SCALE(x);
  scale<<<GRID(n), 256>>>(x, 2.0f, n);
  cudaDeviceSynchronize();
  float h[4] = {0, 0, 0, 0};
  if (e == cudaSuccess)
    cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  printf("%f\n", h[0]);
  return 0;
}

// LIST-LABEL: launch #0 total
// LIST: library
// LIST: - streams: the launch is the body of a for loop written without braces: no launch follows it there
// LIST-LABEL: launch #1 total
// LIST: library
// LIST: - streams: the launch is the then branch of an if written without braces: no launch follows it there
// LIST-LABEL: launch #2 scale
// LIST: launch-config(block=
// LIST: - streams: the launch is the else branch of an if written without braces: no launch follows it there
// LIST-LABEL: launch #3 scale
// LIST: launch-config(block=
// LIST: - streams: the launch is the body of a while loop written without braces: no launch follows it there
// LIST-LABEL: launch #6 total
// LIST: - library: the launch is an argument of macro TIMED (the macro's expansion, not the file, decides what surrounds it)
// LIST: - streams: the launch is an argument of macro TIMED
// LIST-LABEL: launch #7 total
// LIST: - library: the launch is an operand of a larger expression
// LIST: - streams: the launch is an operand of a larger expression
// LIST-LABEL: loop #4 in main
// LIST-NEXT: graph
// LIST-LABEL: copy #0 cudaMemcpy
// LIST-NEXT: - async-copy: the copy is the then branch of an if written without braces: no launch follows it there

// STREAMS-FOR: error: step 1 (streams): not legal at launch site #0 ({{.*}}statement-shapes.cu:{{[0-9]+}}:5): the launch is the body of a for loop written without braces: no launch follows it there
// MACRO-ARG: error: step 1 (library): not legal at launch site #6 ({{.*}}): the launch is an argument of macro TIMED
// OPERAND: error: step 1 (library): not legal at launch site #7 ({{.*}}): the launch is an operand of a larger expression
// MACRO-BODY: error: step 1 (launch-config): not legal at launch site #8 ({{.*}}): the grid of launch #8 is written inside macro GRID ({{.*}}statement-shapes.cu:{{[0-9]+}}); cudal1 does not edit macro expansions
// MACRO-GRID: error: step 1 (coarsen): not legal at launch site #9 ({{.*}}): the grid of launch #9 is written inside macro GRID ({{.*}}statement-shapes.cu:{{[0-9]+}}); cudal1 does not edit macro expansions
// COPY: error: step 1 (async-copy): not legal at host copy #0: the copy is the then branch of an if written without braces
