// A hand-instrumented program for the capture runtime: it runs the original
// kernels of the GPU test bundles and records their launches.
// Usage: cudal1-capture-demo [ITERATIONS] [--host-pointer|--managed]
#include "cudal1/Capture/Capture.h"

#include "bundles/rowsum/original.cu"
#include "bundles/stencil/original.cu"
#include "bundles/sumsq/original.cu"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                                               \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                  \
                   cudaGetErrorString(e_));                                    \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

static float uniform01(uint32_t i) {
  uint32_t h = i * 2654435761u;
  h ^= h >> 15;
  h *= 2246822519u;
  h ^= h >> 13;
  return float(h >> 8) * (1.0f / 16777216.0f);
}

int main(int argc, char **argv) {
  int iterations = 3;
  bool hostPointer = false, managed = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--host-pointer"))
      hostPointer = true;
    else if (!std::strcmp(argv[i], "--managed"))
      managed = true;
    else
      iterations = std::atoi(argv[i]);
  }

  // Stencil: n = 2^22 elements, 257 taps; in[] has exact zeros every 1024.
  const int n = 1 << 22, R = 128;
  std::vector<float> hIn(n), hW(2 * R + 1);
  for (int i = 0; i < n; ++i)
    hIn[i] = i % 1024 == 0 ? 0.f : uniform01(i);
  for (int k = 0; k <= 2 * R; ++k)
    hW[k] = (1.0f + 0.5f * std::sin(0.1f * k)) / float(2 * R + 1);
  float *in, *w, *out;
  CHECK(cudaMalloc(&in, n * sizeof(float)));
  CHECK(cudaMalloc(&w, hW.size() * sizeof(float)));
  CHECK(cudaMalloc(&out, n * sizeof(float)));
  CHECK(cudaMemcpy(in, hIn.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(w, hW.data(), hW.size() * sizeof(float),
                   cudaMemcpyHostToDevice));
  CHECK(cudaMemset(out, 0, n * sizeof(float)));

  // Row sums: 2048 x 2048.
  const int rows = 2048, cols = 2048;
  std::vector<float> hM(size_t(rows) * cols);
  for (size_t i = 0; i < hM.size(); ++i)
    hM[i] = uniform01(uint32_t(i) + 77u);
  float *m, *sums;
  CHECK(cudaMalloc(&m, hM.size() * sizeof(float)));
  CHECK(cudaMalloc(&sums, rows * sizeof(float)));
  CHECK(cudaMemcpy(m, hM.data(), hM.size() * sizeof(float),
                   cudaMemcpyHostToDevice));

  // Sum of squares: 2^24 elements.
  const int nq = 1 << 24;
  std::vector<float> hX(nq);
  for (int i = 0; i < nq; ++i)
    hX[i] = uniform01(uint32_t(i) + 12345u);
  float *x, *acc;
  CHECK(cudaMalloc(&x, nq * sizeof(float)));
  CHECK(cudaMalloc(&acc, sizeof(float)));
  CHECK(cudaMemcpy(x, hX.data(), nq * sizeof(float), cudaMemcpyHostToDevice));

  if (hostPointer || managed) {
    // Arguments that a capture must refuse, with a message.
    float *bad = nullptr;
    if (hostPointer)
      CHECK(cudaMallocHost(&bad, n * sizeof(float)));
    else
      CHECK(cudaMallocManaged(&bad, n * sizeof(float)));
    int nn = n, rr = R;
    void *args[] = {&in, &w, &bad, &nn, &rr};
    size_t sizes[] = {8, 8, 8, 4, 4};
    int ptr[] = {1, 1, 1, 0, 0};
    int h = cudal1_capture_begin("stencil", n / 256, 1, 1, 256, 1, 1, 0, args,
                                 sizes, ptr, 5);
    stencil<<<n / 256, 256>>>(in, w, bad, n, R);
    cudal1_capture_end(h);
    CHECK(cudaDeviceSynchronize());
    std::printf("handle %d\n", h);
    return h == -1 ? 0 : 1;
  }

  CHECK(cudaDeviceSynchronize());
  auto t0 = std::chrono::steady_clock::now();
  for (int it = 0; it < iterations; ++it) {
    {
      // The C API, as the front end's instrumentation will emit it.
      int nn = n, rr = R;
      void *args[] = {&in, &w, &out, &nn, &rr};
      size_t sizes[] = {sizeof in, sizeof w, sizeof out, sizeof nn, sizeof rr};
      int ptr[] = {1, 1, 1, 0, 0};
      int h = cudal1_capture_begin("stencil", n / 256, 1, 1, 256, 1, 1, 0,
                                   args, sizes, ptr, 5);
      stencil<<<n / 256, 256>>>(in, w, out, n, R);
      cudal1_capture_end(h);
    }
    {
      // The RAII helper.
      int c = cols;
      void *args[] = {&m, &sums, &c};
      size_t sizes[] = {8, 8, 4};
      int ptr[] = {1, 1, 0};
      cudal1::CaptureScope scope("rowsum", rows, 1, 1, 256, 1, 1, 0, args,
                                 sizes, ptr, 3);
      rowsum<<<rows, 256>>>(m, sums, cols);
    }
    {
      CHECK(cudaMemsetAsync(acc, 0, sizeof(float)));
      int nn = nq;
      void *args[] = {&x, &acc, &nn};
      size_t sizes[] = {8, 8, 4};
      int ptr[] = {1, 1, 0};
      cudal1::CaptureScope scope("sumsq", nq / 256, 1, 1, 256, 1, 1, 0, args,
                                 sizes, ptr, 3);
      sumsq<<<nq / 256, 256>>>(x, acc, nq);
    }
  }
  CHECK(cudaDeviceSynchronize());
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - t0)
                  .count();
  float total = 0;
  CHECK(cudaMemcpy(&total, acc, sizeof total, cudaMemcpyDeviceToHost));
  std::printf("loop-ms %.3f\nsumsq %.6g (exact %.6g)\n", ms, total,
              double(nq) / 3.0);
  return 0;
}
