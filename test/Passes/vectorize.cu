// vectorize: each thread handles W consecutive elements: as vectors when all
// W are in range and the pointers are aligned, else one element at a time;
// the grid of every launch shrinks by W.
// RUN: cudal1-opt %s --plan '@axpy: vectorize(width=16); @fill: vectorize(width=8); @relu: vectorize(width=16); @clampPos: vectorize(width=16); @mixed: vectorize(width=16); @bias: vectorize(width=8); @ramp: vectorize(width=16); @restricted: vectorize(width=16)' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | %FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// RUN: cudal1-opt %s --list-transforms | %FileCheck %s --check-prefix=LIST
// Negative cases: each reason is reported and nothing is written.
// RUN: not cudal1-opt %s --plan '@strided: vectorize(width=16)' -o %t.bad.cu 2>&1 | %FileCheck %s --check-prefix=STRIDE
// RUN: not test -e %t.bad.cu
// RUN: not cudal1-opt %s --plan '@scatter: vectorize(width=16)' 2>&1 | %FileCheck %s --check-prefix=AFFINE
// RUN: not cudal1-opt %s --plan '@neighbours: vectorize(width=16)' 2>&1 | %FileCheck %s --check-prefix=MIXED
// RUN: not cudal1-opt %s --plan '@barrier: vectorize(width=16)' 2>&1 | %FileCheck %s --check-prefix=BARRIER
// RUN: not cudal1-opt %s --plan '@atomic: vectorize(width=16)' 2>&1 | %FileCheck %s --check-prefix=ATOMIC
// RUN: not cudal1-opt %s --plan '@unguarded: vectorize(width=16)' 2>&1 | %FileCheck %s --check-prefix=NOGUARD
// RUN: not cudal1-opt %s --plan '@shorts: vectorize(width=16)' 2>&1 | %FileCheck %s --check-prefix=TYPE
// RUN: not cudal1-opt %s --plan '@aliased: vectorize(width=16)' 2>&1 | %FileCheck %s --check-prefix=ALIAS
// RUN: not cudal1-opt %s --plan '@tmpl: vectorize(width=16)' 2>&1 | %FileCheck %s --check-prefix=TEMPLATE
// RUN: not cudal1-opt %s --plan '@strideLoop: vectorize(width=16)' 2>&1 | %FileCheck %s --check-prefix=GRIDSTRIDE
// RUN: not cudal1-opt %s --plan '@ramp: vectorize(width=8)' 2>&1 | %FileCheck %s --check-prefix=WIDTH

// The helper, once, above the first vectorized kernel.
// CHECK: {{^}}#define CUDAL1_ALIGNED
// CHECK: {{^}}__device__ __forceinline__ bool cudal1Aligned(const void *p, unsigned bytes) {
// CHECK-NOT: {{^}}#define CUDAL1_ALIGNED

// A read-only and a read-write buffer.
// CHECK-LABEL: {{^}}__global__ void axpy(
// CHECK-NEXT: {{^}}  int i0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
// CHECK-NEXT: {{^}}  if (i0 + 3 < n && cudal1Aligned(x, 16) && cudal1Aligned(y, 16)) {
// CHECK-NEXT: {{^}}    // 4 elements per thread, as vectors
// CHECK-NEXT: {{^}}    const float4 x4 = *reinterpret_cast<const float4 *>(x + i0);
// CHECK-NEXT: {{^}}    float4 y4 = *reinterpret_cast<const float4 *>(y + i0);
// CHECK-NEXT: {{^}}    y4.x = a * x4.x + y4.x;
// CHECK-NEXT: {{^}}    y4.y = a * x4.y + y4.y;
// CHECK-NEXT: {{^}}    y4.z = a * x4.z + y4.z;
// CHECK-NEXT: {{^}}    y4.w = a * x4.w + y4.w;
// CHECK-NEXT: {{^}}    *reinterpret_cast<float4 *>(y + i0) = y4;
// CHECK-NEXT: {{^}}  } else {
// CHECK-NEXT: {{^}}    for (int i = i0; i < i0 + 4; ++i)
// CHECK-NEXT: {{^}}      if (i < n)
// CHECK-NEXT: {{^}}        y[i] = a * x[i] + y[i];
// CHECK-NEXT: {{^}}  }
// CHECK-NEXT: {{^}}}
__global__ void axpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

