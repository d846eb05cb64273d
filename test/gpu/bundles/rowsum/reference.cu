// The original promoted to double.
extern "C" __global__ void rowsum_ref(const double *in, double *out, int cols) {
  __shared__ double part[256];
  const double *row = in + (size_t)blockIdx.x * cols;
  double s = 0;
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    s += row[c];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride)
      part[threadIdx.x] += part[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    out[blockIdx.x] = part[0];
}
