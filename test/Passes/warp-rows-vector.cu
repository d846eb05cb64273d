// warp-rows(vector=yes): a reduction row loop whose body is one
// accumulation reading its buffers at 'offset + counter' also gets a vector
// part: each lane loads 16 bytes (4 floats, 2 doubles) per buffer, the group
// strides by 16 bytes per lane, up to the row's last whole stride and only
// where every buffer's row start is 16-byte aligned; the scalar loop (strided
// by lane as before) does the rest. The refusals name what blocks it.
// RUN: cudal1-opt %s --list-transforms | %FileCheck %s --check-prefix=LIST
// RUN: cudal1-opt %s --plan '@matvec: warp-rows(lanes=16, vector=yes); @rowmax: warp-rows(vector=yes)' -o %t.cu
// RUN: %FileCheck %s < %t.cu
// RUN: %if nvcc %{ nvcc -arch=sm_90 -ptx -o %t.ptx %t.cu %}
// RUN: %if nvcc %{ grep -c 'ld.global.v4.f32' %t.ptx %}
// RUN: %if nvcc %{ grep -c 'ld.global.v2.f64' %t.ptx %}
// RUN: not cudal1-opt %s --plan '@weighted: warp-rows(vector=yes)' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=COUNTER
// RUN: not cudal1-opt %s --plan '@mixed: warp-rows(vector=yes)' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=MIXED
// RUN: not cudal1-opt %s --plan '@local: warp-rows(vector=yes)' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=LOCAL
// RUN: not cudal1-opt %s --plan '@matvec: warp-rows(vector=maybe)' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=VALUE

// LIST-LABEL: kernel matvec
// LIST: warp-rows(lanes=32|16|8|4, vector=no|yes)
// LIST-LABEL: kernel rowmax
// LIST: warp-rows(lanes=32|16|8|4, vector=no|yes)
// LIST-LABEL: kernel weighted
// LIST: {{^  }}warp-rows(lanes=32|16|8|4){{$}}
// COUNTER: vector=yes: the counter is used other than to index a read
// MIXED: vector=yes: the reads mix float and double
// LOCAL: vector=yes: the loop body is not one accumulation
// VALUE: vector must be yes or no

__global__ void matvec(const float *A, const float *x, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float acc = 0.0f;
    for (int j = 0; j < cols; ++j)
      acc += A[r * cols + j] * x[j];
    y[r] = acc;
  }
}
// CHECK: __device__ __forceinline__ bool cudal1Aligned16(const void *p) {
// CHECK-LABEL: __global__ void matvec(
// CHECK: const int cudal1_s0 = (0);
// CHECK-NEXT: int cudal1_vend0 = cudal1_s0;
// CHECK-NEXT: if (cudal1Aligned16(&(A)[(r * cols) + cudal1_s0]) && cudal1Aligned16(&(x)[cudal1_s0]) && (long long)(cols) - cudal1_s0 >= 64)
// CHECK-NEXT: cudal1_vend0 = cudal1_s0 + (int)(((long long)(cols) - cudal1_s0) / 64 * 64);
// CHECK-NEXT: for (int j = cudal1_s0 + 4 * cudal1_lane; j < cudal1_vend0; j += 64) {
// CHECK-NEXT: const auto cudal1_v0_0 = cudal1Load16(&(A)[(r * cols) + j]);
// CHECK-NEXT: const auto cudal1_v0_1 = cudal1Load16(&(x)[j]);
// CHECK-NEXT: acc += cudal1_v0_0.x * cudal1_v0_1.x;
// CHECK-NEXT: acc += cudal1_v0_0.y * cudal1_v0_1.y;
// CHECK-NEXT: acc += cudal1_v0_0.z * cudal1_v0_1.z;
// CHECK-NEXT: acc += cudal1_v0_0.w * cudal1_v0_1.w;
// CHECK-NEXT: }
// CHECK-NEXT: for (int j = cudal1_vend0 + cudal1_lane; j < cols; j += 16)
// CHECK-NEXT: acc += A[r * cols + j] * x[j];
// CHECK-NEXT: acc = cudal1RowSum<16>(acc, cudal1_rows);

// A maximum of doubles, the same element read twice: one load.
__global__ void rowmax(const double *A, double *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    double m = 0;
    for (int j = 0; j < cols; ++j)
      m = fmax(m, A[r * cols + j] * A[r * cols + j]);
    y[r] = m;
  }
}
// CHECK-LABEL: __global__ void rowmax(
// CHECK: if (cudal1Aligned16(&(A)[(r * cols) + cudal1_s0]) && (long long)(cols) - cudal1_s0 >= 64)
// CHECK: for (int j = cudal1_s0 + 2 * cudal1_lane; j < cudal1_vend0; j += 64) {
// CHECK-NEXT: const auto cudal1_v0_0 = cudal1Load16(&(A)[(r * cols) + j]);
// CHECK-NEXT: m = fmax(m, cudal1_v0_0.x * cudal1_v0_0.x);
// CHECK-NEXT: m = fmax(m, cudal1_v0_0.y * cudal1_v0_0.y);
// CHECK-NEXT: }
// CHECK: m = cudal1RowMax<32>(m, cudal1_rows);

// The counter is a value here, not only an index.
__global__ void weighted(const float *A, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float acc = 0.0f;
    for (int j = 0; j < cols; ++j)
      acc += A[r * cols + j] * j;
    y[r] = acc;
  }
}

__global__ void mixed(const float *A, const double *w, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float acc = 0.0f;
    for (int j = 0; j < cols; ++j)
      acc += A[r * cols + j] * w[j];
    y[r] = acc;
  }
}

__global__ void local(const float *A, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float acc = 0.0f;
    for (int j = 0; j < cols; ++j) {
      float v = A[r * cols + j];
      acc += v * v;
    }
    y[r] = acc;
  }
}

void run(const float *A, const float *x, const double *D, double *z, float *y, int rows, int cols) {
  matvec<<<(rows + 127) / 128, 128>>>(A, x, y, rows, cols);
  rowmax<<<(rows + 127) / 128, 128>>>(D, z, rows, cols);
  weighted<<<(rows + 127) / 128, 128>>>(A, y, rows, cols);
  mixed<<<(rows + 127) / 128, 128>>>(A, D, y, rows, cols);
  local<<<(rows + 127) / 128, 128>>>(A, y, rows, cols);
}
