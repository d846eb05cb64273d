// Fault: a device-side assertion failure (trap).
extern "C" __global__ void stencil(const float *in, const float *w, float *out,
                                   int n, int R) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 12345)
    __trap();
  if (i < n)
    out[i] = in[i];
}
