#ifndef CUDAL1_GRAPH_LOOP
#define CUDAL1_GRAPH_LOOP
#include <cstdio>
#include <cstdlib>
#include <tuple>
#include <utility>
#include <vector>
// cudal1 graph: the launches of one loop iteration as a CUDA graph. The first
// iteration captures them on a stream of its own; every iteration launches
// the graph on the original stream. Later iterations evaluate the arguments
// as the loop did and update each kernel node whose arguments or
// configuration changed (pointer swaps, offsets) on the executable graph.
class Cudal1GraphLoop {
public:
  Cudal1GraphLoop() = default;
  Cudal1GraphLoop(const Cudal1GraphLoop &) = delete;
  Cudal1GraphLoop &operator=(const Cudal1GraphLoop &) = delete;
  ~Cudal1GraphLoop() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    if (capture) cudaStreamDestroy(capture);
  }

  template <typename... P, typename... A>
  void launch(void (*kernel)(P...), dim3 grid, dim3 block, size_t shmem, A &&...args) {
    add<NoSide>(nullptr, kernel, grid, block, shmem, std::forward<A>(args)...);
  }

  // A launch that the streams pass put on a side stream (Cudal1SideStream):
  // during the capture the side stream forks from the capture stream, so
  // the graph gets the same fork (and, with join, the same join).
  template <typename S, typename... P, typename... A>
  void launchSide(S &side, void (*kernel)(P...), dim3 grid, dim3 block, size_t shmem, A &&...args) {
    add(&side, kernel, grid, block, shmem, std::forward<A>(args)...);
  }

  // The side stream's join; replays hold it as a graph edge.
  template <typename S> void join(S &side) {
    if (!exec) side.join(capture);
  }

private:
  struct NoSide {
    cudaStream_t fork(cudaStream_t origin) { return origin; }
  };
  template <typename S, typename... P, typename... A>
  void add(S *side, void (*kernel)(P...), dim3 grid, dim3 block, size_t shmem, A &&...args) {
    std::tuple<P...> values(std::forward<A>(args)...);
    std::vector<char> key = keyOf(values, grid, block, shmem);
    if (!exec) {
      if (!capturing) {
        if (!capture) check(cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking), "stream");
        check(cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal), "capture");
        capturing = true;
      }
      cudaStream_t on = capture;
      if (side) on = side->fork(capture);
      launchOn(on, kernel, grid, block, shmem, values, std::index_sequence_for<P...>());
      check(cudaGetLastError(), "launch");
      nodes.push_back(lastNode(on));
      keys.push_back(key);
    } else {
      if (next >= nodes.size()) fail("more launches than the graph holds");
      if (key != keys[next]) {
        update(kernel, grid, block, shmem, values, std::index_sequence_for<P...>());
        keys[next] = key;
      }
    }
    ++next;
  }

public:
  void replay(cudaStream_t stream) {
    if (!exec) {
      check(cudaStreamEndCapture(capture, &graph), "end capture");
      capturing = false;
      check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
    } else if (next != nodes.size()) {
      fail("fewer launches than the graph holds");
    }
    check(cudaGraphLaunch(exec, stream), "graph launch");
    next = 0;
  }

private:
  cudaStream_t capture = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  bool capturing = false;
  size_t next = 0;
  std::vector<cudaGraphNode_t> nodes;
  std::vector<std::vector<char>> keys; // argument and configuration bytes per node

  static void fail(const char *what) {
    fprintf(stderr, "cudal1 graph: %s\n", what);
    exit(1);
  }
  static void check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
      fprintf(stderr, "cudal1 graph: %s: %s\n", what, cudaGetErrorString(e));
      exit(1);
    }
  }
  template <typename T> static void append(std::vector<char> &b, const T &v) {
    const char *p = reinterpret_cast<const char *>(&v);
    b.insert(b.end(), p, p + sizeof(T));
  }
  template <typename... P>
  static std::vector<char> keyOf(const std::tuple<P...> &values, dim3 grid, dim3 block, size_t shmem) {
    std::vector<char> b;
    std::apply([&](const auto &...v) { (append(b, v), ...); }, values);
    append(b, grid);
    append(b, block);
    append(b, shmem);
    return b;
  }
  template <typename... P, size_t... I>
  void launchOn(cudaStream_t on, void (*kernel)(P...), dim3 grid, dim3 block, size_t shmem,
                std::tuple<P...> &values, std::index_sequence<I...>) {
    kernel<<<grid, block, shmem, on>>>(std::get<I>(values)...);
  }
  template <typename... P, size_t... I>
  void update(void (*kernel)(P...), dim3 grid, dim3 block, size_t shmem,
              std::tuple<P...> &values, std::index_sequence<I...>) {
    void *params[] = {(void *)&std::get<I>(values)..., nullptr};
    cudaKernelNodeParams p = {};
    p.func = (void *)kernel;
    p.gridDim = grid;
    p.blockDim = block;
    p.sharedMemBytes = (unsigned)shmem;
    p.kernelParams = params;
    check(cudaGraphExecKernelNodeSetParams(exec, nodes[next], &p), "update");
  }
  // The node the last launch added: the only dependency of the stream it
  // was captured on.
  cudaGraphNode_t lastNode(cudaStream_t on) {
    cudaStreamCaptureStatus status;
    const cudaGraphNode_t *deps = nullptr;
    size_t n = 0;
#if CUDART_VERSION >= 13000
    check(cudaStreamGetCaptureInfo(on, &status, nullptr, nullptr, &deps, nullptr, &n), "capture info");
#else
    check(cudaStreamGetCaptureInfo(on, &status, nullptr, nullptr, &deps, &n), "capture info");
#endif
    if (n != 1) fail("unexpected capture");
    return deps[0];
  }
};
#endif
