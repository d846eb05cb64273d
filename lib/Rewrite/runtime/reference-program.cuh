
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
