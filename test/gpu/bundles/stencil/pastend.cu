// Fault: the bounds check lets thread n through (launched with one extra
// block), which writes one element past the end of out.
#define CLAMP_IDX(j, n) ((j) < 0 ? 0 : ((j) >= (n) ? (n) - 1 : (j)))
extern "C" __global__ void stencil(const float *in, const float *w, float *out,
                                   int n, int R) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > n)
    return;
  float f = 0.f;
  for (int k = -R; k <= R; ++k)
    f = fmaf(w[k + R], in[CLAMP_IDX(i + k, n)], f);
  out[i] = f;
}