// An early return, an unsigned index, int elements, 8-byte vectors; the
// buffer is only stored to, so it is not loaded; the return becomes a break.
// CHECK-LABEL: {{^}}__global__ void fill(
// CHECK-NEXT: {{^}}  unsigned i0 = (threadIdx.x + blockDim.x * blockIdx.x) * 2;
// CHECK-NEXT: {{^}}  const int two = 2;
// CHECK-NEXT: {{^}}  if (i0 + 1 < n && cudal1Aligned(a, 8)) {
// CHECK-NEXT: {{^}}    // 2 elements per thread, as vectors
// CHECK-NEXT: {{^}}    int2 a2;
// CHECK-NEXT: {{^}}    a2.x = v * two;
// CHECK-NEXT: {{^}}    a2.y = v * two;
// CHECK-NEXT: {{^}}    *reinterpret_cast<int2 *>(a + i0) = a2;
// CHECK-NEXT: {{^}}  } else {
// CHECK-NEXT: {{^}}    for (unsigned i = i0; i < i0 + 2; ++i) {
// CHECK-NEXT: {{^}}      if (i >= n) break;
// CHECK-NEXT: {{^}}      a[i] = v * two;
// CHECK-NEXT: {{^}}    }
// CHECK-NEXT: {{^}}  }
__global__ void fill(int *a, int v, unsigned n) {
  unsigned i = threadIdx.x + blockDim.x * blockIdx.x;
  const int two = 2;
  if (i >= n) return;
  a[i] = v * two;
}

// Both branches store out[i]: no load of out. Locals get one scope per lane.
// CHECK-LABEL: {{^}}__global__ void relu(
// CHECK: {{^}}    const float4 x4 = *reinterpret_cast<const float4 *>(x + i0);
// CHECK-NEXT: {{^}}    float4 out4;
// CHECK-NEXT: {{^}}    {
// CHECK-NEXT: {{^}}      float v = x4.x;
// CHECK-NEXT: {{^}}      if (v > 0.0f)
// CHECK-NEXT: {{^}}        out4.x = v;
// CHECK-NEXT: {{^}}      else
// CHECK-NEXT: {{^}}        out4.x = 0.0f;
// CHECK-NEXT: {{^}}    }
// CHECK: {{^}}      float v = x4.w;
__global__ void relu(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    if (v > 0.0f)
      out[i] = v;
    else
      out[i] = 0.0f;
  }
}

// Only some elements are stored: the old values are loaded and kept.
// CHECK-LABEL: {{^}}__global__ void clampPos(
// CHECK: {{^}}    float4 y4 = *reinterpret_cast<const float4 *>(y + i0);
// CHECK-NEXT: {{^}}    if (x4.x < 0.0f) y4.x = 0.0f;
__global__ void clampPos(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    if (x[i] < 0.0f) y[i] = 0.0f;
  }
}

// float and double: two lanes, float2 (8 bytes) and double2 (16 bytes).
// CHECK-LABEL: {{^}}__global__ void mixed(
// CHECK: {{^}}  if (i0 + 1 < n && cudal1Aligned(x, 8) && cudal1Aligned(d, 16)) {
// CHECK: {{^}}    const float2 x2 = *reinterpret_cast<const float2 *>(x + i0);
// CHECK-NEXT: {{^}}    double2 d2;
// CHECK-NEXT: {{^}}    d2.x = 2.0 * x2.x;
// CHECK-NEXT: {{^}}    d2.y = 2.0 * x2.y;
// CHECK-NEXT: {{^}}    *reinterpret_cast<double2 *>(d + i0) = d2;
__global__ void mixed(const float *x, double *d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    d[i] = 2.0 * x[i];
}

// A read-only buffer read elsewhere stays a scalar load per element; a
// uniform read stays as it is.
// CHECK-LABEL: {{^}}__global__ void bias(
// CHECK: {{^}}    x2.x = x2.x + b[i0 % width] * s[0];
// CHECK-NEXT: {{^}}    x2.y = x2.y + b[(i0 + 1) % width] * s[0];
__global__ void bias(float *x, const float *b, const float *s, int n, int width) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = x[i] + b[i % width] * s[0];
}

// The index as a value; double, so 16 bytes are two lanes.
// CHECK-LABEL: {{^}}__global__ void ramp(
// CHECK: {{^}}    r2.x = step * i0;
// CHECK-NEXT: {{^}}    r2.y = step * (i0 + 1);
__global__ void ramp(double *r, double step, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n)
    r[i] = step * i;
}

