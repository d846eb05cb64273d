// bench/gemm-vs-cublas: the timing driver linked with one program's variant
// units (orig, the tuned plans, library; see harness.cuh). It runs each
// variant's main (their timed regions are captured, their allocations kept),
// then, per GEMM launch, times the original kernel, every tuned kernel and
// the cuBLAS call of the same shape side by side (CUDA events, L2 flushed
// before each launch, warm-ups discarded, a shuffled order each round,
// medians), and compares every variant's C with cuBLAS's.
//   ./bench [--rounds N] [--warmup N] [--kernel NAME] [--program NAME] [ARGS...]
// ARGS (name=value) go to every variant's main. Prints one `row,...` line
// per (launch, variant) and exits non-zero when something could not run.
#include "harness.cuh"
#include "kernel_name.h"
// The driver frees and allocates for itself.
#undef cudaMalloc
#undef cudaFree

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

struct Alloc {
  void *p;
  size_t bytes;
};

struct Variant {
  std::string name;
  int (*mainArgs)(int, char **) = nullptr;
  int (*mainNoArgs)() = nullptr;
  bool capture = true;
  std::vector<Alloc> allocs;
  std::vector<cudaGraph_t> regions;
  std::vector<BenchGemmCall> gemms;
  std::vector<void *> frees;
};

std::vector<Variant> &variants() {
  static std::vector<Variant> v; // filled by the wrappers' static registrars
  return v;
}
Variant *current = nullptr;

} // namespace

void benchFail(const char *what, cudaError_t e, const char *file, int line) {
  fprintf(stderr, "%s:%d: %s failed: %s (variant %s)\n", file, line, what, cudaGetErrorString(e),
          current ? current->name.c_str() : "-");
  exit(1);
}
void benchRecordAlloc(void *p, size_t bytes) {
  if (current) current->allocs.push_back({p, bytes});
}
void benchDeferFree(void *p) {
  if (current) current->frees.push_back(p);
  else cudaFree(p);
}
void benchRecordRegion(cudaGraph_t g) {
  if (current) current->regions.push_back(g);
}
void benchRecordGemm(const BenchGemmCall &c) {
  if (current) current->gemms.push_back(c);
}
bool benchCapturing() { return current && current->capture; }
void benchRegister(const char *name, int (*mainArgs)(int, char **), int (*mainNoArgs)(),
                   bool capture) {
  Variant v;
  v.name = name;
  v.mainArgs = mainArgs;
  v.mainNoArgs = mainNoArgs;
  v.capture = capture;
  variants().push_back(v);
}

// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLAS
// gets B first, (n, m, k), and each operand's stored row length as its
// leading dimension (A: k, or m when transposed; B: n, or k; C: n).
cublasStatus_t benchRunGemm(cublasHandle_t h, const BenchGemmCall &c, cudaStream_t stream) {
  if (c.m <= 0 || c.n <= 0) return CUBLAS_STATUS_SUCCESS; // the kernel wrote nothing either
  cublasStatus_t s = cublasSetStream(h, stream);
  if (s != CUBLAS_STATUS_SUCCESS) return s;
  int m = (int)c.m, n = (int)c.n, k = (int)std::max(0LL, c.k);
  int lda = std::max(1, c.transA ? m : k), ldb = std::max(1, c.transB ? k : n);
  cublasOperation_t opB = c.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opA = c.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (c.isDouble) {
    double alpha = c.alpha, beta = c.beta;
    return cublasDgemm(h, opB, opA, n, m, k, &alpha, (const double *)c.b, ldb,
                       (const double *)c.a, lda, &beta, (double *)c.c, n);
  }
  float alpha = (float)c.alpha, beta = (float)c.beta;
  return cublasSgemm(h, opB, opA, n, m, k, &alpha, (const float *)c.b, ldb, (const float *)c.a,
                     lda, &beta, (float *)c.c, n);
}

namespace {

struct Launch {
  cudaKernelNodeParams params{};
};

// The nodes in an order their dependencies allow (a region captured from
// one stream is a chain: its launch order), ties in the listing's order.
std::vector<cudaGraphNode_t> topological(const std::vector<cudaGraphNode_t> &nodes) {
  std::vector<std::vector<cudaGraphNode_t>> deps(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    size_t n = 0;
    BENCH_CHECK(cudaGraphNodeGetDependencies(nodes[i], nullptr, nullptr, &n));
    deps[i].resize(n);
    if (n) BENCH_CHECK(cudaGraphNodeGetDependencies(nodes[i], deps[i].data(), nullptr, &n));
  }
  std::vector<cudaGraphNode_t> out;
  std::vector<bool> done(nodes.size(), false);
  while (out.size() < nodes.size()) {
    bool progress = false;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (done[i]) continue;
      bool ready = std::all_of(deps[i].begin(), deps[i].end(), [&](cudaGraphNode_t d) {
        return std::find(out.begin(), out.end(), d) != out.end();
      });
      if (!ready) continue;
      out.push_back(nodes[i]);
      done[i] = progress = true;
      break; // restart: the earliest ready node comes next
    }
    if (!progress) return nodes; // a cycle cannot be captured; keep the listing
  }
  return out;
}

