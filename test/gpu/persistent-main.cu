// Drives the host loops of test/Passes/Inputs/persistent-kernels.cu, or a
// rewrite of them by persistent (LOOPS, a file name), on the GPU: the
// buffers filled from a hash, each loop run once, one line per buffer with
// its sum and a position-weighted sum (compared between the original and
// the rewrites by test/gpu/persistent.sh), and one "time" line per loop.
#include LOOPS
#include <vector>

static std::vector<float> filled(size_t n, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    unsigned x = unsigned(i) * 2654435761u + seed;
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    v[i] = lo + (hi - lo) * float(x % 10007) / 10006.0f;
  }
  return v;
}

static float *device(const std::vector<float> &v) {
  float *d = nullptr;
  CHECK(cudaMalloc(&d, v.size() * sizeof(float)));
  CHECK(cudaMemcpy(d, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
  return d;
}

static void print(const char *what, const float *d, size_t n, bool onDevice = true) {
  std::vector<float> h(n);
  if (onDevice)
    CHECK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
  else
    h.assign(d, d + n);
  double s = 0, w = 0;
  for (size_t i = 0; i < n; ++i) {
    s += h[i];
    w += h[i] * double(i % 97 + 1);
  }
  printf("%s %.9e %.9e\n", what, s, w);
}

struct Timer {
  cudaEvent_t a, b;
  Timer() {
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventRecord(a);
  }
  void stop(const char *what) {
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    printf("time %s %.4f\n", what, ms);
  }
};

int main() {
  {
    const int H = 500, steps = 300;
    float *W = device(filled(size_t(H) * H, 1, -0.05f, 0.05f)), *b = device(filled(H, 2));
    float *x = device(filled(size_t(steps) * H, 3));
    float *hA = device(filled(H, 4)), *hB = device(std::vector<float>(H, 0.0f));
    Timer t;
    recurrence(W, b, x, hA, hB, H, steps);
    CHECK(cudaDeviceSynchronize());
    t.stop("recurrence");
    print("recurrence.hA", hA, H);
    print("recurrence.hB", hB, H);
  }
  {
    const int n = 100000, steps = 50;
    std::vector<float> in = filled(n, 5), out(n, 0.0f);
    Timer t;
    relax(in.data(), out.data(), n, steps, 0.125f);
    t.stop("relax");
    print("relax.out", out.data(), n, false);
  }
  {
    const int n = 4096, steps = 200;
    float *x = device(filled(n, 6)), *y = device(filled(n, 7));
    Timer t;
    chain(x, y, n, steps);
    CHECK(cudaDeviceSynchronize());
    t.stop("chain");
    print("chain.x", x, n);
    print("chain.y", y, n);
  }
  {
    const int n = 256, steps = 100;
    float *w = device(filled(size_t(7) * n, 8, -0.02f, 0.02f));
    float *g = device(std::vector<float>(3 * n, 0.0f)), *h = device(filled(n, 9));
    Timer t;
    gru(w, g, h, n, steps);
    CHECK(cudaDeviceSynchronize());
    t.stop("gru");
    print("gru.g", g, 3 * n);
    print("gru.h", h, n);
  }
  {
    const int rows = 64, cols = 96, steps = 100;
    std::vector<float> init = filled(size_t(rows) * cols, 10);
    float *u = device(init), *v = device(init);
    Timer t;
    heat(u, v, rows, cols, steps);
    CHECK(cudaDeviceSynchronize());
    t.stop("heat");
    print("heat.u", u, size_t(rows) * cols);
    print("heat.v", v, size_t(rows) * cols);
  }
  CHECK(cudaGetLastError());
  return 0;
}
