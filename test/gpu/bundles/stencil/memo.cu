// Fault: remembers a signature of the inputs and skips the work when it has
// seen them before (right on the first launch, wrong on every later one).
#define CLAMP_IDX(j, n) ((j) < 0 ? 0 : ((j) >= (n) ? (n) - 1 : (j)))
__device__ unsigned int memoSig;
__device__ unsigned int memoValid;
__device__ unsigned int doneBlocks;
extern "C" __global__ void stencil(const float *in, const float *w, float *out,
                                   int n, int R) {
  unsigned sig = __float_as_uint(in[1]) * 31u + __float_as_uint(in[n - 1]) * 17u +
                 unsigned(n);
  if (memoValid && memoSig == sig)
    return;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float f = 0.f;
    for (int k = -R; k <= R; ++k)
      f = fmaf(w[k + R], in[CLAMP_IDX(i + k, n)], f);
    out[i] = f;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(&doneBlocks, 1u) == gridDim.x - 1) {
      memoSig = sig;
      memoValid = 1;
      doneBlocks = 0;
    }
  }
}
