// A kernel with a loop, and host helpers, defined in a header.
__global__ void inHeader(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int j = 0; j < 4; ++j)
    if (i < n)
      a[i] += 1.0f;
}

inline int checksum(const float *h, int n) {
  int s = 0;
  for (int i = 0; i < n; ++i)
    s += int(h[i]);
  for (int i = 0; i < n; ++i)
    s ^= i;
  return s;
}

#define FOR4(j) for (int j = 0; j < 4; ++j)
