// The double reference (docs/Reference.md): float locals, parameters,
// casts, typedefs and literals become double in a copy of the kernel named
// <kernel>_ref with C linkage; the original stays as it was.
// RUN: cudal1-opt %s --reference scale -o %t.cu 2>&1 | FileCheck %s --check-prefix=NOTE
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o /dev/null %t.cu %}
// RUN: cudal1-opt %s --reference plain -o %t.plain.cu 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: grep -v "^ *// [A-Z-]*:" %t.plain.cu | FileCheck %s --check-prefix=PLAIN-SRC
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o /dev/null %t.plain.cu %}

#define EPS 1e-6f
#define REAL float
#define TWICE(x) ((x) * 2.0f)
typedef float real;

// The first line names the entry, the manifest's args and the reductions.
// CHECK: {{^}}/* cudal1 reference of 'scale': entry scale_ref; args f32* f32* f32 i32; reductions none */ // The double reference (docs/Reference.md): float locals, parameters,
// The original is unchanged.
// CHECK: {{^}}__global__ void scale(const float *x, float *y, float alpha, int n) {
// CHECK: {{^}}    float a = x[i] * alpha + EPS;
__global__ void scale(const float *x, float *y, float alpha, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float a = x[i] * alpha + EPS;
    real b = (float)i * 0.5f + static_cast<float>(a) + float(n);
    REAL c = TWICE(a) + 1.f + 2.5e-1F + 3.0;
    y[i] = a + b + c;
  }
}
// The copy at the end: every float spelled in it is double, whole-macro
// float types and literals too; a literal inside a larger macro keeps its
// float value (a note says so).
// CHECK-LABEL: // --- cudal1: the double reference of 'scale'
// CHECK-NEXT: {{^}}extern "C" __global__ void __launch_bounds__(1024) scale_ref(const double *x, double *y, double alpha, int n) {
// CHECK-NEXT: {{^}}  int i = blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT: {{^}}  if (i < n) {
// CHECK-NEXT: {{^}}    double a = x[i] * alpha + 1e-6;
// CHECK-NEXT: {{^}}    double b = (double)i * 0.5 + static_cast<double>(a) + double(n);
// CHECK-NEXT: {{^}}    double c = TWICE(a) + 1. + 2.5e-1 + 3.0;
// CHECK-NEXT: {{^}}    y[i] = a + b + c;
// NOTE: note: {{.*}}reference-locals.cu:[[@LINE-15]]:{{[0-9]+}}: the float literal 2.0f inside macro 'TWICE' keeps its float value

// No float at all: the copy is the kernel itself.
// PLAIN: note: nothing to promote: the reference computes what the kernel does
// PLAIN-SRC: {{^}}extern "C" __global__ void __launch_bounds__(1024) plain_ref(int *y) { y[threadIdx.x] = 1; }
__global__ void plain(int *y) { y[threadIdx.x] = 1; }

// A static kernel loses `static` in its copy (C linkage); its own launch
// bounds are kept.
// RUN: cudal1-opt %s --reference bounded -o - | grep -v "^ *// [A-Z-]*:" | FileCheck %s --check-prefix=STATIC
// STATIC: {{^}}extern "C"  __global__ void __launch_bounds__(128) bounded_ref(double *y) { y[threadIdx.x] *= 2.0; }
static __global__ void __launch_bounds__(128) bounded(float *y) { y[threadIdx.x] *= 2.0f; }

void run(float *x, float *y, int *iy, int n) {
  scale<<<(n + 255) / 256, 256>>>(x, y, 2.0f, n);
  plain<<<1, 32>>>(iy);
  bounded<<<1, 128>>>(y);
}
