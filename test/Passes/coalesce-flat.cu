// coalesce, the 1-D form: a guarded per-thread kernel that splits its id
// over rows x cols as (r = id % rows, c = id / rows) walks down columns; the
// same id split by cols visits the same (r, c) pairs with adjacent threads
// on adjacent columns. The launch is unchanged.
// RUN: cudal1-opt %s --plan '@softplusCols: coalesce; @scaleEarly: coalesce' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// RUN: cudal1-opt %s --list-transforms 2>&1 | FileCheck %s --check-prefix=LIST
// Refusals: each reason is reported and nothing is written.
// RUN: not cudal1-opt %s --plan '@transposeFlat: coalesce' -o %t.bad.cu 2>&1 | FileCheck %s --check-prefix=NOGAIN
// RUN: not test -e %t.bad.cu
// RUN: not cudal1-opt %s --plan '@idUsed: coalesce' 2>&1 | FileCheck %s --check-prefix=IDUSED
// RUN: not cudal1-opt %s --plan '@otherDivisor: coalesce' 2>&1 | FileCheck %s --check-prefix=DIVISOR
// RUN: not cudal1-opt %s --plan '@changesIndex: coalesce' 2>&1 | FileCheck %s --check-prefix=CHANGED
// RUN: not cudal1-opt %s --plan '@changesExtent: coalesce' 2>&1 | FileCheck %s --check-prefix=EXTENT
// RUN: not cudal1-opt %s --plan '@notAProduct: coalesce' 2>&1 | FileCheck %s --check-prefix=PRODUCT
// RUN: not cudal1-opt %s --plan '@lane: coalesce' 2>&1 | FileCheck %s --check-prefix=IDENTITY

// CHECK-LABEL: {{^}}__global__ void softplusCols(
// CHECK-NEXT: {{^}}  int t = blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT: {{^}}  if (t < rows * cols) {
// CHECK-NEXT: {{^}}    int r = t / cols;
// CHECK-NEXT: {{^}}    int c = t % cols;
// CHECK-NEXT: {{^}}    y[r * cols + c] = logf(1.0f + expf(x[r * cols + c]));
__global__ void softplusCols(const float *x, float *y, int rows, int cols) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < rows * cols) {
    int r = t % rows;
    int c = t / rows;
    y[r * cols + c] = logf(1.0f + expf(x[r * cols + c]));
  }
}

// An early return, the product written the other way round, the split
// before the guard and an extent that is an expression: parenthesized.
// CHECK-LABEL: {{^}}__global__ void scaleEarly(
// CHECK-NEXT: {{^}}  const int i = threadIdx.x + blockIdx.x * blockDim.x;
// CHECK-NEXT: {{^}}  const int row = i / (w + 1), col = i % (w + 1);
// CHECK-NEXT: {{^}}  if (i >= (w + 1) * h)
// CHECK-NEXT: {{^}}    return;
// CHECK-NEXT: {{^}}  out[(w + 1) * row + col] = 3.0 * in[row * (w + 1) + col];
__global__ void scaleEarly(const double *in, double *out, int h, int w) {
  const int i = threadIdx.x + blockIdx.x * blockDim.x;
  const int row = i % h, col = i / h;
  if (i >= (w + 1) * h)
    return;
  out[(w + 1) * row + col] = 3.0 * in[row * (w + 1) + col];
}

// LIST-LABEL: kernel softplusCols
// LIST-NEXT: {{^}}  coalesce
// LIST-LABEL: kernel transposeFlat
// LIST-NEXT: {{^}}  - coalesce: the 1-D form: splitting the id by 'cols' instead of 'rows' makes 1 access(es) [r * cols + c] adjacent across threads and 1 no longer: no gain

// A transpose: the read is row-major, the write column-major; the turn
// trades one for the other.
__global__ void transposeFlat(const float *a, float *b, int rows, int cols) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < rows * cols) {
    int r = t % rows, c = t / rows;
    b[c * rows + r] = a[r * cols + c];
  }
}

// The id itself is used: which element a thread writes would change.
__global__ void idUsed(const float *x, float *y, int rows, int cols) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < rows * cols) {
    int r = t % rows, c = t / rows;
    y[t] = x[r * cols + c];
  }
}

// Split by something other than a factor of the guard.
__global__ void otherDivisor(const float *x, float *y, int rows, int cols, int ld) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < rows * cols) {
    int r = t % ld, c = t / ld;
    y[r * cols + c] = x[r * cols + c];
  }
}

__global__ void changesIndex(const float *x, float *y, int rows, int cols) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < rows * cols) {
    int r = t % rows, c = t / rows;
    c += 1;
    y[r * cols + c - 1] = x[r * cols + c - 1];
  }
}

__global__ void changesExtent(const float *x, float *y, int rows, int cols) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < rows * cols) {
    int r = t % rows, c = t / rows;
    y[r * cols + c] = x[r * cols + c];
    cols = 0;
  }
}

__global__ void notAProduct(const float *x, float *y, int rows, int cols, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) {
    int r = t % rows, c = t / rows;
    y[r * cols + c] = x[r * cols + c];
  }
}

// Which thread handles an element matters: a barrier in the element's work.
__global__ void lane(const float *x, float *y, int rows, int cols) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < rows * cols) {
    int r = t % rows, c = t / rows;
    __syncthreads();
    y[r * cols + c] = x[r * cols + c];
  }
}

// NOGAIN: not legal at kernel 'transposeFlat': the 1-D form: splitting the id by 'cols' instead of 'rows' makes 1 access(es) [r * cols + c] adjacent across threads and 1 no longer: no gain
// IDUSED: not legal at kernel 'idUsed': the 1-D form: the id 't' is used beyond its guard and its split
// DIVISOR: not legal at kernel 'otherDivisor': the 1-D form: the id is split by 'ld', which is neither factor of the guard's 'rows * cols'
// CHANGED: not legal at kernel 'changesIndex': the 1-D form: the kernel changes (or takes the address of) an index of the split
// EXTENT: not legal at kernel 'changesExtent': the 1-D form: the kernel changes (or takes the address of) 'cols', an extent of the split
// PRODUCT: not legal at kernel 'notAProduct': the kernel does not use the y thread dimension, and its guard is not 'id < A * B'
// IDENTITY: not legal at kernel 'lane': the 1-D form: the per-element work uses the thread identity, a barrier or a warp intrinsic
