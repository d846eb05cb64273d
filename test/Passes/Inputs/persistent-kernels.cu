// Host loops of launches for test/Passes/persistent-emulated.test: the text
// between the markers runs on the CPU (Inputs/persistent-emulate.cpp), the
// original with each launch emulated and the rewrites of persistent in each
// form with their persistent kernel. Launches are written on one line each,
// configurations without commas (the test turns them into calls).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

// BEGIN-KERNELS
#define CHECK(call)                                                                \
  do {                                                                             \
    cudaError_t err_ = (call);                                                     \
    if (err_ != cudaSuccess) {                                                     \
      fprintf(stderr, "%s\n", cudaGetErrorString(err_));                           \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

// Every thread reads all of hPrev.
__global__ void rnnStep(const float *W, const float *b, const float *hPrev, const float *xt,
                        float *hNext, int H) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < H) {
    float acc = b[j] + xt[j];
    for (int k = 0; k < H; ++k)
      acc += W[j * H + k] * hPrev[k];
    hNext[j] = tanhf(acc);
  }
}

__global__ void decay(const float *in, float *out, float k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] * k + 1.0f;
}

__global__ void scale(float *x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = x[i] * s + 0.125f;
}

__global__ void smooth(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1)
    y[i] = 0.25f * x[i - 1] + 0.5f * x[i] + 0.25f * x[i + 1];
}

// A GRU-like pair: the gate kernel covers 3n elements, the update n.
__global__ void gates(const float *h, const float *w, float *g, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 3 * n)
    return;
  float s = 0;
  for (int k = 0; k < n; ++k)
    s += w[(i % 7) * n + k] * h[k];
  g[i] = s;
}

__global__ void update(const float *g, float *h, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    h[i] = 0.5f * h[i] + 0.25f * tanhf(g[i] + g[n + i] - g[2 * n + i]);
}

// A 2-D grid of 2-D blocks over a rows x cols field.
__global__ void heat2d(const float *u, float *v, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r <= 0 || c <= 0 || r >= rows - 1 || c >= cols - 1)
    return;
  int i = r * cols + c;
  v[i] = u[i] + 0.2f * (u[i - 1] + u[i + 1] + u[i - cols] + u[i + cols] - 4.0f * u[i]);
}

// The recurrence: a ping-pong swap, a per-step offset, a sync per step.
void recurrence(const float *W, const float *b, const float *x, float *hA, float *hB, int H,
                int steps) {
  for (int t = 0; t < steps; ++t) {
    rnnStep<<<(H + 63) / 64, 64>>>(W, b, hA, x + (size_t)t * H, hB, H);
    CHECK(cudaDeviceSynchronize());
    float *tmp = hA;
    hA = hB;
    hB = tmp;
  }
}

// Element to element over fresh buffers swapped each step.
void relax(const float *in, float *out, int n, int steps, float rate) {
  float *a, *b;
  cudaMalloc(&a, n * sizeof(float));
  cudaMalloc(&b, n * sizeof(float));
  cudaMemcpy(a, in, n * sizeof(float), cudaMemcpyHostToDevice);
  for (int s = 0; s < steps; s++) {
    decay<<<(n + 127) / 128, 128>>>(a, b, 1.0f - rate, n);
    std::swap(a, b);
  }
  cudaMemcpy(out, a, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(a);
  cudaFree(b);
}

// Three phases, the first two element to element.
void chain(float *x, float *y, int n, int steps) {
  for (int r = 0; r < steps; ++r) {
    scale<<<(n + 127) / 128, 128>>>(x, 2.0f, n);
    scale<<<(n + 127) / 128, 128>>>(x, 0.5f, n);
    smooth<<<(n + 127) / 128, 128>>>(x, y, n);
    std::swap(x, y);
  }
}

// Two configurations, a counter declared before the loop.
void gru(const float *w, float *g, float *h, int n, int steps) {
  int t;
  for (t = 0; t < steps; t += 1) {
    gates<<<(3 * n + 95) / 96, 96>>>(h, w, g, n);
    update<<<(n + 31) / 32, 32>>>(g, h, n);
  }
}

// 2-D blocks and grid.
void heat(float *u, float *v, int rows, int cols, int steps) {
  dim3 block(8, 4);
  dim3 grid((cols + 7) / 8, (rows + 3) / 4);
  for (int s = 0; s < steps; ++s) {
    heat2d<<<grid, block>>>(u, v, rows, cols);
    float *t = u;
    u = v;
    v = t;
  }
}
// END-KERNELS
