// The original promoted to double (written by hand until the front end can).
#define CLAMP_IDX(j, n) ((j) < 0 ? 0 : ((j) >= (n) ? (n) - 1 : (j)))
extern "C" __global__ void stencil_ref(const double *in, const double *w,
                                       double *out, int n, int R) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  double f = 0, b = 0;
  for (int k = -R; k <= R; ++k)
    f = fma(w[k + R], in[CLAMP_IDX(i + k, n)], f);
  for (int k = -R; k <= R; ++k) // the same taps, last to first
    b = fma(w[R - k], in[CLAMP_IDX(i - k, n)], b);
  out[i] = 0.5 * (f + b);
}
