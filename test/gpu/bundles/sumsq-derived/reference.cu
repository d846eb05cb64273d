/* cudal1 reference of 'sumsq': entry sumsq_ref; args f32* f32* i32; reductions line 6: grid threads */ // Sum of squares with one float atomicAdd per element: the float sum loses
// the small addends once it is large (the DESIGN.md example).
extern "C" __global__ void sumsq(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(out, x[i] * x[i]);
}

// --- cudal1: the double reference of 'sumsq' (cudal1-opt --reference): float promoted to double
extern "C" __global__ void __launch_bounds__(1024) sumsq_ref(const double *x, double *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(out, x[i] * x[i]);
}
