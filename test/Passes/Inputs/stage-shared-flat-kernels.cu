// Kernels with a 1-D thread mapping (row = idx / W, col = idx % W) that
// stage-shared-flat.test rewrites and runs on the CPU (emulate-cuda.h): the
// lines between the markers are cut out of the original and of the variant.
// BEGIN-KERNELS
// The naive transpose as it is usually written: read along the row, store
// strided; computed with threadIdx.x along the column, stored along the row.
__global__ void flatTranspose(const float *in, float *out, int H, int W) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int r = idx / W, c = idx % W;
  if (idx < H * W)
    out[c * H + r] = in[r * W + c];
}

// Threads over the output, the split inline, in double: the store is
// unit-stride and the read strided, so the phases swap.
__global__ void flatGather(const double *in, double *out, int rows, int cols) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i < rows * cols)
    out[i] = in[(i % rows) * cols + i / rows];
}

// An early return, the column as idx - r * W, a derived value before the
// guard, a local, a scale and a broadcast bias per output row.
__global__ void flatScale(const float *__restrict__ in, const float *__restrict__ bias,
                          float *__restrict__ out, float alpha, int H, int W) {
  int idx = blockDim.x * blockIdx.x + threadIdx.x;
  int n = H * W;
  if (idx >= n)
    return;
  int r = idx / W;
  int c = idx - r * W;
  float v = alpha * in[idx] - 0.5f * r;
  out[c * H + r] = v + bias[c];
}
// END-KERNELS

void launchAll(int H, int W) {
  float *in, *out, *bias;
  double *inD, *outD;
  cudaMalloc(&in, sizeof(float) * H * W);
  cudaMalloc(&out, sizeof(float) * H * W);
  cudaMalloc(&bias, sizeof(float) * W);
  cudaMalloc(&inD, sizeof(double) * H * W);
  cudaMalloc(&outD, sizeof(double) * H * W);
  flatTranspose<<<(H * W + 255) / 256, 256>>>(in, out, H, W);
  const int threads = 128;
  flatGather<<<dim3((H * W + threads - 1) / threads), dim3(threads)>>>(inD, outD, H, W);
  flatScale<<<(H * W + 1023) / 1024, 1024>>>(in, bias, out, 1.5f, H, W);
}
