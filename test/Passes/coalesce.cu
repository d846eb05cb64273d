// coalesce: swaps the roles of the x and y thread dimensions in the kernel
// and in every launch of it, when more accesses become unit-stride along
// threadIdx.x than stop being.
// RUN: cudal1-opt %s --plan '@scale2d: coalesce; @tilecopy: coalesce; @tmpl: coalesce' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// Negative cases: each reason is reported and nothing is written.
// RUN: not cudal1-opt %s --plan '@transpose: coalesce' -o %t.bad.cu 2>&1 | FileCheck %s --check-prefix=NOGAIN
// RUN: not test -e %t.bad.cu
// RUN: not cudal1-opt %s --plan '@shuffle: coalesce' 2>&1 | FileCheck %s --check-prefix=WARP
// RUN: not cudal1-opt %s --plan '@volume: coalesce' 2>&1 | FileCheck %s --check-prefix=ZDIM
// RUN: not cudal1-opt %s --plan '@macro: coalesce' 2>&1 | FileCheck %s --check-prefix=MACRO
// RUN: not cudal1-opt %s --plan '@callee: coalesce' 2>&1 | FileCheck %s --check-prefix=CALLEE
// RUN: not cudal1-opt %s --plan '@flat: coalesce' 2>&1 | FileCheck %s --check-prefix=NOY
// RUN: not cudal1-opt %s --plan '@sidefx: coalesce' 2>&1 | FileCheck %s --check-prefix=SIDEFX

#define ROW (blockIdx.y * blockDim.y + threadIdx.y)

// A row-major matrix with the column index along y: every warp touches 32
// rows. After the swap, threadIdx.x walks the contiguous column index.
// CHECK-LABEL: {{^}}__global__ void scale2d(
// CHECK-NEXT: {{^}}  int r = blockIdx.y * blockDim.y + threadIdx.y;
// CHECK-NEXT: {{^}}  int c = blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT: {{^}}  if (r < rows && c < cols)
// CHECK-NEXT: {{^}}    out[r * cols + c] = 2.0f * in[r * cols + c] + (gridDim.y > 1 ? 1.0f : 0.0f);
__global__ void scale2d(const float *in, float *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  int c = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[r * cols + c] = 2.0f * in[r * cols + c] + (gridDim.x > 1 ? 1.0f : 0.0f);
}

// Shared memory and barriers are fine: threads stay in their block.
// CHECK-LABEL: {{^}}__global__ void tilecopy(
// CHECK-NEXT: {{^}}  __shared__ float tile[16][17];
// CHECK-NEXT: {{^}}  tile[threadIdx.y][threadIdx.x] = in[(blockIdx.y * 16 + threadIdx.y) * n + blockIdx.x * 16 + threadIdx.x];
// CHECK-NEXT: {{^}}  __syncthreads();
// CHECK-NEXT: {{^}}  out[(blockIdx.y * 16 + threadIdx.y) * n + blockIdx.x * 16 + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
__global__ void tilecopy(const float *in, float *out, int n) {
  __shared__ float tile[16][17];
  tile[threadIdx.x][threadIdx.y] = in[(blockIdx.x * 16 + threadIdx.x) * n + blockIdx.y * 16 + threadIdx.y];
  __syncthreads();
  out[(blockIdx.x * 16 + threadIdx.x) * n + blockIdx.y * 16 + threadIdx.y] = tile[threadIdx.y][threadIdx.x];
}

// A template kernel: the definition is edited once.
// CHECK-LABEL: {{^}}template <typename T> __global__ void tmpl(
// CHECK-NEXT: {{^}}  int c = blockIdx.y * blockDim.y + threadIdx.y, r = blockIdx.x * blockDim.x + threadIdx.x;
template <typename T> __global__ void tmpl(const T *in, T *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[c * rows + r] = in[c * rows + r];
}

// A naive transpose: one access gains what the other loses.
__global__ void transpose(const float *in, float *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[c * rows + r] = in[r * cols + c];
}

// Warp shuffles tie the kernel to how threads form warps.
__global__ void shuffle(const float *in, float *out, int n) {
  int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  float v = in[c * n + r];
  v += __shfl_down_sync(0xffffffffu, v, 1);
  out[c * n + r] = v;
}

// Uses z.
__global__ void volume(float *a, int n) {
  int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  a[(threadIdx.z * n + c) * n + r] = 0.0f;
}

// An index inside a macro cannot be edited.
__global__ void macro(float *a, int n) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  a[c * n + ROW] = 0.0f;
}

__device__ int lane() { return threadIdx.x % 32; }

// A device function reads the thread index, and would not be swapped.
__global__ void callee(float *a, int n) {
  int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  a[c * n + r] = lane();
}

// One-dimensional.
__global__ void flat(float *a) { a[(blockIdx.x * blockDim.x + threadIdx.x) * 2] = 0.0f; }

// Same as colsum, launched with a grid computed by a call with side effects.
__global__ void sidefx(float *a, int n) {
  int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  a[c * n + r] = 0.0f;
}
dim3 nextGrid();

void run(float *x, float *y, double *dx, double *dy, int rows, int cols) {
  dim3 block(32, 8);
  dim3 grid((cols + 31) / 32, (rows + 7) / 8);
  // CHECK: {{^}}  scale2d<<<dim3(dim3(grid).y, dim3(grid).x, dim3(grid).z), dim3(dim3(block).y, dim3(block).x, dim3(block).z)>>>(x, y, rows, cols);
  scale2d<<<grid, block>>>(x, y, rows, cols);
  // CHECK: {{^}}  tilecopy<<<dim3(rows / 16, cols / 16), dim3(16, 16)>>>(x, y, cols);
  tilecopy<<<dim3(cols / 16, rows / 16), dim3(16, 16)>>>(x, y, cols);
  // CHECK: {{^}}  tmpl<<<dim3(dim3(grid).y, dim3(grid).x, dim3(grid).z), dim3(8, 32)>>>(x, y, rows, cols);
  tmpl<<<grid, dim3(32, 8)>>>(x, y, rows, cols);
  // CHECK: {{^}}  tmpl<<<dim3(1, cols), dim3(1, 256)>>>(dx, dy, rows, cols);
  tmpl<<<cols, 256>>>(dx, dy, rows, cols);
  transpose<<<grid, block>>>(x, y, rows, cols);
  shuffle<<<grid, block>>>(x, y, cols);
  volume<<<grid, dim3(32, 8, 2)>>>(x, cols);
  macro<<<grid, block>>>(x, cols);
  callee<<<grid, block>>>(x, cols);
  flat<<<cols, 256>>>(x);
  sidefx<<<nextGrid(), block>>>(x, cols);
}
// NOGAIN: plan:1:13: error: step 1 (coalesce): not legal at kernel 'transpose': swapping x and y makes 1 access(es) unit-stride along threadIdx.x and 1 no longer: no gain
// WARP: not legal at kernel 'shuffle': the kernel uses warp-level intrinsics, which depend on how threads form warps
// ZDIM: not legal at kernel 'volume': the kernel uses the z thread dimension (threadIdx.z)
// MACRO: not legal at kernel 'macro': a thread or block index at line {{[0-9]+}} is written inside a macro
// CALLEE: not legal at kernel 'callee': the function lane it calls reads the thread or block index
// NOY: not legal at kernel 'flat': the kernel does not use the y thread dimension
// SIDEFX: not legal at kernel 'sidefx': the configuration of launch #10 calls nextGrid(), which the rewrite would evaluate more than once
