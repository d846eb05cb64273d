// Fault: a store through a wild pointer (CUDA_ERROR_ILLEGAL_ADDRESS).
extern "C" __global__ void stencil(const float *in, const float *w, float *out,
                                   int n, int R) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0)
    *(volatile float *)(unsigned long long)(64) = 1.f;
  if (i < n)
    out[i] = in[i];
}
