// The double reference: device functions the kernel calls are promoted as
// copies named <name>_ref (operators keep their name: the copy overloads
// them on double types), callees of callees too, callees first; functions
// without float stay shared; the float originals stay for other kernels.
// RUN: cudal1-opt %s --reference dist -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o /dev/null %t.cu %}

__device__ int gid() { return blockIdx.x * blockDim.x + threadIdx.x; }
__device__ float sq(float v) { return v * v; }
__host__ __device__ inline float3 operator-(float3 a, float3 b) {
  return make_float3(a.x - b.x, a.y - b.y, a.z - b.z);
}
__device__ float dot3(float3 a, float3 b) { return a.x * b.x + a.y * b.y + sq(a.z) * 0.0f + a.z * b.z; }
namespace geo {
__device__ float len(float3 a) { return sqrtf(dot3(a, a)); }
}

__global__ void dist(const float3 *p, float *d, int n) {
  int i = gid();
  if (i < n)
    d[i] = geo::len(p[i] - p[0]);
}
// Another kernel keeps calling the float originals.
__global__ void other(float *d) { d[0] = sq(d[0]); }

// CHECK-LABEL: // --- cudal1: the double reference of 'dist'
// CHECK-NEXT: {{^}}__device__ double sq_ref(double v) { return v * v; }
// CHECK-NEXT: {{^}}__device__ double dot3_ref(double3 a, double3 b) { return a.x * b.x + a.y * b.y + sq_ref(a.z) * 0.0 + a.z * b.z; }
// CHECK-NEXT: {{^}}namespace geo { __device__ double len_ref(double3 a) { return sqrt(dot3_ref(a, a)); } }
// CHECK-NEXT: {{^}}__host__ __device__ inline double3 operator-(double3 a, double3 b) {
// CHECK-NEXT: {{^}}  return make_double3(a.x - b.x, a.y - b.y, a.z - b.z);
// CHECK-NEXT: {{^}}}
// CHECK-NEXT: {{^}}extern "C" __global__ void __launch_bounds__(1024) dist_ref(const double3 *p, double *d, int n) {
// CHECK-NEXT: {{^}}  int i = gid();
// CHECK-NEXT: {{^}}  if (i < n)
// CHECK-NEXT: {{^}}    d[i] = geo::len_ref(p[i] - p[0]);
// CHECK-NEXT: {{^}}}
// CHECK-NOT: other_ref

void run(const float3 *p, float *d, int n) {
  dist<<<(n + 255) / 256, 256>>>(p, d, n);
  other<<<1, 1>>>(d);
}
