// The double reference refuses, with exit 4, the location and the reason,
// what it cannot promote; nothing is written. The evaluator then judges
// the kernel without a reference (fallback-no-reference).
// RUN: not cudal1-opt %s --reference withAsm -o %t.asm.cu 2>&1 | FileCheck %s --check-prefix=ASM
// RUN: not test -e %t.asm.cu
// RUN: not cudal1-opt %s --reference withTexture 2>&1 | FileCheck %s --check-prefix=TEX
// RUN: not cudal1-opt %s --reference withHalf 2>&1 | FileCheck %s --check-prefix=HALF
// RUN: not cudal1-opt %s --reference withBits 2>&1 | FileCheck %s --check-prefix=BITS
// RUN: not cudal1-opt %s --reference withPunning 2>&1 | FileCheck %s --check-prefix=PUN
// RUN: not cudal1-opt %s --reference withStruct 2>&1 | FileCheck %s --check-prefix=STRUCT
// RUN: not cudal1-opt %s --reference withMacro 2>&1 | FileCheck %s --check-prefix=MACRO
// RUN: not cudal1-opt %s --reference withTemplate 2>&1 | FileCheck %s --check-prefix=TMPL
// RUN: not cudal1-opt %s --reference withBigShared 2>&1 | FileCheck %s --check-prefix=SHARED
// The exit status: 4 for a refusal, 1 for a kernel that is not there.
// RUN: cudal1-opt %s --reference withAsm > /dev/null 2>&1 || test $? -eq 4
// RUN: not cudal1-opt %s --reference nosuch 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: cudal1-opt %s --reference nosuch > /dev/null 2>&1 || test $? -eq 1
// Inline asm without float operands is kept, with a note.
// RUN: cudal1-opt %s --reference laneAsm -o %t.lane.cu 2>&1 | FileCheck %s --check-prefix=LANE
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o /dev/null %t.lane.cu %}
#include <cuda_fp16.h>

#define LOADF(p) ((float)(p)[0])

// ASM: error: no double reference for kernel 'withAsm': {{.*}}reference-refusals.cu:[[@LINE+2]]:12: inline PTX (asm) with a float operand cannot be promoted to double
__global__ void withAsm(float *y) {
  float v; asm volatile("mov.f32 %0, 0f3F800000;" : "=f"(v));
  y[0] = v;
}
// TEX: error: no double reference for kernel 'withTexture': {{.*}}reference-refusals.cu:[[@LINE+1]]:{{[0-9]+}}: a texture or surface object (cudaTextureObject_t) reads float data the reference cannot widen
__global__ void withTexture(cudaTextureObject_t t, float *y) { y[threadIdx.x] = tex1Dfetch<float>(t, threadIdx.x); }
// HALF: error: no double reference for kernel 'withHalf': {{.*}}reference-refusals.cu:[[@LINE+1]]:{{[0-9]+}}: half-precision type '__half' (the reference promotes float only)
__global__ void withHalf(const __half *h, float *y) { y[threadIdx.x] = __half2float(h[threadIdx.x]); }
// BITS: error: no double reference for kernel 'withBits': {{.*}}reference-refusals.cu:[[@LINE+1]]:{{[0-9]+}}: '__int_as_float' reinterprets the bits of a float; the double reference cannot
__global__ void withBits(float *y) { y[0] = __int_as_float(__float_as_int(y[0]) & 0x7fffffff); }
// PUN: error: no double reference for kernel 'withPunning': {{.*}}reference-refusals.cu:[[@LINE+1]]:{{[0-9]+}}: a pointer cast between 'float *' and 'unsigned int *' reinterprets float bits, which the reference cannot
__global__ void withPunning(float *y) { unsigned *u = (unsigned *)y; u[0] &= 0x7fffffffu; }
struct Particle { float x, v; };
// STRUCT: error: no double reference for kernel 'withStruct': {{.*}}reference-refusals.cu:[[@LINE+1]]:{{[0-9]+}}: the struct 'Particle' has float members (promoting them would change its layout, which the evaluator's captured bytes do not follow)
__global__ void withStruct(Particle *p) { p[threadIdx.x].x += p[threadIdx.x].v; }
// MACRO: error: no double reference for kernel 'withMacro': {{.*}}reference-refusals.cu:[[@LINE+1]]:{{[0-9]+}}: the type 'float' written inside macro 'LOADF' cannot be promoted (the macro is shared with float code)
__global__ void withMacro(float *y) { y[1] = LOADF(y); }
template <typename T> __global__ void withTemplate(T *y) { y[threadIdx.x] *= T(2); }
// TMPL: error: no double reference for kernel 'withTemplate<float>': {{.*}}reference-refusals.cu:[[@LINE-1]]:{{[0-9]+}}: a kernel template that computes in float (promoted copies of templates are not supported yet)
// SHARED: error: no double reference for kernel 'withBigShared': {{.*}}reference-refusals.cu:[[@LINE+1]]:{{[0-9]+}}: the promoted static shared memory (65536 bytes) exceeds the 48 KiB of a static allocation
__global__ void withBigShared(float *y) {
  __shared__ float tile[8192];
  tile[threadIdx.x] = y[threadIdx.x];
  __syncthreads();
  y[threadIdx.x] = tile[8191 - threadIdx.x];
}
// MISSING: error: no kernel 'nosuch' in '{{.*}}reference-refusals.cu' (kernels: withAsm, withTexture, withHalf, withBits, withPunning, withStruct, withMacro, withTemplate<float>, withBigShared, laneAsm)
// LANE: note: {{.*}}reference-refusals.cu:[[@LINE+3]]:{{[0-9]+}}: inline asm without float operands is kept
__global__ void laneAsm(float *y) {
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  y[lane] = 1.0f;
}

void run(cudaTextureObject_t t, float *y, __half *h, Particle *p) {
  withAsm<<<1, 1>>>(y);
  withTexture<<<1, 32>>>(t, y);
  withHalf<<<1, 32>>>(h, y);
  withBits<<<1, 1>>>(y);
  withPunning<<<1, 1>>>(y);
  withStruct<<<1, 32>>>(p);
  withMacro<<<1, 1>>>(y);
  withBigShared<<<1, 256>>>(y);
  laneAsm<<<1, 32>>>(y);
  withTemplate<<<1, 32>>>(y);
}
