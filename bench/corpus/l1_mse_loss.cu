// Level 1, loss: mean squared error between prediction and target; squared
// differences to a temporary, then a block reduction with atomicAdd.
#include "common.h"

__global__ void squaredDiff(const float* pred, const float* target, float* tmp, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float d = pred[i] - target[i];
    tmp[i] = d * d;
  }
}

__global__ void reduceSum(const float* tmp, float* out, int n) {
  __shared__ float s[512];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? tmp[i] : 0.0f;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, s[0]);
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 1 << 25, 1 << 16);
  int reps = (int)argInt(argc, argv, "reps", 10, 2);
  float* pred = deviceAlloc<float>(n);
  float* target = deviceAlloc<float>(n);
  float* tmp = deviceAlloc<float>(n);
  float* out = deviceAlloc<float>(1);
  fillUniform(pred, n, 22);
  fillUniform(target, n, 23);

  dim3 block(512);
  dim3 grid((n + block.x - 1) / block.x);
  float loss = 0;
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaMemset(out, 0, sizeof(float)));
    squaredDiff<<<grid, block>>>(pred, target, tmp, n);
    reduceSum<<<grid, block>>>(tmp, out, n);
    CHECK(cudaMemcpy(&loss, out, sizeof(float), cudaMemcpyDeviceToHost));
    loss /= n;
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksumRounded(loss, 4);
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(float), reps * 4.0 * n, "f32");
  cudaFree(pred); cudaFree(target); cudaFree(tmp); cudaFree(out);
  return 0;
}
