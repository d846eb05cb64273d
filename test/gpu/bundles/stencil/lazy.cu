// Fault: right for its first four launches (enough to pass verification),
// then skips the work: only re-validation of timed launches catches it.
#define CLAMP_IDX(j, n) ((j) < 0 ? 0 : ((j) >= (n) ? (n) - 1 : (j)))
__device__ unsigned int lazyCalls;
__device__ unsigned int lazyDone;
extern "C" __global__ void stencil(const float *in, const float *w, float *out,
                                   int n, int R) {
  if (lazyCalls >= 4)
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
    if (atomicAdd(&lazyDone, 1u) == gridDim.x - 1) {
      lazyCalls = lazyCalls + 1;
      lazyDone = 0;
    }
  }
}
