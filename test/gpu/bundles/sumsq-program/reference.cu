/* cudal1 reference program: 2 of 2 kernel(s) promoted */ // The float-atomic sum of 2^24 squares as a whole program (issue 15 item 2):
// every thread adds its square to one float with atomicAdd, so the sum
// loses the small addends once it is large; the program prints the sum and
// the GPU time of the kernel. Build: nvcc -O3 -arch=sm_90 original.cu
#include <cstdio>
#include <cuda_runtime.h>

__global__ void fill(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned h = (unsigned)i * 2654435761u;
    h ^= h >> 15;
    x[i] = (h & 0xffffff) / 16777216.0f;
  }
} extern "C++" { static void cudal1_refcall_fill_ref(dim3 cudal1_grid, dim3 cudal1_block, size_t cudal1_shmem, cudaStream_t cudal1_stream, float * cudal1_p0, int cudal1_p1); }

__global__ void sumsq(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(out, x[i] * x[i]);
} extern "C++" { static void cudal1_refcall_sumsq_ref(dim3 cudal1_grid, dim3 cudal1_block, size_t cudal1_shmem, cudaStream_t cudal1_stream, const float * cudal1_p0, float * cudal1_p1, int cudal1_p2); }

int main() {
  const int n = 1 << 24;
  float *x, *sum;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&sum, sizeof(float)) != cudaSuccess) {
    fprintf(stderr, "cudaMalloc failed\n");
    return 1;
  }
  ::cudal1_refcall_fill_ref(((n + 255) / 256), (256), 0, 0, x, n);
  cudaMemset(sum, 0, sizeof(float));
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  ::cudal1_refcall_sumsq_ref(((n + 255) / 256), (256), 0, 0, x, sum, n);
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0, s = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaMemcpy(&s, sum, sizeof(float), cudaMemcpyDeviceToHost);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(e));
    return 1;
  }
  printf("sum of squares: %.6e\n", s);
  printf("gpu_ms=%.4f\n", ms);
  return 0;
}

