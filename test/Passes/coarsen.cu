// coarsen: the launch's x grid shrinks by the factor and the kernel becomes
// grid-stride (once, even when several launches are coarsened), so every
// launch of it, coarsened or not, still covers the whole range.
// RUN: cudal1-opt %s --plan '@#0: coarsen(factor=4); @#2: coarsen(factor=2); @#3: coarsen(factor=8)' -o - | grep -v "^ *// [A-Z-]*:" | %FileCheck %s
// RUN: cudal1-opt %s --plan '@#0: coarsen(factor=4); @#2: coarsen(factor=2); @#3: coarsen(factor=8)' -o %t.cu
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// RUN: cudal1-opt %s --plan '@axpy: coarsen(factor=2)' -o - | grep -v "^ *// [A-Z-]*:" | %FileCheck %s --check-prefix=BOTH
// RUN: not cudal1-opt %s --plan '@#4: coarsen(factor=2)' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ILLEGAL-TID
// RUN: not cudal1-opt %s --plan '@#5: coarsen(factor=2)' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ILLEGAL-PARTIAL
// RUN: not cudal1-opt %s --plan '@#6: coarsen(factor=2)' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ILLEGAL-SIDE
// RUN: not cudal1-opt %s --plan '@#0: coarsen(factor=3)' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=BAD-FACTOR

// CHECK-LABEL: {{^}}__global__ void axpy(
// CHECK: for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
// CHECK-NEXT: y[i] = a * x[i] + y[i];
__global__ void axpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

// Already grid-stride: only the grid changes.
// CHECK-LABEL: {{^}}__global__ void fill(
// CHECK: for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
__global__ void fill(float *a, float v, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    a[i] = v;
}

// Negative: the body uses threadIdx directly.
// ILLEGAL-TID: not legal at launch site #4 {{.*}}: the kernel cannot be made grid-stride: the body uses threadIdx other than through 'i'
__global__ void lane(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    a[i] = threadIdx.x % 32;
}

// Negative: a grid-stride loop with one partial result per block: a
// smaller grid would leave partials unwritten.
// ILLEGAL-PARTIAL: not legal at launch site #5 {{.*}}: the access partial[blockIdx.x] at line {{[0-9]+}} is outside the kernel's grid-stride loops
__global__ void partials(const float *x, float *partial, int n) {
  float s = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    s += x[i];
  if (threadIdx.x == 0)
    partial[blockIdx.x] = s;
}

// BAD-FACTOR: error: step 1 (coarsen): parameter factor=3 is not one of {2, 4, 8} at launch site #0
int blocksFor(int n);

// CHECK-LABEL: {{^}}void host(
// CHECK: {{^ *}}axpy<<<(((n + 255) / 256) + 3) / 4, 256>>>(2.0f, x, y, n);
// CHECK: {{^ *}}axpy<<<(n + 255) / 256, 256>>>(2.0f, x, y, n);
// CHECK: {{^ *}}fill<<<dim3((grid.x + 1) / 2, grid.y, grid.z), block>>>(y, 0.0f, n);
// CHECK: {{^ *}}fill<<<dim3((dim3(blocksFor(n), 2).x + 7) / 8, dim3(blocksFor(n), 2).y, dim3(blocksFor(n), 2).z), 256>>>(y, 1.0f, n);
// BOTH: {{^ *}}axpy<<<(((n + 255) / 256) + 1) / 2, 256>>>(2.0f, x, y, n);
// BOTH: {{^ *}}axpy<<<(((n + 255) / 256) + 1) / 2, 256>>>(2.0f, x, y, n);
void host(float *x, float *y, int n) {
  axpy<<<(n + 255) / 256, 256>>>(2.0f, x, y, n);
  axpy<<<(n + 255) / 256, 256>>>(2.0f, x, y, n);
  dim3 block(256), grid((n + 255) / 256);
  fill<<<grid, block>>>(y, 0.0f, n);
  fill<<<dim3(blocksFor(n), 2), 256>>>(y, 1.0f, n);
  lane<<<(n + 255) / 256, 256>>>(y, n);
  partials<<<64, 256>>>(x, y, n);
  // Negative: the grid expression has side effects.
  // ILLEGAL-SIDE: not legal at launch site #6 {{.*}}: the grid expression has side effects
  int g = 4;
  fill<<<g++, 256>>>(y, 2.0f, n);
}
