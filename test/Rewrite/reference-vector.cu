// The double reference: CUDA's float vector types become their double
// counterparts (float4 -> double4_16a, the non-deprecated type of double4's
// layout, so a promoted float4 buffer is read in the same element order),
// make_float4 -> make_double4_16a; __ldg of a float4, which has no double4
// form, becomes a plain load (the same values; the hint is dropped).
// RUN: cudal1-opt %s --reference axpy4 -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o /dev/null %t.cu %}

// CHECK: {{^}}/* cudal1 reference of 'axpy4': entry axpy4_ref; args f32* f32* f32 i32;
// CHECK-LABEL: // --- cudal1: the double reference of 'axpy4'
// CHECK: {{^}}template <class T> static __device__ __forceinline__ T cudal1_ref_load(const T *p) { return *p; }
// CHECK-NEXT: {{^}}extern "C" __global__ void __launch_bounds__(1024) axpy4_ref(const double4_16a *x, double *y, double a, int n4) {
// CHECK-NEXT: {{^}}  int i = blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT: {{^}}  if (i < n4) {
// CHECK-NEXT: {{^}}    double4_16a v = cudal1_ref_load(&x[i]);
// CHECK-NEXT: {{^}}    double2 h = make_double2(v.x + v.y, v.z + v.w);
// CHECK-NEXT: {{^}}    double4_16a *out = reinterpret_cast<double4_16a *>(y);
// CHECK-NEXT: {{^}}    out[i] = make_double4_16a(a * v.x, a * v.y, h.x, h.y);
__global__ void axpy4(const float4 *x, float *y, float a, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) {
    float4 v = __ldg(&x[i]);
    float2 h = make_float2(v.x + v.y, v.z + v.w);
    float4 *out = reinterpret_cast<float4 *>(y);
    out[i] = make_float4(a * v.x, a * v.y, h.x, h.y);
  }
}

void run(const float4 *x, float *y, int n4) { axpy4<<<(n4 + 255) / 256, 256>>>(x, y, 2.0f, n4); }
