// Correct and about 2x slower: four passes in four different orders.
#define CLAMP_IDX(j, n) ((j) < 0 ? 0 : ((j) >= (n) ? (n) - 1 : (j)))
extern "C" __global__ void stencil(const float *in, const float *w, float *out,
                                   int n, int R) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float f = 0.f, b = 0.f, e = 0.f, o = 0.f;
  for (int k = -R; k <= R; ++k)
    f = fmaf(w[k + R], in[CLAMP_IDX(i + k, n)], f);
  for (int k = -R; k <= R; ++k) // the same taps, last to first
    b = fmaf(w[R - k], in[CLAMP_IDX(i - k, n)], b);
  for (int k = -R; k <= R; k += 2)
    e = fmaf(w[k + R], in[CLAMP_IDX(i + k, n)], e);
  for (int k = -R + 1; k <= R; k += 2)
    e = fmaf(w[k + R], in[CLAMP_IDX(i + k, n)], e);
  for (int k = -R; k <= R; k += 2)
    o = fmaf(w[R - k], in[CLAMP_IDX(i - k, n)], o);
  for (int k = -R + 1; k <= R; k += 2)
    o = fmaf(w[R - k], in[CLAMP_IDX(i - k, n)], o);
  out[i] = 0.25f * ((f + b) + (e + o));
}
