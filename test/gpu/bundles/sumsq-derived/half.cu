// Wrong: sums only the first half of the elements (the float atomic
// original is off by a few percent; this is off by half).
extern "C" __global__ void sumsq(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n / 2)
    atomicAdd(out, x[i] * x[i]);
}
