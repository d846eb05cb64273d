// Launch sites and host launch sequences: dim3 variables computed earlier,
// shared memory and stream arguments, launches inside loops, copies and
// synchronizations in source order with the buffers they touch.
// RUN: cudal1-opt %s --analyze=text | FileCheck %s
// RUN: cudal1-opt %s --analyze | FileCheck %s --check-prefix=JSON
#include <cuda_runtime.h>

__global__ void step(const float *in, float *out, int nx, int ny) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x > 0 && y > 0 && x < nx - 1 && y < ny - 1)
    out[y * nx + x] = 0.25f * (in[y * nx + x - 1] + in[y * nx + x + 1] +
                               in[(y - 1) * nx + x] + in[(y + 1) * nx + x]);
}

__global__ void norm(const float *v, float *result, int n) {
  extern __shared__ float partial[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < n ? v[i] * v[i] : 0.0f;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.0f;
    for (int k = 0; k < blockDim.x; ++k)
      s += partial[k];
    atomicAdd(result, s);
  }
}

// CHECK-LABEL: launches:
// CHECK-NEXT: #0 step<<<grid, block>>>  in solve  {{.*}}launches.cu:57:5  (in loop at line 56)
// CHECK-NEXT: #1 step<<<grid, block>>>  in solve  {{.*}}launches.cu:58:5  (in loop at line 56)
// CHECK-NEXT: #2 norm<<<blocks, threads, threads * sizeof(float), stream>>>  in solve
// CHECK-LABEL: host function solve:
// CHECK-NEXT: alloc cudaMalloc  writes d_a
// CHECK-NEXT: alloc cudaMalloc  writes d_b
// CHECK-NEXT: alloc cudaMalloc  writes d_r
// CHECK-NEXT: memcpy cudaMemcpy  reads h  writes d_a
// CHECK-NEXT: launch step  reads d_a  writes d_b  (loop)
// CHECK-NEXT: launch step  reads d_b  writes d_a  (loop)
// CHECK-NEXT: sync cudaDeviceSynchronize  (loop)
// CHECK-NEXT: call cudaStreamCreate
// CHECK-NEXT: launch norm  reads d_a d_r  writes d_r
// CHECK-NEXT: memcpy cudaMemcpy  reads d_r  writes h
// JSON: "grid_dims": 2,
// JSON: "block_dims": 2,
// JSON: "in_loop": true,
void solve(float *h, int nx, int ny, int iters) {
  float *d_a, *d_b, *d_r;
  size_t bytes = size_t(nx) * ny * sizeof(float);
  cudaMalloc(&d_a, bytes);
  cudaMalloc(&d_b, bytes);
  cudaMalloc(&d_r, sizeof(float));
  cudaMemcpy(d_a, h, bytes, cudaMemcpyHostToDevice);
  dim3 block(16, 16);
  dim3 grid((nx + block.x - 1) / block.x, (ny + block.y - 1) / block.y);
  for (int it = 0; it < iters; ++it) {
    step<<<grid, block>>>(d_a, d_b, nx, ny);
    step<<<grid, block>>>(d_b, d_a, nx, ny);
    cudaDeviceSynchronize();
  }
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  int threads = 256, blocks = (nx * ny + threads - 1) / threads;
  norm<<<blocks, threads, threads * sizeof(float), stream>>>(d_a, d_r, nx * ny);
  cudaMemcpy(h, d_r, sizeof(float), cudaMemcpyDeviceToHost);
}
