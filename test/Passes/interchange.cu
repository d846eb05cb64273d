// interchange: the two loops of a perfect nest trade headers when the inner
// loop then walks more accesses at unit stride; the body stays as written.
// RUN: cudal1-opt %s --plan '@scaleBatch: interchange(loop=0); @total: interchange(loop=0)' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | %FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// RUN: cudal1-opt %s --list-transforms | %FileCheck %s --check-prefix=LIST
// Negative cases: each reason is reported and nothing is written.
// RUN: not cudal1-opt %s --plan '@prefix: interchange(loop=0)' -o %t.bad.cu 2>&1 | %FileCheck %s --check-prefix=DEP
// RUN: not test -e %t.bad.cu
// RUN: not cudal1-opt %s --plan '@rowMajor: interchange(loop=0)' 2>&1 | %FileCheck %s --check-prefix=NOGAIN
// RUN: not cudal1-opt %s --plan '@tri: interchange(loop=0)' 2>&1 | %FileCheck %s --check-prefix=TRI
// RUN: not cudal1-opt %s --plan '@last: interchange(loop=0)' 2>&1 | %FileCheck %s --check-prefix=SCALAR
// RUN: not cudal1-opt %s --plan '@imperfect: interchange(loop=0)' 2>&1 | %FileCheck %s --check-prefix=IMPERFECT
// RUN: not cudal1-opt %s --plan '@early: interchange(loop=0)' 2>&1 | %FileCheck %s --check-prefix=BREAK
// RUN: not cudal1-opt %s --plan '@alias: interchange(loop=0)' 2>&1 | %FileCheck %s --check-prefix=ALIAS
// RUN: not cudal1-opt %s --plan '@scaleBatch: interchange(loop=1)' 2>&1 | %FileCheck %s --check-prefix=INNER

// One matrix per block, scaled column by column: after the interchange the
// inner loop walks a row (stride 1 instead of cols).
// CHECK-LABEL: {{^}}__global__ void scaleBatch(
// CHECK-NEXT: {{^}}  int b = blockIdx.x;
// CHECK-NEXT: {{^}}  for (int r = 0; r < rows; ++r)
// CHECK-NEXT: {{^}}    for (int c = 0; c < cols; ++c)
// CHECK-NEXT: {{^}}      out[b * rows * cols + r * cols + c] = s * in[b * rows * cols + r * cols + c];
__global__ void scaleBatch(const float *in, float *out, int rows, int cols, float s) {
  int b = blockIdx.x;
  for (int c = 0; c < cols; ++c)
    for (int r = 0; r < rows; ++r)
      out[b * rows * cols + r * cols + c] = s * in[b * rows * cols + r * cols + c];
}

// A reduction into a scalar may run in another order; braces stay in place.
// CHECK-LABEL: {{^}}__global__ void total(
// CHECK: {{^}}    for (int r = 0; r < rows; ++r) {
// CHECK-NEXT: {{^}}      for (int c = 0; c < cols; ++c) {
// CHECK-NEXT: {{^}}        float v = a[(t * rows + r) * cols + c];
// CHECK-NEXT: {{^}}        s += v * v;
__global__ void total(const float *a, float *out, int batch, int rows, int cols) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < batch) {
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) {
      for (int r = 0; r < rows; ++r) {
        float v = a[(t * rows + r) * cols + c];
        s += v * v;
      }
    }
    out[t] = s;
  }
}

// DEP: not legal at kernel 'prefix': a is stored to and accessed at different indices in the loop body (line {{[0-9]+}}): iterations may depend on each other
__global__ void prefix(float *a, int rows, int cols) {
  for (int c = 0; c < cols; ++c)
    for (int r = 1; r < rows; ++r)
      a[r * cols + c] = a[(r - 1) * cols + c] + 1.0f;
}

// NOGAIN: not legal at kernel 'rowMajor': interchanging loops 0 and 1 makes 0 access(es) unit-stride in the inner loop and 2 no longer: no gain
__global__ void rowMajor(const float *in, float *out, int rows, int cols) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      out[r * cols + c] = in[r * cols + c];
}

// TRI: not legal at kernel 'tri': the bounds of loop 1 depend on 'c', the counter of loop 0 (not a rectangular nest)
__global__ void tri(float *out, int n) {
  for (int c = 0; c < n; ++c)
    for (int r = c; r < n; ++r)
      out[r * n + c] = 0.0f;
}

// SCALAR: not legal at kernel 'last': 'v' is assigned in the loop body and is not a reduction (v += ...)
__global__ void last(const float *in, float *out, int rows, int cols) {
  float v = 0.0f;
  for (int c = 0; c < cols; ++c)
    for (int r = 0; r < rows; ++r)
      v = in[r * cols + c];
  out[0] = v;
}

// IMPERFECT: not legal at kernel 'imperfect': loop 0 is not perfectly nested: its body holds more than one for loop
__global__ void imperfect(float *out, int rows, int cols) {
  for (int c = 0; c < cols; ++c) {
    out[c] = 0.0f;
    for (int r = 0; r < rows; ++r)
      out[r * cols + c] = 1.0f;
  }
}

// BREAK: not legal at kernel 'early': the loop body contains a break, continue, return or goto
__global__ void early(float *out, int rows, int cols) {
  for (int c = 0; c < cols; ++c)
    for (int r = 0; r < rows; ++r) {
      if (out[r * cols + c] < 0.0f)
        break;
      out[r * cols + c] = 1.0f;
    }
}

// ALIAS: not legal at kernel 'alias': out is stored to and in is read in the loop body, and nothing shows they do not alias
__global__ void alias(const float *in, float *out, int rows, int cols) {
  for (int c = 0; c < cols; ++c)
    for (int r = 0; r < rows; ++r)
      out[r * cols + c] = in[c * rows + r] + in[r * cols + c];
}

// INNER: error: step 1 (interchange): loop 1 is not perfectly nested: its body is not a single for loop

// LIST-LABEL: kernel scaleBatch
// LIST: {{^}}  interchange(loop=0){{$}}
// LIST-LABEL: kernel total
// LIST: {{^}}  interchange(loop=0){{$}}
// LIST-LABEL: kernel prefix

void host(float *x, float *y, int b, int r, int c) {
  scaleBatch<<<b, 1>>>(x, y, r, c, 2.0f);
  total<<<(b + 255) / 256, 256>>>(x, y, b, r, c);
  alias<<<1, 1>>>(x, x, r, c);
}