// The launches of kernel `name` in a variant's captured regions, in order.
std::vector<Launch> kernelLaunches(const Variant &v, const std::string &name) {
  std::vector<Launch> out;
  for (cudaGraph_t g : v.regions) {
    size_t count = 0;
    BENCH_CHECK(cudaGraphGetNodes(g, nullptr, &count));
    std::vector<cudaGraphNode_t> nodes(count);
    BENCH_CHECK(cudaGraphGetNodes(g, nodes.data(), &count));
    for (cudaGraphNode_t node : topological(nodes)) {
      cudaGraphNodeType type;
      BENCH_CHECK(cudaGraphNodeGetType(node, &type));
      if (type != cudaGraphNodeTypeKernel) continue;
      Launch l;
      BENCH_CHECK(cudaGraphKernelNodeGetParams(node, &l.params));
      const char *fn = nullptr;
      if (cudaFuncGetName(&fn, l.params.func) != cudaSuccess) fn = nullptr;
      if (namesKernel(fn, name)) out.push_back(l);
    }
  }
  return out;
}

// The recorded allocation holding `p`: its index, or -1.
int allocIndex(const Variant &v, const void *p) {
  for (size_t i = 0; i < v.allocs.size(); ++i) {
    const char *b = (const char *)v.allocs[i].p;
    if ((const char *)p >= b && (const char *)p < b + v.allocs[i].bytes) return (int)i;
  }
  return -1;
}

// max |x - r| / max |r| over C (m x n, rows n apart, at `offset` bytes into
// the allocation): normwise, as one rounding of a k-term sum shows up.
double relError(const Variant &v, const Variant &ref, int alloc, size_t offset,
                const BenchGemmCall &c) {
  if (alloc < 0 || alloc >= (int)v.allocs.size() || v.allocs[alloc].bytes != ref.allocs[alloc].bytes)
    return NAN;
  size_t elem = c.isDouble ? 8 : 4, count = (size_t)c.m * c.n, bytes = count * elem;
  if (offset + bytes > ref.allocs[alloc].bytes) return NAN;
  std::vector<char> hx(bytes), hr(bytes);
  BENCH_CHECK(cudaMemcpy(hx.data(), (char *)v.allocs[alloc].p + offset, bytes, cudaMemcpyDeviceToHost));
  BENCH_CHECK(cudaMemcpy(hr.data(), (char *)ref.allocs[alloc].p + offset, bytes, cudaMemcpyDeviceToHost));
  double maxDiff = 0, maxRef = 0;
  for (size_t i = 0; i < count; ++i) {
    double x = c.isDouble ? ((double *)hx.data())[i] : ((float *)hx.data())[i];
    double r = c.isDouble ? ((double *)hr.data())[i] : ((float *)hr.data())[i];
    if (std::isnan(x) != std::isnan(r)) return INFINITY;
    if (std::isnan(r)) continue;
    maxDiff = std::max(maxDiff, std::fabs(x - r));
    maxRef = std::max(maxRef, std::fabs(r));
  }
  return maxRef > 0 ? maxDiff / maxRef : maxDiff;
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

} // namespace

