// fast-math: single-precision math calls become intrinsics; div=yes also
// rewrites float divisions into __fdividef.
// RUN: cudal1-opt %s --plan '@act: fast-math; @divs: fast-math(div=yes); @tmpl: fast-math' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// RUN: cudal1-opt %s --list-transforms=json | FileCheck %s --check-prefix=JSON
// Negative cases: each reason is reported and nothing is written.
// RUN: not cudal1-opt %s --plan '@nomath: fast-math' -o %t.bad.cu 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not test -e %t.bad.cu
// RUN: not cudal1-opt %s --plan '@macro: fast-math' 2>&1 | FileCheck %s --check-prefix=MACRO
// RUN: not cudal1-opt %s --plan '@tmpl: fast-math(div=yes)' 2>&1 | FileCheck %s --check-prefix=NODIV

#define EXP(x) expf(x)

// CHECK-LABEL: {{^}}__global__ void act(
// CHECK: {{^}}    y[i] = __expf(x[i]) + __logf(x[i] + 1.0f) * __sinf(x[i]) - __cosf(x[i]) + __tanf(x[i]);
// CHECK-NEXT: {{^}}    y[i] += __powf(x[i], 2.0f) + __exp10f(x[i]) + __log2f(x[i]) + __log10f(x[i]);
// Divisions stay without div=yes; sqrtf has no intrinsic here.
// CHECK-NEXT: {{^}}    y[i] = y[i] / 3.0f + sqrtf(y[i]);
__global__ void act(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = expf(x[i]) + logf(x[i] + 1.0f) * sinf(x[i]) - cosf(x[i]) + tanf(x[i]);
    y[i] += powf(x[i], 2.0f) + exp10f(x[i]) + log2f(x[i]) + log10f(x[i]);
    y[i] = y[i] / 3.0f + sqrtf(y[i]);
  }
}

// Nested and parenthesised float divisions; an int division and a mixed one stay.
// CHECK-LABEL: {{^}}__global__ void divs(
// CHECK: {{^}}    float a = __fdividef(__fdividef(__expf(x[i]), x[i + 1]), 2.0f);
// CHECK-NEXT: {{^}}    float b = __fdividef(x[i], (__fdividef(x[i + 1], x[i + 2])));
// CHECK-NEXT: {{^}}    float c = n / 2 + x[i] / n;
__global__ void divs(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i + 2 < n) {
    float a = expf(x[i]) / x[i + 1] / 2.0f;
    float b = x[i] / (x[i + 1] / x[i + 2]);
    float c = n / 2 + x[i] / n;
    y[i] = a + b + c;
  }
}

// A template instantiated with float and double: the division is float in
// only one instantiation, so div=yes is not offered; the expf call is replaced.
// CHECK-LABEL: {{^}}template <typename T> __global__ void tmpl(
// CHECK: {{^}}    y[i] = __expf(x[i]) + x[i] / y[i];
template <typename T> __global__ void tmpl(const T *x, T *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = expf(x[i]) + x[i] / y[i];
}

// No math call.
__global__ void nomath(float *y) { y[threadIdx.x] = y[threadIdx.x] / 2.0f; }

// The only call is inside a macro.
__global__ void macro(float *y) { y[threadIdx.x] = EXP(y[threadIdx.x]); }

void run(float *x, float *y, double *dx, double *dy, int n) {
  act<<<(n + 255) / 256, 256>>>(x, y, n);
  divs<<<(n + 255) / 256, 256>>>(x, y, n);
  tmpl<<<(n + 255) / 256, 256>>>(x, y, n);
  tmpl<<<(n + 255) / 256, 256>>>(dx, dy, n);
  nomath<<<1, 32>>>(y);
  macro<<<1, 32>>>(y);
}
// JSON: "fast_math": true,
// JSON-NEXT: "legal": true,
// JSON-NEXT: "name": "fast-math",
// JSON-NEXT: "params": [
// JSON-NEXT: {
// JSON-NEXT: "name": "div",
// JSON-NEXT: "values": [
// JSON-NEXT: "no",
// JSON-NEXT: "yes"
// NONE: not legal at kernel 'nomath': the kernel calls none of expf, logf, sinf, cosf, tanf, powf, exp10f, log2f, log10f
// MACRO: not legal at kernel 'macro': every single-precision math call is written inside a macro or does not resolve to the CUDA library function
// NODIV: parameter div=yes is not one of {no} at kernel 'tmpl'
