// Kernels in other spellings that tile-shared-spellings-emulated.test
// rewrites and runs on the CPU (emulate-cuda.h): the product accumulated in
// place in C (PolyBench) and a scaled accumulator `sum = sum + s * a * b`.
// BEGIN-KERNELS
__global__ void inPlace(int ni, int nj, int nk, float alpha, float beta, const float *a,
                        const float *b, float *c) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if ((i < ni) && (j < nj)) {
    c[i * nj + j] *= beta;
    int k;
    for (k = 0; k < nk; k++) {
      c[i * nj + j] += alpha * a[i * nk + k] * b[k * nj + j];
    }
  }
}

__global__ void scaled(const float *X, const float *W, float *Y, int M, int N, int K, float s) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < M && c < N) {
    float sum = 0.0f;
    for (int t = 0; t < K; t++)
      sum = sum + s * X[r * K + t] * W[t * N + c];
    Y[r * N + c] = sum;
  }
}
// END-KERNELS

void launchAll(const float *A, const float *B, float *C, int M, int N, int K) {
  dim3 block(16, 16);
  dim3 grid((N + 15) / 16, (M + 15) / 16);
  inPlace<<<grid, block>>>(M, N, K, 1.5f, 0.75f, A, B, C);
  scaled<<<grid, block>>>(A, B, C, M, N, K, 0.5f);
}
