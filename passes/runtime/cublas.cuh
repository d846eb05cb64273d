#ifndef CUDAL1_CUBLAS
#define CUDAL1_CUBLAS
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cublas_v2.h>
// cudal1 library: cuBLAS calls for recognized GEMM/GEMV kernels (link with
// -lcublas). Matrices are row-major as in the kernels: row-major
// C (m x n) = op(A) op(B) is column-major C^T = op(B)^T op(A)^T. Each call
// names the handle it uses (library's handle= parameter says where it is
// made: handle=static, one object of the program made before main;
// handle=local, a static local of the call site, made at the call's first
// execution; handle=setup, Cudal1CublasSetup below). Handles are never
// destroyed (the CUDA runtime may be torn down first at exit).
struct Cudal1Cublas {
  cublasHandle_t handle = nullptr;
  Cudal1Cublas() { check(cublasCreate(&handle), "cublasCreate"); }
  static void check(cublasStatus_t s, const char *what) {
    if (s != CUBLAS_STATUS_SUCCESS) {
      fprintf(stderr, "cudal1 library: %s failed (cuBLAS status %d)\n", what, (int)s);
      exit(1);
    }
  }
  static int dim(long long v) {
    if (v > INT_MAX) {
      fprintf(stderr, "cudal1 library: dimension %lld is too large for cuBLAS\n", v);
      exit(1);
    }
    return (int)v;
  }
  cublasHandle_t on(cudaStream_t stream) {
    check(cublasSetStream(handle, stream), "cublasSetStream");
    return handle;
  }
};

// handle=setup: all of cuBLAS's one-time set-up as program set-up, before
// main. The first base asks the CUDA driver to load every module when the
// runtime starts (CUDA_MODULE_LOADING=EAGER, unless the environment sets a
// mode; it takes effect only if nothing initialised CUDA before this
// object), so cuBLAS's kernels are loaded with the handle, not at the first
// call; then one 1x1 call of each routine runs (its own scratch memory) and
// completes.
struct Cudal1EagerLoading {
  Cudal1EagerLoading() { setenv("CUDA_MODULE_LOADING", "EAGER", 0); }
};
struct Cudal1CublasSetup : Cudal1EagerLoading, Cudal1Cublas {
  Cudal1CublasSetup() {
    float *f = nullptr;
    double *d = nullptr;
    if (cudaMalloc(&f, 3 * sizeof(float)) != cudaSuccess ||
        cudaMalloc(&d, 3 * sizeof(double)) != cudaSuccess) {
      fprintf(stderr, "cudal1 library: cudaMalloc failed in the cuBLAS warm-up\n");
      exit(1);
    }
    float f1 = 1, f0 = 0;
    double d1 = 1, d0 = 0;
    cublasHandle_t h = on(0);
    check(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &f1, f, 1, f + 1, 1, &f0, f + 2, 1),
          "cublasSgemm");
    check(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &d1, d, 1, d + 1, 1, &d0, d + 2, 1),
          "cublasDgemm");
    check(cublasSgemv(h, CUBLAS_OP_N, 1, 1, &f1, f, 1, f + 1, 1, &f0, f + 2, 1), "cublasSgemv");
    check(cublasDgemv(h, CUBLAS_OP_N, 1, 1, &d1, d, 1, d + 1, 1, &d0, d + 2, 1), "cublasDgemv");
    if (cudaDeviceSynchronize() != cudaSuccess) {
      fprintf(stderr, "cudal1 library: the cuBLAS warm-up failed\n");
      exit(1);
    }
    cudaFree(f);
    cudaFree(d);
  }
};

// C (m x n) = alpha * op(A) op(B) + beta * C; A is m x k (transA: stored
// k x m), B is k x n (transB: stored n x k), all row-major, C's rows n apart.
#define CUDAL1_GEMM(T, FN)                                                              \
  inline void cudal1Gemm(Cudal1Cublas &h, bool transA, bool transB, long long m,        \
                         long long n, long long k, T alpha, const T *a, const T *b,     \
                         T beta, T *c, cudaStream_t s) {                                \
    if (m <= 0 || n <= 0) return;                                                       \
    if (k < 0) k = 0;                                                                   \
    int M = Cudal1Cublas::dim(m), N = Cudal1Cublas::dim(n), K = Cudal1Cublas::dim(k);   \
    int lda = transA ? M : K, ldb = transB ? K : N;                                     \
    Cudal1Cublas::check(FN(h.on(s), transB ? CUBLAS_OP_T : CUBLAS_OP_N,                 \
                           transA ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &alpha, b,      \
                           ldb > 1 ? ldb : 1, a, lda > 1 ? lda : 1, &beta, c, N),       \
                        #FN);                                                           \
  }
CUDAL1_GEMM(float, cublasSgemm)
CUDAL1_GEMM(double, cublasDgemm)
#undef CUDAL1_GEMM

// y (m) = alpha * op(A) x + beta * y; A is m x k (transA: stored k x m),
// row-major, x and y contiguous.
#define CUDAL1_GEMV(T, FN)                                                              \
  inline void cudal1Gemv(Cudal1Cublas &h, bool transA, long long m, long long k,        \
                         T alpha, const T *a, const T *x, T beta, T *y, cudaStream_t s) { \
    if (m <= 0) return;                                                                 \
    if (k < 0) k = 0;                                                                   \
    int M = Cudal1Cublas::dim(m), K = Cudal1Cublas::dim(k);                             \
    if (transA)                                                                         \
      Cudal1Cublas::check(FN(h.on(s), CUBLAS_OP_N, M, K, &alpha, a, M, x, 1, &beta, y,  \
                             1), #FN);                                                  \
    else                                                                                \
      Cudal1Cublas::check(FN(h.on(s), CUBLAS_OP_T, K, M, &alpha, a, K > 1 ? K : 1, x,   \
                             1, &beta, y, 1), #FN);                                     \
  }
CUDAL1_GEMV(float, cublasSgemv)
CUDAL1_GEMV(double, cublasDgemv)
#undef CUDAL1_GEMV
#endif
