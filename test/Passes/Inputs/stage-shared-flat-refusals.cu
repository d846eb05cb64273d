// 1-D kernels that stage-shared-flat.test expects refused, each with the
// reason --list-transforms prints.
__global__ void twoDivisors(const float *in, float *out, int H, int W) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int r = idx / W, c = idx % H;
  if (idx < H * W)
    out[c * H + r] = in[r * W + c];
}

__global__ void noSplit(const float *in, float *out, int n) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < n)
    out[idx] = 2.0f * in[idx];
}

__global__ void localDivisor(const float *in, float *out, int H, int W) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int w = W + 0;
  int r = idx / w, c = idx % w;
  if (idx < H * W)
    out[c * H + r] = in[r * W + c];
}

__global__ void rowCopy(const float *in, float *out, int H, int W) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int r = idx / W, c = idx % W;
  if (idx < H * W)
    out[r * W + c] = in[r * W + c];
}

__global__ void permuted(const float *in, const int *perm, float *out, int H, int W) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int r = idx / W, c = idx % W;
  if (idx < H * W)
    out[c * H + r] = in[perm[r] * W + c];
}

__global__ void bothStrided(const float *in, float *out, int H, int W) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int r = idx / W, c = idx % W;
  if (idx < H * W)
    out[c * H + r] = in[c * H + r];
}

__global__ void runtimeBlock(const float *in, float *out, int H, int W) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int r = idx / W, c = idx % W;
  if (idx < H * W)
    out[c * H + r] = in[r * W + c];
}

__global__ void oddBlock(const float *in, float *out, int H, int W) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int r = idx / W, c = idx % W;
  if (idx < H * W)
    out[c * H + r] = in[r * W + c];
}

__global__ void twoDGrid(const float *in, float *out, int H, int W) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int r = idx / W, c = idx % W;
  if (idx < H * W)
    out[c * H + r] = in[r * W + c];
}

__global__ void sameBuffer(const float *in, float *out, int H, int W) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int r = idx / W, c = idx % W;
  if (idx < H * W)
    out[c * H + r] = in[r * W + c];
}

__global__ void gridStride(const float *in, float *out, int H, int W) {
  for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < H * W; idx += blockDim.x * gridDim.x)
    out[(idx % W) * H + idx / W] = in[idx];
}

void run(int H, int W, int threads) {
  float *in, *out, *d;
  int *perm;
  cudaMalloc(&in, sizeof(float) * H * W);
  cudaMalloc(&out, sizeof(float) * H * W);
  cudaMalloc(&d, sizeof(float) * H * W);
  cudaMalloc(&perm, sizeof(int) * H);
  int blocks = (H * W + 255) / 256;
  twoDivisors<<<blocks, 256>>>(in, out, H, W);
  noSplit<<<blocks, 256>>>(in, out, H * W);
  localDivisor<<<blocks, 256>>>(in, out, H, W);
  rowCopy<<<blocks, 256>>>(in, out, H, W);
  permuted<<<blocks, 256>>>(in, perm, out, H, W);
  bothStrided<<<blocks, 256>>>(in, out, H, W);
  runtimeBlock<<<(H * W + threads - 1) / threads, threads>>>(in, out, H, W);
  oddBlock<<<(H * W + 95) / 96, 96>>>(in, out, H, W);
  twoDGrid<<<dim3(blocks, 2), 256>>>(in, out, H, W);
  sameBuffer<<<blocks, 256>>>(d, d, H, W);
  gridStride<<<blocks, 256>>>(in, out, H, W);
}
