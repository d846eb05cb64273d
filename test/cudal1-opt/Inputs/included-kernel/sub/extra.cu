// A .cu in another directory: left as an include (its own includes would
// resolve from here).
__global__ void clear(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = 0.0f;
}
