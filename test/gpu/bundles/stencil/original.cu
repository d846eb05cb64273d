// A 1-D stencil, deliberately redundant: it sums the taps forward and
// backward and averages (so that a "2x faster" variant exists). The backward
// pass is a forward loop over mirrored taps: written as a descending loop
// (for (k = R; k >= -R; --k)) it was miscompiled by nvcc 13.0 -O3 for sm_90
// on the H200 (the sum came out about 8x too small; -G was right), see
// docs/results/evaluator-h200.md.
#define CLAMP_IDX(j, n) ((j) < 0 ? 0 : ((j) >= (n) ? (n) - 1 : (j)))
extern "C" __global__ void stencil(const float *in, const float *w, float *out,
                                   int n, int R) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float f = 0.f, b = 0.f;
  for (int k = -R; k <= R; ++k)
    f = fmaf(w[k + R], in[CLAMP_IDX(i + k, n)], f);
  for (int k = -R; k <= R; ++k) // the same taps, last to first
    b = fmaf(w[R - k], in[CLAMP_IDX(i - k, n)], b);
  out[i] = 0.5f * (f + b);
}