int main(int argc, char **argv) {
  int rounds = 21, warmup = 3;
  std::string kernel, program = "?";
  std::vector<char *> args{(char *)"program"};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (a == "--warmup" && i + 1 < argc) warmup = atoi(argv[++i]);
    else if (a == "--kernel" && i + 1 < argc) kernel = argv[++i];
    else if (a == "--program" && i + 1 < argc) program = argv[++i];
    else args.push_back(argv[i]);
  }
  if (kernel.empty() || rounds < 1) {
    fprintf(stderr, "usage: %s --kernel NAME [--program NAME] [--rounds N] [--warmup N] [ARGS...]\n",
            argv[0]);
    return 2;
  }
  std::vector<Variant> &vs = variants();
  std::sort(vs.begin(), vs.end(), [](const Variant &a, const Variant &b) { return a.name < b.name; });

  // 1. Each variant's program, as written (regions captured and run once).
  for (Variant &v : vs) {
    current = &v;
    std::vector<char *> argvCopy = args;
    argvCopy.push_back(nullptr);
    int rc = v.mainArgs ? v.mainArgs((int)args.size(), argvCopy.data()) : v.mainNoArgs();
    BENCH_CHECK(cudaDeviceSynchronize());
    current = nullptr;
    if (rc != 0) {
      fprintf(stderr, "gemm-vs-cublas: %s's main returned %d\n", v.name.c_str(), rc);
      return 1;
    }
  }
  const Variant *lib = nullptr;
  for (const Variant &v : vs)
    if (!v.capture) lib = &v;
  if (!lib || lib->gemms.empty()) {
    fprintf(stderr, "gemm-vs-cublas: %s: no cuBLAS call was recorded (no library variant)\n",
            program.c_str());
    return 1;
  }

  // 2. Per GEMM launch: the kernel node of each captured variant, cuBLAS's call.
  std::vector<const Variant *> kernels;
  std::vector<std::vector<Launch>> launches;
  for (const Variant &v : vs) {
    if (!v.capture) continue;
    kernels.push_back(&v);
    launches.push_back(kernelLaunches(v, kernel));
    if (launches.back().size() != lib->gemms.size()) {
      fprintf(stderr, "gemm-vs-cublas: %s: %zu launches of %s in %s, %zu cuBLAS calls\n",
              program.c_str(), launches.back().size(), kernel.c_str(), v.name.c_str(),
              lib->gemms.size());
      return 1;
    }
  }
  cudaStream_t stream;
  BENCH_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    fprintf(stderr, "gemm-vs-cublas: cublasCreate failed\n");
    return 1;
  }
  // Larger than the H200's L2 (50 MB): written before each timed launch.
  const size_t flushBytes = 256u << 20;
  void *flush = nullptr;
  BENCH_CHECK(cudaMalloc(&flush, flushBytes));
  cudaEvent_t e0, e1;
  BENCH_CHECK(cudaEventCreate(&e0));
  BENCH_CHECK(cudaEventCreate(&e1));
  std::mt19937 rng(18);
  int status = 0;

  // Identical shapes are timed once (a loop of layers launches the same ones).
  std::vector<std::string> shapes;
  std::vector<size_t> timed;
  for (size_t g = 0; g < lib->gemms.size(); ++g) {
    const BenchGemmCall &call = lib->gemms[g];
    char shape[160];
    snprintf(shape, sizeof shape, "%lld,%lld,%lld,%s,%c,%c", call.m, call.n, call.k,
             call.isDouble ? "f64" : "f32", call.transA ? 'T' : 'N', call.transB ? 'T' : 'N');
    shapes.push_back(shape);
    if (std::find(shapes.begin(), shapes.end() - 1, shapes.back()) == shapes.end() - 1)
      timed.push_back(g);
  }
  // 3. Correctness of every timed launch before any timing (timed launches
  // rewrite their outputs, in-place ones from their own last result): each
  // kernel variant's C after the program's own run, against cuBLAS's.
  std::vector<std::vector<double>> errs;
  for (size_t g : timed) {
    const BenchGemmCall &call = lib->gemms[g];
    int cAlloc = allocIndex(*lib, call.c);
    size_t cOffset = cAlloc < 0 ? 0 : (const char *)call.c - (const char *)lib->allocs[cAlloc].p;
    errs.emplace_back(kernels.size());
    for (size_t v = 0; v < kernels.size(); ++v)
      errs.back()[v] = relError(*kernels[v], *lib, cAlloc, cOffset, call);
  }
  for (size_t t = 0; t < timed.size(); ++t) {
    size_t g = timed[t];
    const BenchGemmCall &call = lib->gemms[g];
    const char *shape = shapes[g].c_str();
    const std::vector<double> &err = errs[t];

    // 4. Timing: item v < kernels.size() is that variant's launch, the last cuBLAS.
    size_t items = kernels.size() + 1;
    std::vector<std::vector<double>> ms(items);
    std::vector<size_t> order(items);
    for (size_t i = 0; i < items; ++i) order[i] = i;
    for (int r = 0; r < warmup + rounds; ++r) {
      std::shuffle(order.begin(), order.end(), rng);
      for (size_t i : order) {
        BENCH_CHECK(cudaMemsetAsync(flush, r & 0xff, flushBytes, stream));
        BENCH_CHECK(cudaEventRecord(e0, stream));
        if (i < kernels.size()) {
          const cudaKernelNodeParams &p = launches[i][g].params;
          BENCH_CHECK(cudaLaunchKernel(p.func, p.gridDim, p.blockDim, p.kernelParams,
                                       p.sharedMemBytes, stream));
        } else if (benchRunGemm(handle, call, stream) != CUBLAS_STATUS_SUCCESS) {
          fprintf(stderr, "gemm-vs-cublas: the timed cuBLAS call failed\n");
          return 1;
        }
        BENCH_CHECK(cudaEventRecord(e1, stream));
        BENCH_CHECK(cudaEventSynchronize(e1));
        float t = 0;
        BENCH_CHECK(cudaEventElapsedTime(&t, e0, e1));
        if (r >= warmup) ms[i].push_back(t);
      }
    }
    double cublasMs = median(ms[kernels.size()]);
    // row,program,kernel,launch,M,N,K,type,opA,opB,variant,median_ms,rel_err_vs_cublas,cublas_ms
    for (size_t v = 0; v < kernels.size(); ++v) {
      double t = median(ms[v]);
      printf("row,%s,%s,%zu,%s,%s,%.5f,%.3e,%.5f\n", program.c_str(), kernel.c_str(), g, shape,
             kernels[v]->name.c_str(), t, err[v], cublasMs);
      if (!(err[v] <= 1e-3)) status = 1;
    }
    printf("row,%s,%s,%zu,%s,cublas,%.5f,0,%.5f\n", program.c_str(), kernel.c_str(), g, shape,
           cublasMs, cublasMs);
    fflush(stdout);
  }
  for (Variant &v : vs)
    for (void *p : v.frees) cudaFree(p);
  return status;
}
