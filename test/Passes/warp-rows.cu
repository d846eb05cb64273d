// warp-rows: a kernel whose threads each walk a row gives each row to a group
// of lanes: the row loops stride by lane, sums and maxima combine with xor
// shuffles over the lanes the guard lets in, what writes memory after the
// loops runs on lane 0, and every launch gets LANES times the threads in
// blocks of 256. A kernel whose threads already read adjacent addresses
// (colsum) takes layout=spread: the group's lanes sit 32 / LANES apart, so
// that adjacent lanes keep adjacent columns. The refusals below each name
// what blocks the rewrite.
// RUN: cudal1-opt %s --list-transforms | %FileCheck %s --check-prefix=LIST
// RUN: cudal1-opt %s --plan '@matvec: warp-rows(lanes=32); @softmax: warp-rows(lanes=8); @colsum: warp-rows(lanes=4, layout=spread)' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | %FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// RUN: not cudal1-opt %s --plan '@matvec: warp-rows(lanes=3)' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=BAD-LANES
// RUN: not cudal1-opt %s --plan '@colsum: warp-rows(lanes=8)' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=PACKED-COALESCED
// RUN: not cudal1-opt %s --plan '@matvec: warp-rows(lanes=8, layout=spread)' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=SPREAD-STRIDED
// RUN: not cudal1-opt %s --plan '@colsum: warp-rows(lanes=32, layout=spread)' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=SPREAD-LANES
// RUN: not cudal1-opt %s --plan '@colsum: warp-rows(lanes=4, layout=spread, vector=yes)' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=SPREAD-VECTOR
// RUN: not cudal1-opt %s --plan '@colsum: warp-rows(layout=diagonal)' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=BAD-LAYOUT

// LIST-LABEL: kernel matvec
// LIST: warp-rows(lanes=32|16|8|4, vector=no|yes)
// LIST-LABEL: kernel softmax
// LIST: warp-rows(lanes=32|16|8|4, vector=no|yes)
// LIST-LABEL: kernel colsum
// LIST: warp-rows(lanes=16|8|4|2, layout=spread)
// LIST-LABEL: kernel scan
// LIST: - warp-rows: row loop at line {{[0-9]+}}: the accumulator 's' is read inside the loop
// LIST-LABEL: kernel elementwise
// LIST: - warp-rows: no loop over the row accumulates (nothing for a group of lanes to share)
// LIST-LABEL: kernel barrier
// LIST: - warp-rows: not a guarded per-thread kernel (the kernel uses shared memory or barriers, which tie work to its thread)
// LIST-LABEL: kernel usesLane
// LIST: - warp-rows: not a guarded per-thread kernel (the body uses threadIdx other than through 'r')
// LIST-LABEL: kernel nested
// LIST: - warp-rows: row loop at line {{[0-9]+}}: the loop body has nested loops or jumps
// LIST-LABEL: kernel readsBack
// LIST: - warp-rows: a statement reads what lane 0 wrote earlier in the row

// BAD-LANES: lanes must be 32, 16, 8 or 4
// PACKED-COALESCED: no row loop reads with a stride between adjacent threads (already coalesced)
// SPREAD-STRIDED: layout=spread: no row loop reads adjacent addresses across adjacent threads (layout=packed is the one for strided rows)
// SPREAD-LANES: with layout=spread, lanes must be 16, 8, 4 or 2
// SPREAD-VECTOR: vector=yes loads along the row, which layout=spread does not stride by lane
// BAD-LAYOUT: layout must be packed or spread

// The device helper is inserted once, before the first rewritten kernel.
// CHECK: {{^}}#ifndef CUDAL1_WARP_ROWS
// CHECK: T cudal1RowSum(T v, unsigned rows)
// CHECK-LABEL: {{^}}__global__ void matvec(
// CHECK-NEXT: int cols) {
// CHECK-NEXT: int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32u;
// CHECK-NEXT: const int cudal1_lane = (int)((blockIdx.x * blockDim.x + threadIdx.x) % 32u);
// CHECK-NEXT: const unsigned cudal1_rows = __ballot_sync(cudal1LiveLanes(), r < rows);
// CHECK-NEXT: if (r < rows) {
// CHECK-NEXT: float acc = bias[r];
// CHECK-NEXT: if (cudal1_lane != 0)
// CHECK-NEXT: acc = 0;
// CHECK-NEXT: for (int j = (0) + cudal1_lane; j < cols; j += 32)
// CHECK-NEXT: acc += A[r * cols + j] * x[j];
// CHECK-NEXT: acc = cudal1RowSum<32>(acc, cudal1_rows);
// CHECK-NEXT: if (cudal1_lane == 0) { y[r] = acc; }
// CHECK-NEXT: }
// CHECK-NEXT: }
__global__ void matvec(const float *A, const float *x, const float *bias, float *y, int rows,
                       int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float acc = bias[r];
    for (int j = 0; j < cols; ++j)
      acc += A[r * cols + j] * x[j];
    y[r] = acc;
  }
}