// --- cudal1: the reference program's runtime (docs/Reference.md)
#include <stdio.h>
#include <stdlib.h>
namespace cudal1_refprog {
typedef int (*GetRangeFn)(unsigned long long *, size_t *, unsigned long long);
struct Shadow {
  unsigned long long base;
  size_t bytes;
  double *wide;
  float *snap;
  bool valid;
  Shadow *next;
};
static Shadow *shadows = 0;
static GetRangeFn getRange() {
  static GetRangeFn fn = 0;
  static bool tried = false;
  if (!tried) {
    tried = true;
    void *p = 0;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &p, 12000, cudaEnableDefault,
                                         &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
      fn = (GetRangeFn)p;
  }
  return fn;
}
static void fatal(const char *kernel, const char *what, cudaError_t e) {
  fprintf(stderr, "cudal1 reference program: kernel '%s': %s: %s\n", kernel, what,
          cudaGetErrorString(e));
  exit(86);
}
static void note(const char *kernel, const char *why) {
  static const char *noted[64];
  static int count = 0;
  for (int i = 0; i < count; ++i)
    if (noted[i] == kernel)
      return;
  if (count < 64)
    noted[count++] = kernel;
  const char *path = getenv("CUDAL1_REFERENCE_NOTES");
  FILE *f = path && *path ? fopen(path, "a") : 0;
  if (!f)
    return;
  fprintf(f, "kernel '%s' ran in float at least once: %s\n", kernel, why);
  fclose(f);
}
// Where the float value is what the double rounds to, the double stands
// (the reference's own result); elsewhere the host or a float kernel wrote
// it and it is widened.
static __global__ void enterKernel(const float *cur, double *wide, float *snap, size_t n,
                                   int valid) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    float c = cur[i];
    snap[i] = c;
    if (!valid || __float_as_uint(__double2float_rn(wide[i])) != __float_as_uint(c))
      wide[i] = (double)c;
  }
}
// Rounded back where the reference changed the value, unless the float
// itself changed meanwhile (a non-float pointer into the same allocation).
static __global__ void leaveKernel(float *cur, const double *wide, const float *snap, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    float s = snap[i];
    if (__float_as_uint(cur[i]) != __float_as_uint(s))
      continue;
    double w = wide[i];
    // NaN by its bits: no math header, no fast-math assumption.
    bool nanW = (__double_as_longlong(w) & 0x7fffffffffffffffLL) > 0x7ff0000000000000LL;
    bool nanS = (__float_as_uint(s) & 0x7fffffffu) > 0x7f800000u;
    bool same = nanW ? nanS : __float_as_uint(__double2float_rn(w)) == __float_as_uint(s);
    if (!same)
      cur[i] = __double2float_rn(w);
  }
}
static void release(Shadow *s) {
  cudaFree(s->wide);
  cudaFree(s->snap);
  s->wide = 0;
  s->snap = 0;
  s->valid = false;
}
// Frees shadows of allocations that are gone or were replaced.
static void prune(unsigned long long keepBase) {
  GetRangeFn f = getRange();
  for (Shadow *s = shadows; s; s = s->next) {
    unsigned long long b = 0;
    size_t n = 0;
    if (s->wide && s->base != keepBase && (f(&b, &n, s->base) != 0 || b != s->base || n != s->bytes))
      release(s);
  }
  cudaGetLastError();
}
struct Launch {
  const char *kernel;
  cudaStream_t stream;
  const char *why;
  Shadow *used[64];
  int count;
  Launch(const char *k, cudaStream_t s) : kernel(k), stream(s), why(0), count(0) {
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (cudaPeekAtLastError() != cudaSuccess)
      why = "an earlier CUDA error is pending";
    else if (cudaStreamIsCapturing(s, &cs) != cudaSuccess || cs != cudaStreamCaptureStatusNone)
      why = "the launch is inside a stream capture";
  }
  // The double shadow of the float buffer at p, at the same element.
  void *shadow(const void *p) {
    if (!p || why)
      return 0;
    GetRangeFn f = getRange();
    unsigned long long base = 0, at = (unsigned long long)(size_t)p;
    size_t bytes = 0;
    if (!f) {
      why = "cuMemGetAddressRange is not reachable";
      return 0;
    }
    if (f(&base, &bytes, at) != 0) {
      why = "a float argument is not in a device allocation";
      return 0;
    }
    if ((at - base) % 4) {
      why = "a float argument is not 4-byte aligned in its allocation";
      return 0;
    }
    Shadow *s = 0;
    for (Shadow *x = shadows; x; x = x->next)
      if (x->base == base)
        s = x;
    if (s && s->bytes != bytes)
      release(s);
    if (!s) {
      s = (Shadow *)calloc(1, sizeof(Shadow));
      if (!s) {
        why = "out of host memory";
        return 0;
      }
      s->base = base;
      s->next = shadows;
      shadows = s;
    }
    s->bytes = bytes;
    if (!s->wide) {
      size_t n = bytes / 4;
      for (int attempt = 0; attempt < 2 && !s->wide; ++attempt) {
        if (attempt)
          prune(base);
        if (cudaMalloc((void **)&s->wide, n * 8 + 8) != cudaSuccess ||
            cudaMalloc((void **)&s->snap, n * 4 + 4) != cudaSuccess) {
          cudaGetLastError(); // ours, not the program's
          release(s);
        }
      }
      if (!s->wide) {
        why = "no device memory for the double shadow";
        return 0;
      }
    }
    bool seen = false;
    for (int i = 0; i < count; ++i)
      seen |= used[i] == s;
    if (!seen) {
      if (count == 64) {
        why = "more than 64 float buffers";
        return 0;
      }
      used[count++] = s;
    }
    return (char *)s->wide + (at - base) / 4 * 8;
  }
  static unsigned blocksFor(size_t n) {
    size_t b = (n + 255) / 256;
    return (unsigned)(b < 4096 ? (b ? b : 1) : 4096);
  }
  // Synchronous on purpose: the reference program is run for its output,
  // not timed, and shadows are per allocation, not per stream.
  bool enter() {
    if (why) {
      note(kernel, why);
      return false;
    }
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess)
      fatal(kernel, "before its reference", e);
    for (int i = 0; i < count; ++i) {
      Shadow *s = used[i];
      size_t n = s->bytes / 4;
      enterKernel<<<blocksFor(n), 256, 0, stream>>>((const float *)(size_t)s->base, s->wide,
                                                     s->snap, n, s->valid ? 1 : 0);
      s->valid = true;
    }
    e = cudaGetLastError();
    if (e != cudaSuccess)
      fatal(kernel, "widening its float buffers", e);
    return true;
  }
  // After the reference's launch (its launch error): false when it did not
  // launch, and the float kernel must run instead.
  bool leave(cudaError_t launched) {
    if (launched != cudaSuccess) {
      cudaError_t e = cudaDeviceSynchronize();
      if (e != cudaSuccess)
        fatal(kernel, "its reference", e);
      note(kernel, "its reference does not launch with this configuration");
      return false;
    }
    for (int i = 0; i < count; ++i) {
      Shadow *s = used[i];
      size_t n = s->bytes / 4;
      leaveKernel<<<blocksFor(n), 256, 0, stream>>>((float *)(size_t)s->base, s->wide, s->snap,
                                                     n);
    }
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess)
      fatal(kernel, "its reference", e);
    return true;
  }
};
inline double widen(float v) { return v; }
inline double1 widen(float1 v) { return make_double1(v.x); }
inline double2 widen(float2 v) { return make_double2(v.x, v.y); }
inline double3 widen(float3 v) { return make_double3(v.x, v.y, v.z); }
inline double4_16a widen(float4 v) { return make_double4_16a(v.x, v.y, v.z, v.w); }
template <class T> inline T widen(T v) { return v; }
} // namespace cudal1_refprog
// --- cudal1: the double references (cudal1-opt --reference)
extern "C" __global__ void __launch_bounds__(1024) fill_ref(double *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned h = (unsigned)i * 2654435761u;
    h ^= h >> 15;
    x[i] = (h & 0xffffff) / 16777216.0;
  }
}
extern "C" __global__ void __launch_bounds__(1024) sumsq_ref(const double *x, double *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(out, x[i] * x[i]);
}
// --- cudal1: the launches of the promoted kernels
extern "C++" { static void cudal1_refcall_fill_ref(dim3 cudal1_grid, dim3 cudal1_block, size_t cudal1_shmem, cudaStream_t cudal1_stream, float * cudal1_p0, int cudal1_p1) {
  cudal1_refprog::Launch cudal1_l("fill", cudal1_stream);
  double * cudal1_r0 = (double *)cudal1_l.shadow(cudal1_p0);
  if (cudal1_l.enter()) {
    if (2 * cudal1_shmem > 48 * 1024)
      cudaFuncSetAttribute(fill_ref, cudaFuncAttributeMaxDynamicSharedMemorySize, int(2 * cudal1_shmem));
    fill_ref<<<cudal1_grid, cudal1_block, 2 * cudal1_shmem, cudal1_stream>>>(cudal1_r0, cudal1_p1);
    if (cudal1_l.leave(cudaGetLastError()))
      return;
  }
  fill<<<cudal1_grid, cudal1_block, cudal1_shmem, cudal1_stream>>>(cudal1_p0, cudal1_p1);
} } 
extern "C++" { static void cudal1_refcall_sumsq_ref(dim3 cudal1_grid, dim3 cudal1_block, size_t cudal1_shmem, cudaStream_t cudal1_stream, const float * cudal1_p0, float * cudal1_p1, int cudal1_p2) {
  cudal1_refprog::Launch cudal1_l("sumsq", cudal1_stream);
  const double * cudal1_r0 = (const double *)cudal1_l.shadow(cudal1_p0);
  double * cudal1_r1 = (double *)cudal1_l.shadow(cudal1_p1);
  if (cudal1_l.enter()) {
    if (2 * cudal1_shmem > 48 * 1024)
      cudaFuncSetAttribute(sumsq_ref, cudaFuncAttributeMaxDynamicSharedMemorySize, int(2 * cudal1_shmem));
    sumsq_ref<<<cudal1_grid, cudal1_block, 2 * cudal1_shmem, cudal1_stream>>>(cudal1_r0, cudal1_r1, cudal1_p2);
    if (cudal1_l.leave(cudaGetLastError()))
      return;
  }
  sumsq<<<cudal1_grid, cudal1_block, cudal1_shmem, cudal1_stream>>>(cudal1_p0, cudal1_p1, cudal1_p2);
} } 
