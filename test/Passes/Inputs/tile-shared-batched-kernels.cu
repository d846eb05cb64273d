// A batched product (bench/corpus/l1_matmul_batched.cu: blockIdx.z picks the
// batch entry through pointers into the batch) that
// tile-shared-batched.test rewrites and runs on the CPU (emulate-cuda.h).
// BEGIN-KERNELS
__global__ void bmm(const float *A, const float *B, float *C, int n) {
  int b = blockIdx.z;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  const float *a = A + (unsigned long)b * n * n;
  const float *bm = B + (unsigned long)b * n * n;
  if (row < n && col < n) {
    float acc = 0.0f;
    for (int k = 0; k < n; ++k)
      acc += a[row * n + k] * bm[k * n + col];
    C[(unsigned long)b * n * n + row * n + col] = acc;
  }
}
// END-KERNELS

void launchAll(const float *A, const float *B, float *C, int n, int batch) {
  dim3 block(16, 16);
  dim3 grid((n + 15) / 16, (n + 15) / 16, batch);
  bmm<<<grid, block>>>(A, B, C, n);
}
