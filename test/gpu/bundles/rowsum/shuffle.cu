// Correct: warp shuffles, then one shared-memory step (a reassociation).
extern "C" __global__ void rowsum(const float *in, float *out, int cols) {
  __shared__ float warpSums[32];
  const float *row = in + (size_t)blockIdx.x * cols;
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    s += row[c];
  for (int off = 16; off > 0; off /= 2)
    s += __shfl_down_sync(0xffffffffu, s, off);
  if ((threadIdx.x & 31) == 0)
    warpSums[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    s = threadIdx.x < blockDim.x / 32 ? warpSums[threadIdx.x] : 0.f;
    for (int off = 16; off > 0; off /= 2)
      s += __shfl_down_sync(0xffffffffu, s, off);
    if (threadIdx.x == 0)
      out[blockIdx.x] = s;
  }
}
