// A program to tune: an element-wise kernel and an atomic reduction.
__global__ void scale(float *x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= s;
}

__global__ void sum(const float *x, float *acc, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(acc, x[i]);
}

void run(float *x, float *acc, int n) {
  scale<<<(n + 255) / 256, 256>>>(x, 2.0f, n);
  sum<<<(n + 255) / 256, 256>>>(x, acc, n);
}
