// Shared memory, barriers and atomics: a tiled matrix product and an
// atomic reduction written the way they usually are.
// RUN: cudal1-opt %s --analyze=text | FileCheck %s

#define TILE 16

// No guard: a larger grid would write C out of range.
// CHECK-LABEL: kernel matmul_tiled
// CHECK: guarded: no
// CHECK: loop 0 (for, depth 0) t < (K + TILE - 1) / TILE
// CHECK: loop 1 (for, depth 1) k < TILE
// CHECK: read  A[row * K + t * TILE + threadIdx.x]  stride_x=1
// CHECK: read  B[(t * TILE + threadIdx.y) * N + col]  stride_x=1
// CHECK: write C[row * N + col]  stride_x=1
// CHECK: shared float[16][16] As (1024 bytes)
// CHECK: shared float[16][16] Bs (1024 bytes)
// CHECK: barriers: 2
__global__ void matmul_tiled(const float *A, const float *B, float *C, int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y;
  int col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
    As[threadIdx.y][threadIdx.x] = A[row * K + t * TILE + threadIdx.x];
    Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * N + col];
    __syncthreads();
    for (int k = 0; k < TILE; ++k)
      acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  C[row * N + col] = acc;
}

// The atomic target is read and written (one record each), stride 0.
// CHECK-LABEL: kernel sum_squares
// CHECK: guarded: yes
// CHECK: read  x[i]  stride_x=1
// CHECK: read  atomic sum[0]  stride_x=0
// CHECK: write atomic sum[0]  stride_x=0
// CHECK: atomic atomicAdd on sum
__global__ void sum_squares(const float *x, float *sum, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    atomicAdd(&sum[0], v * v);
  }
}

// CHECK-LABEL: kernel histogram
// CHECK: read  atomic hist[threadIdx.x]  stride_x=1
// CHECK: shared unsigned int[] bins (dynamic)
// CHECK: atomic atomicAdd on bins
// CHECK: atomic atomicAdd on hist
__global__ void histogram(const unsigned char *data, unsigned *hist, int n, int nbins) {
  extern __shared__ unsigned bins[];
  for (int b = threadIdx.x; b < nbins; b += blockDim.x)
    bins[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&bins[data[i]], 1u);
  __syncthreads();
  if (threadIdx.x < nbins)
    atomicAdd(&hist[threadIdx.x], bins[threadIdx.x]);
}
