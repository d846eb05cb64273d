// Level 3, k-means clustering: per iteration an assignment kernel (one
// thread per point scans all centroids), an accumulation kernel with
// atomics (fixed-point 64-bit integers, so the sums do not depend on the
// order), and a centroid update; the host copies the centroids back every
// iteration to measure the shift.
#include "common.h"

#define FIXED_SCALE 1048576.0

__global__ void assign(const float* pts, const float* cent, int* label, int n, int k, int d) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int best = 0;
    float bestDist = 3.4e38f;
    for (int c = 0; c < k; ++c) {
      float dist = 0.0f;
      for (int j = 0; j < d; ++j) {
        float diff = pts[i * d + j] - cent[c * d + j];
        dist += diff * diff;
      }
      if (dist < bestDist) {
        bestDist = dist;
        best = c;
      }
    }
    label[i] = best;
  }
}

__global__ void accumulate(const float* pts, const int* label, long long* sums, int* counts,
                           int n, int d) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int c = label[i];
    atomicAdd(&counts[c], 1);
    for (int j = 0; j < d; ++j)
      atomicAdd((unsigned long long*)&sums[c * d + j],
                (unsigned long long)(long long)(pts[i * d + j] * FIXED_SCALE));
  }
}

__global__ void update(float* cent, const long long* sums, const int* counts, int k, int d) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < k * d) {
    int c = i / d;
    if (counts[c] > 0) cent[i] = (float)((double)sums[i] / FIXED_SCALE / counts[c]);
  }
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "points", 1 << 20, 1 << 14);
  int k = (int)argInt(argc, argv, "clusters", 64, 8);
  int d = (int)argInt(argc, argv, "dims", 16, 4);
  int iters = (int)argInt(argc, argv, "iters", 10, 3);
  float* pts = deviceAlloc<float>((size_t)n * d);
  float* cent = deviceAlloc<float>((size_t)k * d);
  int* label = deviceAlloc<int>(n);
  long long* sums = deviceAlloc<long long>((size_t)k * d);
  int* counts = deviceAlloc<int>(k);
  fillUniform(pts, (size_t)n * d, 139);
  CHECK(cudaMemcpy(cent, pts, (size_t)k * d * sizeof(float), cudaMemcpyDeviceToDevice));
  std::vector<float> hc((size_t)k * d), prev((size_t)k * d);

  dim3 block(256);
  dim3 grid((n + 255) / 256);
  double shift = 0;
  GpuTimer timer;
  timer.start();
  for (int it = 0; it < iters; ++it) {
    assign<<<grid, block>>>(pts, cent, label, n, k, d);
    CHECK(cudaMemset(sums, 0, (size_t)k * d * sizeof(long long)));
    CHECK(cudaMemset(counts, 0, k * sizeof(int)));
    accumulate<<<grid, block>>>(pts, label, sums, counts, n, d);
    update<<<(k * d + 255) / 256, block>>>(cent, sums, counts, k, d);
    CHECK(cudaMemcpy(hc.data(), cent, hc.size() * sizeof(float), cudaMemcpyDeviceToHost));
    shift = 0;
    for (size_t i = 0; i < hc.size(); ++i) shift += fabs(hc[i] - prev[i]);
    prev = hc;
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(cent, (size_t)k * d) + checksumOf(label, n) * 1e-6);
  printTime(ms);
  printFloor((double)iters * ((double)n * d * sizeof(float) + n * sizeof(int)),
             (double)iters * (3.0 * n * k * d + (double)n * d), "f32");
  cudaFree(pts); cudaFree(cent); cudaFree(label); cudaFree(sums); cudaFree(counts);
  return 0;
}