// A read after another buffer's store is fine when they cannot alias.
// CHECK-LABEL: {{^}}__global__ void restricted(
// CHECK: {{^}}    y4.x = 1.0f;
// CHECK-NEXT: {{^}}    z4.x = x4.x;
__global__ void restricted(const float *__restrict__ x, float *__restrict__ y, float *__restrict__ z,
                           int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = 1.0f;
    z[i] = x[i];
  }
}

// STRIDE: not legal at kernel 'strided': y[2 * i] at line {{[0-9]+}} has stride 2 along threadIdx.x (vectorize needs 1)
__global__ void strided(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[2 * i] = x[i];
}

// AFFINE: not legal at kernel 'scatter': the index of y[idx[i]] at line {{[0-9]+}} is not affine in the thread index
__global__ void scatter(const float *x, const int *idx, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[idx[i]] = x[i];
}

// MIXED: not legal at kernel 'neighbours': x[i + 1] at line {{[0-9]+}} is not at the global thread id: vectorize needs every thread-dependent access of a buffer at the same index (mixed index expressions)
__global__ void neighbours(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n - 1)
    y[i] = x[i + 1] - x[i];
}

// BARRIER: not legal at kernel 'barrier': the kernel uses barriers (__syncthreads at line {{[0-9]+}})
__global__ void barrier(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __syncthreads();
  if (i < n)
    x[i] = 0.0f;
}

// ATOMIC: not legal at kernel 'atomic': the kernel uses atomics (atomicAdd at line {{[0-9]+}})
__global__ void atomic(const float *x, float *sum, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(&sum[i], x[i]);
}

// NOGUARD: not legal at kernel 'unguarded': no guard: expected `if (i < n) ...`
__global__ void unguarded(const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = x[i];
}

// TYPE: not legal at kernel 'shorts': the element type of y is 'short' (vectorize needs float, int, unsigned, double, long long or unsigned long long)
__global__ void shorts(const float *x, short *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = (short)x[i];
}

// ALIAS: not legal at kernel 'aliased': the body reads x after storing to y (line {{[0-9]+}}); if they alias, vector loads made first would read old values (mark them __restrict__)
__global__ void aliased(const float *x, float *y, float *z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = 1.0f;
    z[i] = x[i];
  }
}

// TEMPLATE: not legal at kernel 'tmpl': template kernels are not vectorized
template <typename T> __global__ void tmpl(T *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = T(0);
}

// GRIDSTRIDE: not legal at kernel 'strideLoop': grid-stride kernels are not vectorized
__global__ void strideLoop(float *x, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    x[i] = 0.0f;
}

// WIDTH: error: step 1 (vectorize): width=8 holds a single 8-byte element: use width=16 at kernel 'ramp'

// LIST-LABEL: kernel axpy
// LIST: {{^}}  vectorize(width=8|16){{$}}
// LIST-LABEL: kernel fill
// LIST-LABEL: kernel ramp
// LIST: {{^}}  vectorize(width=16){{$}}
// LIST-LABEL: kernel restricted
// LIST-LABEL: kernel strided
// LIST: {{^}}  - vectorize: y[2 * i] at line {{[0-9]+}} has stride 2

// The grid of every launch shrinks by the number of lanes.
// CHECK-LABEL: {{^}}void host(
// CHECK-NEXT: {{^}}  axpy<<<(((n + 255) / 256) + 3) / 4, 256>>>(2.0f, x, y, n);
// CHECK: {{^}}  fill<<<dim3((grid.x + 1) / 2, grid.y, grid.z), 256>>>(ix, 3, n);
void host(float *x, float *y, float *z, double *d, int *ix, const int *idx, short *sh, int n) {
  axpy<<<(n + 255) / 256, 256>>>(2.0f, x, y, n);
  dim3 grid((n + 255) / 256);
  fill<<<grid, 256>>>(ix, 3, n);
  relu<<<(n + 255) / 256, 256>>>(x, y, n);
  clampPos<<<(n + 255) / 256, 256>>>(x, y, n);
  mixed<<<(n + 255) / 256, 256>>>(x, d, n);
  bias<<<(n + 255) / 256, 256>>>(x, y, z, n, 64);
  ramp<<<(n + 255) / 256, 256>>>(d, 0.5, n);
  restricted<<<(n + 255) / 256, 256>>>(x, y, z, n);
  tmpl<<<(n + 255) / 256, 256>>>(x, n);
}
