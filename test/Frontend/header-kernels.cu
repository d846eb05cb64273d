// A kernel defined in a header is found from every file that includes it,
// with the same key (its identity does not depend on the includer).
// RUN: cudal1-opt %s --analyze=text -- -x cuda -I%S/Inputs | FileCheck %s
// RUN: cudal1-opt %S/header-kernels-2.cu --analyze=text -- -x cuda -I%S/Inputs | FileCheck %s
#include "kernels.cuh"

// CHECK: kernel axpy  [[KEY:\[k[0-9a-f]+\]]]  {{.*}}kernels.cuh:3:17 (header)
// CHECK: write y[i]  stride_x=1
void first(const float *x, float *y, int n) { axpy<<<(n + 255) / 256, 256>>>(2.0f, x, y, n); }
