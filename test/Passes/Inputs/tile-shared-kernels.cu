// Kernels that tile-shared-emulated.test rewrites and then runs on the CPU
// (emulate-cuda.h): the lines between the markers are cut out of the
// original and of each variant.
// BEGIN-KERNELS
__global__ void square(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float acc = 0.0f;
    for (int k = 0; k < n; ++k)
      acc += A[row * n + k] * B[k * n + col];
    C[row * n + col] = acc;
  }
}

// Rectangular, the accumulator initialised from the row, an epilogue that
// changes a variable declared outside the bounds check (each output must
// start from its initial value).
__global__ void rect(const float *A, const float *B, const float *bias, float *C, int M, int N,
                     int K) {
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int rowBase = r * K;
  float gain = 1.0f;
  if (c < N && r < M) {
    float s = bias[r % 7];
    for (int k = 0; k < K; ++k)
      s += A[rowBase + k] * B[k * N + c];
    gain += 0.5f;
    float t = s > 0.0f ? s : 0.5f * s;
    C[r * N + c] = t * gain + (float)(blockDim.y % 5);
  }
}

// The thread indices read directly, the column operand first.
__global__ void direct(const float *A, const float *B, float *C, int M, int N, int K) {
  if (blockIdx.y * blockDim.y + threadIdx.y < M && blockIdx.x * blockDim.x + threadIdx.x < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
      acc += B[k * N + blockIdx.x * blockDim.x + threadIdx.x] *
             A[(blockIdx.y * blockDim.y + threadIdx.y) * K + k];
    C[(blockIdx.y * blockDim.y + threadIdx.y) * N + blockIdx.x * blockDim.x + threadIdx.x] = acc;
  }
}
// END-KERNELS

void launchAll(const float *A, const float *B, const float *bias, float *C, int M, int N, int K) {
  dim3 block(16, 16);
  dim3 grid((N + 15) / 16, (M + 15) / 16);
  square<<<grid, block>>>(A, B, C, N);
  rect<<<grid, block>>>(A, B, bias, C, M, N, K);
  direct<<<grid, block>>>(A, B, C, M, N, K);
}
