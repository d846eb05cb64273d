// Level 3, multi-head attention for short sequences: the host loops over
// (batch, head) pairs and launches scores, softmax and weighted-sum kernels
// for each one.
#include "common.h"

__global__ void qkScores(const float* Q, const float* K, float* S, int L, int d, float scale) {
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < L && j < L) {
    float acc = 0.0f;
    for (int k = 0; k < d; ++k) acc += Q[i * d + k] * K[j * d + k];
    S[i * L + j] = acc * scale;
  }
}

__global__ void rowSoftmax(float* S, int L) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < L) {
    float m = -INFINITY;
    for (int j = 0; j < L; ++j) m = fmaxf(m, S[i * L + j]);
    float s = 0.0f;
    for (int j = 0; j < L; ++j) s += expf(S[i * L + j] - m);
    for (int j = 0; j < L; ++j) S[i * L + j] = expf(S[i * L + j] - m) / s;
  }
}

__global__ void weightedSum(const float* P, const float* V, float* O, int L, int d) {
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < L && k < d) {
    float acc = 0.0f;
    for (int j = 0; j < L; ++j) acc += P[i * L + j] * V[j * d + k];
    O[i * d + k] = acc;
  }
}

int main(int argc, char** argv) {
  int batch = (int)argInt(argc, argv, "batch", 16, 2);
  int heads = (int)argInt(argc, argv, "heads", 8, 2);
  int L = (int)argInt(argc, argv, "seq", 256, 64);
  int d = (int)argInt(argc, argv, "dim", 64, 32);
  int bh = batch * heads;
  size_t per = (size_t)L * d;
  float* Q = deviceAlloc<float>(bh * per);
  float* K = deviceAlloc<float>(bh * per);
  float* V = deviceAlloc<float>(bh * per);
  float* O = deviceAlloc<float>(bh * per);
  float* S = deviceAlloc<float>((size_t)L * L);
  fillUniform(Q, bh * per, 132);
  fillUniform(K, bh * per, 133);
  fillUniform(V, bh * per, 134);

  float scale = 1.0f / sqrtf((float)d);
  dim3 blockS(16, 16);
  dim3 gridS((L + 15) / 16, (L + 15) / 16);
  dim3 blockO(32, 8);
  dim3 gridO((d + 31) / 32, (L + 7) / 8);
  GpuTimer timer;
  timer.start();
  for (int h = 0; h < bh; ++h) {
    qkScores<<<gridS, blockS>>>(Q + h * per, K + h * per, S, L, d, scale);
    rowSoftmax<<<(L + 63) / 64, 64>>>(S, L);
    weightedSum<<<gridO, blockO>>>(S, V + h * per, O + h * per, L, d);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(O, bh * per));
  printTime(ms);
  printFloor(4.0 * bh * per * sizeof(float), (double)bh * (4.0 * L * L * d + 5.0 * L * L), "f32");
  cudaFree(Q); cudaFree(K); cudaFree(V); cudaFree(O); cudaFree(S);
  return 0;
}