// An early return, a maximum, a sum and an element-wise loop over the row.
// CHECK-LABEL: {{^}}__global__ void softmax(
// CHECK: const unsigned cudal1_rows = __ballot_sync(cudal1LiveLanes(), !(r >= rows));
// CHECK-NEXT: if (r >= rows)
// CHECK: for (int j = (1) + cudal1_lane; j < cols; j += 8)
// CHECK-NEXT: m = fmaxf(m, x[r * cols + j]);
// CHECK-NEXT: m = cudal1RowMax<8>(m, cudal1_rows);
// CHECK: for (int j = (0) + cudal1_lane; j < cols; j += 8)
// CHECK-NEXT: s += expf(x[r * cols + j] - m);
// CHECK-NEXT: s = cudal1RowSum<8>(s, cudal1_rows);
// CHECK-NEXT: for (int j = (0) + cudal1_lane; j < cols; j += 8)
// CHECK-NEXT: y[r * cols + j] = expf(x[r * cols + j] - m) / s;
// CHECK-NEXT: }
__global__ void softmax(const float *x, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows)
    return;
  float m = x[r * cols];
  for (int j = 1; j < cols; ++j)
    m = fmaxf(m, x[r * cols + j]);
  float s = 0.0f;
  for (int j = 0; j < cols; ++j)
    s += expf(x[r * cols + j] - m);
  for (int j = 0; j < cols; ++j)
    y[r * cols + j] = expf(x[r * cols + j] - m) / s;
}

// Adjacent threads read adjacent columns already: nothing to coalesce, but
// each column's loop is shared by 4 lanes 8 apart (the warp's 8 columns side
// by side, 4 times), which combine with xor shuffles over offsets 16 and 8.
// CHECK: {{^}}#ifndef CUDAL1_WARP_ROWS_SPREAD
// CHECK: T cudal1SpreadSum(T v, unsigned rows)
// CHECK-LABEL: {{^}}__global__ void colsum(
// CHECK-NEXT: int c = (blockIdx.x * blockDim.x + threadIdx.x) / 32u * 8u + (blockIdx.x * blockDim.x + threadIdx.x) % 8u;
// CHECK-NEXT: const int cudal1_lane = (int)((blockIdx.x * blockDim.x + threadIdx.x) % 32u / 8u);
// CHECK-NEXT: const unsigned cudal1_rows = __ballot_sync(cudal1LiveLanes(), c < cols);
// CHECK-NEXT: if (c < cols) {
// CHECK-NEXT: float s = 0.0f;
// CHECK-NEXT: if (cudal1_lane != 0)
// CHECK-NEXT: s = 0;
// CHECK-NEXT: for (int r = (0) + cudal1_lane; r < rows; r += 4)
// CHECK-NEXT: s += x[r * cols + c];
// CHECK-NEXT: s = cudal1SpreadSum<4>(s, cudal1_rows);
// CHECK-NEXT: if (cudal1_lane == 0) { out[c] = s; }
// CHECK-NEXT: }
// CHECK-NEXT: }
__global__ void colsum(const float *x, float *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c < cols) {
    float s = 0.0f;
    for (int r = 0; r < rows; ++r)
      s += x[r * cols + c];
    out[c] = s;
  }
}

// A running sum written per element is a scan, not a reduction.
__global__ void scan(const float *x, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = 0.0f;
    for (int j = 0; j < cols; ++j) {
      s += x[r * cols + j];
      y[r * cols + j] = s;
    }
  }
}

__global__ void elementwise(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = 2.0f * x[i];
}

__global__ void barrier(const float *x, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  __syncthreads();
  if (r < rows) {
    float s = 0.0f;
    for (int j = 0; j < cols; ++j)
      s += x[r * cols + j];
    y[r] = s;
  }
}

__global__ void usesLane(const float *x, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = threadIdx.x;
    for (int j = 0; j < cols; ++j)
      s += x[r * cols + j];
    y[r] = s;
  }
}

__global__ void nested(const float *x, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = 0.0f;
    for (int j = 0; j < cols; ++j)
      for (int k = 0; k < 2; ++k)
        s += x[r * cols + j] * k;
    y[r] = s;
  }
}

// Lanes other than 0 would read y[r] before lane 0 wrote it.
__global__ void readsBack(const float *x, float *y, float *z, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = 0.0f;
    for (int j = 0; j < cols; ++j)
      s += x[r * cols + j];
    y[r] = s;
    float t = y[r];
    s = t;
  }
}

void run(const float *A, const float *x, const float *b, float *y, float *z, int rows, int cols) {
  dim3 block(128);
  matvec<<<(rows + 127) / 128, block>>>(A, x, b, y, rows, cols);
  softmax<<<(rows + 127) / 128, 128>>>(A, y, rows, cols);
  colsum<<<(cols + 127) / 128, 128>>>(A, y, rows, cols);
  scan<<<(rows + 127) / 128, 128>>>(A, y, rows, cols);
  elementwise<<<(rows + 127) / 128, 128>>>(A, y, rows);
  barrier<<<(rows + 127) / 128, 128>>>(A, y, rows, cols);
  usesLane<<<(rows + 127) / 128, 128>>>(A, y, rows, cols);
  nested<<<(rows + 127) / 128, 128>>>(A, y, rows, cols);
  readsBack<<<(rows + 127) / 128, 128>>>(A, y, z, rows, cols);
}
// CHECK-LABEL: void run(
// CHECK: matvec<<<cudal1WarpRowsGrid((rows + 127) / 128, block, 32, 256), 256>>>
// CHECK: softmax<<<cudal1WarpRowsGrid((rows + 127) / 128, 128, 8, 256), 256>>>
// CHECK: colsum<<<cudal1WarpRowsGrid((cols + 127) / 128, 128, 4, 256), 256>>>
