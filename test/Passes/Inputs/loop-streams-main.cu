// The program test/gpu/loop-streams.sh runs with loop-streams applied (S = 2
// and 4) and compares with the original: every output line must be equal
// (each element is computed by one thread in a fixed order, whatever the
// stream). The loops: @loop#2 (row sums of four matrices, then a kernel on
// the default stream reads all four results: the join must order it),
// @loop#3 (in place on a stream variable, then an asynchronous copy on that
// stream: the join must order it), @loop#7 (eight iterations on four
// buffers pairs, reading a shared fresh input).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    cudaError_t e = (call);                                                                        \
    if (e != cudaSuccess) {                                                                        \
      printf("cuda error %s at line %d\n", cudaGetErrorString(e), __LINE__);                       \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

__global__ void fill(float *x, int n, int seed) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = (float)((i * 7 + seed * 13) % 101) / 101.0f;
}

__global__ void rowsum(const float *A, float *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = 0.0f;
    for (int c = 0; c < cols; ++c)
      s += A[(size_t)r * cols + c] * (1.0f + 0.001f * c);
    out[r] = s;
  }
}

__global__ void scaleBy(float *x, const float *f, int n, int reps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    for (int k = 0; k < reps; ++k)
      x[i] = x[i] * f[i % 32] + 0.5f;
}

__global__ void combine(const float *a, const float *b, const float *c, const float *d, float *t,
                        int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    t[i] = a[i] + 2.0f * b[i] + 3.0f * c[i] + 4.0f * d[i];
}

static double sumOf(const float *d, int n) {
  float *h = (float *)malloc(n * sizeof(float));
  CHECK(cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost));
  double s = 0;
  for (int i = 0; i < n; ++i)
    s += (double)h[i] * (1.0 + (i % 7));
  free(h);
  return s;
}

int main() {
  const int rows = 2048, cols = 4096;
  float *A[4], *out[4];
  float *total = nullptr, *f = nullptr;
  CHECK(cudaMalloc(&total, rows * sizeof(float)));
  CHECK(cudaMalloc(&f, 32 * sizeof(float)));
  for (int k = 0; k < 4; ++k) {
    CHECK(cudaMalloc(&A[k], (size_t)rows * cols * sizeof(float)));
    CHECK(cudaMalloc(&out[k], rows * sizeof(float)));
    fill<<<(rows * cols + 255) / 256, 256>>>(A[k], rows * cols, k);
  }
  fill<<<1, 32>>>(f, 32, 9);
  CHECK(cudaDeviceSynchronize());
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));

  CHECK(cudaEventRecord(t0));
  for (int k = 0; k < 4; ++k)
    rowsum<<<(rows + 127) / 128, 128>>>(A[k], out[k], rows, cols);
  combine<<<(rows + 255) / 256, 256>>>(out[0], out[1], out[2], out[3], total, rows);
  CHECK(cudaEventRecord(t1));
  CHECK(cudaEventSynchronize(t1));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, t0, t1));
  printf("loop1 checksum=%.9e\n", sumOf(total, rows));
  printf("time loop1 %.4f\n", ms);

  cudaStream_t st;
  CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  float *host = (float *)malloc(4 * rows * sizeof(float));
  for (int k = 0; k < 4; ++k) {
    scaleBy<<<(rows + 127) / 128, 128, 0, st>>>(out[k], f, rows, 2000);
    CHECK(cudaGetLastError());
  }
  CHECK(cudaMemcpyAsync(host, out[3], rows * sizeof(float), cudaMemcpyDeviceToHost, st));
  CHECK(cudaStreamSynchronize(st));
  double s = 0;
  for (int i = 0; i < rows; ++i)
    s += host[i] * (1.0 + i % 5);
  printf("loop2 checksum=%.9e\n", s);
  for (int k = 0; k < 4; ++k)
    printf("loop2 out%d checksum=%.9e\n", k, sumOf(out[k], rows));

  float *B[8], *C[8];
  for (int k = 0; k < 8; ++k) {
    CHECK(cudaMalloc(&B[k], rows * sizeof(float)));
    CHECK(cudaMalloc(&C[k], rows * sizeof(float)));
    fill<<<(rows + 255) / 256, 256>>>(B[k], rows, 20 + k);
  }
  for (int k = 7; k >= 0; --k)
    rowsum<<<(rows + 127) / 128, 128>>>(B[k], C[k], rows / 4, 4);
  CHECK(cudaDeviceSynchronize());
  for (int k = 0; k < 8; ++k)
    printf("loop3 C%d checksum=%.9e\n", k, sumOf(C[k], rows / 4));
  free(host);
  return 0;
}
