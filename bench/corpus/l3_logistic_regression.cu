// Level 3, training a logistic regression with full-batch gradient descent:
// per epoch a prediction kernel (one thread per sample), a gradient kernel
// (one thread per feature looping over all samples), a weight update, and a
// loss copied to the host.
#include "common.h"

__global__ void predict(const float* X, const float* w, const float* y, float* err, float* loss,
                        int n, int d) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float z = w[d];  // bias
    for (int j = 0; j < d; ++j) z += X[i * d + j] * w[j];
    float p = 1.0f / (1.0f + expf(-z));
    err[i] = p - y[i];
    loss[i] = -(y[i] * logf(p + 1e-7f) + (1.0f - y[i]) * logf(1.0f - p + 1e-7f));
  }
}

__global__ void gradient(const float* X, const float* err, float* grad, int n, int d) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j <= d) {
    float g = 0.0f;
    for (int i = 0; i < n; ++i) g += err[i] * (j < d ? X[i * d + j] : 1.0f);
    grad[j] = g / n;
  }
}

__global__ void step(float* w, const float* grad, int d, float lr) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j <= d) w[j] -= lr * grad[j];
}

__global__ void makeLabels(const float* X, float* y, int n, int d) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float s = 0.0f;
    for (int j = 0; j < d; j += 3) s += X[i * d + j];
    y[i] = s > 0.0f ? 1.0f : 0.0f;
  }
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "samples", 65536, 2048);
  int d = (int)argInt(argc, argv, "features", 128, 16);
  int epochs = (int)argInt(argc, argv, "epochs", 5, 2);
  float* X = deviceAlloc<float>((size_t)n * d);
  float* y = deviceAlloc<float>(n);
  float* w = deviceAlloc<float>(d + 1);
  float* grad = deviceAlloc<float>(d + 1);
  float* err = deviceAlloc<float>(n);
  float* loss = deviceAlloc<float>(n);
  fillUniform(X, (size_t)n * d, 144);
  makeLabels<<<(n + 255) / 256, 256>>>(X, y, n, d);
  CHECK(cudaMemset(w, 0, (d + 1) * sizeof(float)));
  std::vector<float> hl(n);

  dim3 block(256);
  dim3 gridN((n + 255) / 256);
  dim3 gridD((d + 1 + 63) / 64);
  double meanLoss = 0;
  GpuTimer timer;
  timer.start();
  for (int e = 0; e < epochs; ++e) {
    predict<<<gridN, block>>>(X, w, y, err, loss, n, d);
    gradient<<<gridD, 64>>>(X, err, grad, n, d);
    step<<<gridD, 64>>>(w, grad, d, 0.5f);
    CHECK(cudaMemcpy(hl.data(), loss, n * sizeof(float), cudaMemcpyDeviceToHost));
    meanLoss = 0;
    for (int i = 0; i < n; ++i) meanLoss += hl[i];
    meanLoss /= n;
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(meanLoss + checksumOf(w, d + 1));
  printTime(ms);
  printFloor((double)epochs * ((double)n * d + 2.0 * n) * sizeof(float),
             (double)epochs * (4.0 * n * d + 10.0 * n), "f32");
  cudaFree(X); cudaFree(y); cudaFree(w); cudaFree(grad); cudaFree(err); cudaFree(loss);
  return 0;
}
