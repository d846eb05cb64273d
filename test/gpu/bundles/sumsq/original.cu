// Sum of squares with one float atomicAdd per element: the float sum loses
// the small addends once it is large (the DESIGN.md example).
extern "C" __global__ void sumsq(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(out, x[i] * x[i]);
}
