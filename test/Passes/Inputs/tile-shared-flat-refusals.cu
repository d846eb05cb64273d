// Inputs of tile-shared-flat.test: 1-D matrix products the 1-D form refuses.
__global__ void oddBlock(const float *A, const float *B, float *C, int M, int N, int K) {
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

__global__ void twoDGrid(const float *A, const float *B, float *C, int M, int N, int K) {
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

__global__ void runtimeBlock(const float *A, const float *B, float *C, int M, int N, int K) {
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

__global__ void inPlaceFlat(const float *A, const float *B, float *C, int M, int N, int K) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int row = idx / N;
  int col = idx % N;
  if (idx < M * N) {
    C[row * N + col] = 0.0f;
    for (int k = 0; k < K; ++k)
      C[row * N + col] += A[row * K + k] * B[k * N + col];
  }
}

void launchAll(const float *A, const float *B, float *C, int M, int N, int K, int threads) {
  oddBlock<<<(M * N + 127) / 128, 128>>>(A, B, C, M, N, K);
  twoDGrid<<<dim3((M * N + 255) / 256, 2), 256>>>(A, B, C, M, N, K);
  runtimeBlock<<<(M * N + threads - 1) / threads, threads>>>(A, B, C, M, N, K);
  inPlaceFlat<<<(M * N + 255) / 256, 256>>>(A, B, C, M, N, K);
}
