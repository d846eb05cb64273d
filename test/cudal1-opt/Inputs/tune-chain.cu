// A program to tune whose kernels' best plans do not all combine: fusing
// half into twice takes twice's launch away.
__global__ void half(float *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    v[i] *= 0.5f;
}

__global__ void twice(float *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    v[i] *= 2.0f;
}

__global__ void copy(const float *v, float *w, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    w[i] = v[i];
}

void run(int n) {
  float *v, *w;
  cudaMalloc(&v, n * sizeof(float));
  cudaMalloc(&w, n * sizeof(float));
  half<<<(n + 255) / 256, 256>>>(v, n);
  twice<<<(n + 255) / 256, 256>>>(v, n);
  cudaDeviceSynchronize();
  copy<<<(n + 255) / 256, 256>>>(v, w, n);
}
