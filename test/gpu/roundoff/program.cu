// Roundoff-sensitive kernels for the judge (issue 15; test/gpu/roundoff.sh):
// a batched LU decomposition without pivoting, where last-bit differences
// grow through the elimination, and long row sums that cancel, where any
// reassociation moves the float result by more than a fixed 1e-4 relative
// tolerance. A
// correct rewrite (an unroll, a warp per row) is as close to the exact
// result as the original is, and the judge must accept it.
#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                                   \
  do {                                                                                             \
    cudaError_t e = (x);                                                                           \
    if (e != cudaSuccess) {                                                                        \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));                                 \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

// One thread factors one n x n matrix in place (Doolittle, no pivoting).
__global__ void lu_batched(float *a, int count, int n) {
  int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m < count) {
    float *A = a + (size_t)m * n * n;
    for (int k = 0; k < n; ++k) {
      for (int i = k + 1; i < n; ++i) {
        float l = A[i * n + k] / A[k * n + k];
        A[i * n + k] = l;
        for (int j = k + 1; j < n; ++j)
          A[i * n + j] -= l * A[k * n + j];
      }
    }
  }
}

// One thread sums one row.
__global__ void row_sums(const float *x, float *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = 0.0f;
    for (int j = 0; j < cols; ++j)
      s += x[r * cols + j];
    out[r] = s;
  }
}

static float uniform(unsigned long long &s) {
  s = s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (float)((s >> 40) & 0xffffff) / 16777216.0f * 2.0f - 1.0f;
}

int main() {
  const int count = 8192, n = 24, rows = 4096, cols = 16384;
  size_t na = (size_t)count * n * n, nx = (size_t)rows * cols;
  float *ha = (float *)std::malloc(na * sizeof(float));
  float *hx = (float *)std::malloc(nx * sizeof(float));
  unsigned long long seed = 12345;
  for (size_t i = 0; i < na; ++i)
    ha[i] = uniform(seed);
  for (int m = 0; m < count; ++m) // a weak diagonal: growth without pivoting
    for (int k = 0; k < n; ++k)
      ha[(size_t)m * n * n + k * n + k] += 0.5f;
  // Each row's second half cancels its first up to small residuals: the
  // partial sums reach about 50 while the row's sum is of the order of
  // 0.01, so any order of the additions moves it by 1e-4 to 1e-2 relative,
  // and a warp's 32 partial sums are as close to the exact sum as one
  // thread's (a simulation in float: errors 3e-4 to 3e-2 either way). The
  // first H200 run, with plain uniform terms, moved the sums by only 1.4e-6.
  for (int r = 0; r < rows; ++r) {
    float *row = hx + (size_t)r * cols;
    for (int j = 0; j < cols / 2; ++j)
      row[j] = uniform(seed);
    for (int j = 0; j < cols / 2; ++j)
      row[cols / 2 + j] = -row[j] + 1e-3f * uniform(seed);
  }
  float *a, *x, *out;
  CHECK(cudaMalloc(&a, na * sizeof(float)));
  CHECK(cudaMalloc(&x, nx * sizeof(float)));
  CHECK(cudaMalloc(&out, rows * sizeof(float)));
  CHECK(cudaMemcpy(a, ha, na * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(x, hx, nx * sizeof(float), cudaMemcpyHostToDevice));
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  CHECK(cudaEventRecord(t0));
  lu_batched<<<(count + 127) / 128, 128>>>(a, count, n);
  row_sums<<<(rows + 255) / 256, 256>>>(x, out, rows, cols);
  CHECK(cudaEventRecord(t1));
  CHECK(cudaEventSynchronize(t1));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, t0, t1));
  float *hout = (float *)std::malloc(rows * sizeof(float));
  CHECK(cudaMemcpy(ha, a, na * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(hout, out, rows * sizeof(float), cudaMemcpyDeviceToHost));
  // The last pivot of the first matrices: where the elimination's
  // roundoff has grown most.
  for (int m = 0; m < 6; ++m)
    std::printf("matrix %d last pivot=%.9e\n", m, ha[(size_t)m * n * n + n * n - 1]);
  for (int r = 0; r < 6; ++r)
    std::printf("row %d sum=%.9e\n", r, hout[r]);
  std::printf("gpu_ms=%.4f\n", ms);
  return 0;
}
