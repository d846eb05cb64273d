// Fault: a race: the tree reduction lost its barriers.
extern "C" __global__ void rowsum(const float *in, float *out, int cols) {
  __shared__ float part[256];
  const float *row = in + (size_t)blockIdx.x * cols;
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    s += row[c];
  part[threadIdx.x] = s;
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride)
      part[threadIdx.x] += part[threadIdx.x + stride];
  }
  if (threadIdx.x == 0)
    out[blockIdx.x] = part[0];
}
