// Matrix products with a 1-D thread mapping (row = idx / N, col = idx % N)
// that tile-shared-flat.test rewrites and runs on the CPU (emulate-cuda.h):
// the corpus's form (l1_matmul_flat), a row bound with a transposed B and a
// scaled sum stored at C[idx], and a double product in blocks of 64.
// BEGIN-KERNELS
__global__ void flatProduct(const float *A, const float *B, float *C, int M, int N, int K) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int row = idx / N;
  int col = idx % N;
  if (idx < M * N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
      acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
}

__global__ void flatRows(const float *X, const float *W, float *Y, int M, int N, int K, float s) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  int r = i / N, c = i % N;
  if (r < M) {
    float sum = 0.0f;
    for (int t = 0; t < K; t++)
      sum = sum + s * X[r * K + t] * W[c * K + t];
    Y[i] = sum;
  }
}

__global__ void flatDouble(const double *A, const double *B, double *C, int M, int N, int K) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int row = idx / N;
  int col = idx % N;
  if (idx < M * N) {
    double acc = 0.0;
    for (int k = 0; k < K; ++k)
      acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
}
// END-KERNELS

void launchAll(const float *A, const float *B, float *C, const double *dA, const double *dB,
               double *dC, int M, int N, int K) {
  flatProduct<<<(M * N + 255) / 256, 256>>>(A, B, C, M, N, K);
  const int threads = 256;
  flatRows<<<(M * N + threads - 1) / threads, threads>>>(A, B, C, M, N, K, 0.5f);
  flatDouble<<<dim3((M * N + 63) / 64), dim3(64)>>>(dA, dB, dC, M, N, K);
}
