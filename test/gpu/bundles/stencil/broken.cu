// Fault: does not compile.
extern "C" __global__ void stencil(const float *in, const float *w, float *out,
                                   int n, int R) {
  out[i] = in[i] +;
}
