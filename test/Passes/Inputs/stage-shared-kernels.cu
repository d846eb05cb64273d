// Kernels that stage-shared-emulated.test rewrites and then runs on the CPU
// (emulate-cuda.h): the lines between the markers are cut out of the
// original and of each variant.
// BEGIN-KERNELS
// Read unit-stride along x, write strided: computed along x, stored along y.
__global__ void transpose(const float *in, float *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[c * rows + r] = in[r * cols + c];
}

// The reverse, in double, with an early return.
__global__ void transposeD(const double *in, double *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  int c = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= rows || c >= cols)
    return;
  out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
}

// An element-wise function: a scale, a local, a broadcast bias per row, and
// a guard that leaves out part of the square (the lower triangle only).
__global__ void scaleT(const float *__restrict__ in, const float *__restrict__ bias,
                       float *__restrict__ out, float alpha, int rows, int cols) {
  int c = threadIdx.x + blockIdx.x * blockDim.x, r = blockDim.y * blockIdx.y + threadIdx.y;
  if (c < cols && r < rows && c <= r + 3) {
    float v = alpha * in[r * cols + c] - 0.5f * c;
    out[c * rows + r] = v + bias[r];
  }
}

// Indices derived from the ids, before the guard and inside it.
__global__ void derived(const float *in, float *out, int rows, int cols) {
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int src = r * cols + c;
  if (r < rows && c < cols) {
    int dst = c * rows + r;
    out[dst] = in[src] * in[src];
  }
}
// END-KERNELS

void launchAll(int rows, int cols) {
  float *in, *out, *bias;
  double *inD, *outD;
  cudaMalloc(&in, sizeof(float) * rows * cols);
  cudaMalloc(&out, sizeof(float) * rows * cols);
  cudaMalloc(&bias, sizeof(float) * rows);
  cudaMalloc(&inD, sizeof(double) * rows * cols);
  cudaMalloc(&outD, sizeof(double) * rows * cols);
  dim3 block(32, 8);
  dim3 grid((cols + 31) / 32, (rows + 7) / 8);
  transpose<<<grid, block>>>(in, out, rows, cols);
  derived<<<dim3((cols + 15) / 16, (rows + 15) / 16), dim3(16, 16)>>>(in, out, rows, cols);
  dim3 gridD((rows + 15) / 16, (cols + 15) / 16);
  transposeD<<<gridD, dim3(16, 16)>>>(inD, outD, rows, cols);
  scaleT<<<dim3((cols + 7) / 8, (rows + 31) / 32), dim3(8, 32)>>>(in, bias, out, 1.5f, rows, cols);
}
