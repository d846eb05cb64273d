// Fault: an endless loop.
extern "C" __global__ void stencil(const float *in, const float *w, float *out,
                                   int n, int R) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  volatile float *o = out;
  while (o[i] != 3.0f)
    o[i] = 0.0f;
}
