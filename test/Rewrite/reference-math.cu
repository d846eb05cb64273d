// The double reference: single-precision math calls and intrinsics become
// their double forms; overloaded names (fabs, max, __shfl_down_sync) are
// kept, since the promoted arguments choose the double overload; helpers
// stand in where no double function exists (__fdividef, __saturatef).
// RUN: cudal1-opt %s --reference act -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o /dev/null %t.cu %}

// CHECK-LABEL: // --- cudal1: the double reference of 'act'
// CHECK: {{^}}static __device__ __forceinline__ double cudal1_ref_div(double a, double b) { return a / b; }
// CHECK: {{^}}static __device__ __forceinline__ double cudal1_ref_saturate(double x)
// CHECK: {{^}}extern "C" __global__ void __launch_bounds__(1024) act_ref(const double *x, double *y, int n) {
// CHECK: {{^}}  double a = exp(v) + log(v + 1.0) * sin(v) - cos(v) + tanh(v) + pow(v, 2.0);
// CHECK-NEXT: {{^}}  double b = sqrt(v) + rsqrt(v + 1.0) + fmax(v, 0.0) + fmin(v, 1.0) + fabs(v) + fma(v, v, 1.0);
// CHECK-NEXT: {{^}}  double c = exp(v) + log(v) + sin(v) + cos(v) + pow(v, 0.5) + cudal1_ref_div(v, 3.0) + cudal1_ref_saturate(v);
// CHECK-NEXT: {{^}}  double d = __dmul_rn(v, v) + __dadd_rz(v, 1.0) + __fma_rn(v, v, v) + __ddiv_rn(v, 2.0) + __dsqrt_rn(v);
// CHECK-NEXT: {{^}}  int e = __double2int_rn(v) + __double2int_rz(v);
// CHECK-NEXT: {{^}}  double f = __int2double_rn(e) + fabs(v) + max(v, 0.0) + ::exp(v);
// CHECK-NEXT: {{^}}  double s, co;
// CHECK-NEXT: {{^}}  sincos(v, &s, &co);
// CHECK-NEXT: {{^}}  double w = __shfl_down_sync(0xffffffffu, v, 1);
__global__ void act(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float v = x[i];
  float a = expf(v) + logf(v + 1.0f) * sinf(v) - cosf(v) + tanhf(v) + powf(v, 2.0f);
  float b = sqrtf(v) + rsqrtf(v + 1.0f) + fmaxf(v, 0.0f) + fminf(v, 1.0f) + fabsf(v) + fmaf(v, v, 1.0f);
  float c = __expf(v) + __logf(v) + __sinf(v) + __cosf(v) + __powf(v, 0.5f) + __fdividef(v, 3.0f) + __saturatef(v);
  float d = __fmul_rn(v, v) + __fadd_rz(v, 1.0f) + __fmaf_rn(v, v, v) + __fdiv_rn(v, 2.0f) + __fsqrt_rn(v);
  int e = __float2int_rn(v) + __float2int_rz(v);
  float f = __int2float_rn(e) + fabs(v) + max(v, 0.0f) + ::expf(v);
  float s, co;
  sincosf(v, &s, &co);
  float w = __shfl_down_sync(0xffffffffu, v, 1);
  y[i] = a + b + c + d + f + s + co + w;
}

void run(const float *x, float *y, int n) { act<<<(n + 255) / 256, 256>>>(x, y, n); }
