// The capture runtime linked into instrumented programs. It uses the CUDA
// runtime the program already uses; the driver's cuMemGetAddressRange is
// reached through cudaGetDriverEntryPointByVersion, so nothing extra links.
#include "cudal1/Capture/Capture.h"
#include "cudal1/Capture/CaptureFile.h"
#include "cudal1/Eval/Numbers.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>

using namespace cudal1;

namespace {

struct Pending {
  bool used = false;
  CapturedLaunch launch;
};

struct State {
  std::mutex mutex;
  bool initialized = false;
  bool disabled = false;
  bool dirty = false;
  std::string path = "cudal1.capture";
  unsigned long long maxLaunches = 4;
  unsigned long long maxBytes = 1ull << 30;
  unsigned long long bytesUsed = 0;
  std::map<std::string, unsigned long long> launchesPerKey;
  std::map<std::string, std::string> refusedKernels;
  std::set<std::string> warned;
  std::vector<Pending> pending;
  CaptureFile file;
  PFN_cuMemGetAddressRange_v3020 getAddressRange = nullptr;
};

// Never destroyed: the atexit writer may run after static destructors.
State &state() {
  static State *s = new State();
  return *s;
}

void warnOnce(State &s, const std::string &key, const std::string &text) {
  if (s.warned.insert(key).second)
    std::fprintf(stderr, "cudal1-capture: %s\n", text.c_str());
}

unsigned long long envNumber(const char *name, unsigned long long fallback) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return fallback;
  unsigned long long n = 0; // strtoull took "-1" as 2^64-1 and overflow silently
  if (!parseInteger<unsigned long long>(v, 0, ULLONG_MAX, n)) {
    std::fprintf(stderr, "cudal1-capture: ignoring %s=%s (not an unsigned integer)\n", name, v);
    return fallback;
  }
  return n;
}

void writeAtExit() { cudal1_capture_flush(); }

void initialize(State &s) {
  if (s.initialized)
    return;
  s.initialized = true;
  const char *disable = std::getenv("CUDAL1_CAPTURE_DISABLE");
  s.disabled = disable && *disable && std::strcmp(disable, "0") != 0;
  if (const char *p = std::getenv("CUDAL1_CAPTURE_FILE"); p && *p)
    s.path = p;
  s.maxLaunches = envNumber("CUDAL1_CAPTURE_MAX_LAUNCHES", s.maxLaunches);
  s.maxBytes = envNumber("CUDAL1_CAPTURE_MAX_BYTES", s.maxBytes);
  if (s.disabled)
    return;
  void *fn = nullptr;
  cudaDriverEntryPointQueryResult q;
  // The newest ABI up to CUDA 12.0 is v3020, the prototype of
  // PFN_cuMemGetAddressRange_v3020 (worked on the H200 with driver 580).
  if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &fn, 12000, cudaEnableDefault, &q) !=
          cudaSuccess ||
      q != cudaDriverEntryPointSuccess || !fn) {
    std::fprintf(stderr, "cudal1-capture: cannot reach cuMemGetAddressRange; "
                         "capture disabled\n");
    s.disabled = true;
    return;
  }
  s.getAddressRange = reinterpret_cast<PFN_cuMemGetAddressRange_v3020>(fn);
  std::atexit(writeAtExit);
}

std::string cudaText(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

} // namespace

extern "C" int cudal1_capture_begin(const char *kernelKey, unsigned gridX, unsigned gridY,
                                    unsigned gridZ, unsigned blockX, unsigned blockY,
                                    unsigned blockZ, size_t sharedBytes, void **args,
                                    const size_t *argSizes, const int *argIsPointer, int numArgs) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  initialize(s);
  if (s.disabled)
    return -1;
  std::string key = kernelKey;
  if (auto it = s.refusedKernels.find(key); it != s.refusedKernels.end()) {
    warnOnce(s, "refused:" + key, "not capturing kernel " + key + ": " + it->second);
    return -1;
  }
  if (s.launchesPerKey[key] >= s.maxLaunches)
    return -1;

  // 1. See the state the launch will see.
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    warnOnce(s, "sync",
             "cudaDeviceSynchronize failed before " + key + ": " + cudaText(e) + "; capture stops");
    s.disabled = true;
    return -1;
  }

  // 2. Arguments; pointers become (allocation, offset).
  CapturedLaunch launch;
  launch.kernelKey = key;
  launch.grid[0] = gridX, launch.grid[1] = gridY, launch.grid[2] = gridZ;
  launch.block[0] = blockX, launch.block[1] = blockY, launch.block[2] = blockZ;
  launch.sharedBytes = unsigned(sharedBytes);
  unsigned long long bytes = 0;
  for (int i = 0; i < numArgs; ++i) {
    CapturedArg arg;
    const uint8_t *value = static_cast<const uint8_t *>(args[i]);
    void *ptr = nullptr;
    if (argIsPointer[i] && argSizes[i] == sizeof(void *))
      std::memcpy(&ptr, value, sizeof ptr);
    if (!argIsPointer[i] || ptr == nullptr) {
      arg.bytes.assign(value, value + argSizes[i]);
      launch.args.push_back(std::move(arg));
      continue;
    }
    cudaPointerAttributes attr;
    e = cudaPointerGetAttributes(&attr, ptr);
    if (e != cudaSuccess || attr.type == cudaMemoryTypeUnregistered ||
        attr.type == cudaMemoryTypeHost) {
      cudaGetLastError();
      warnOnce(s, "host:" + key + std::to_string(i),
               "not capturing " + key + ": argument " + std::to_string(i) +
                   " points to host memory, which replay cannot restore");
      return -1;
    }
    if (attr.type == cudaMemoryTypeManaged) {
      warnOnce(s, "managed:" + key + std::to_string(i),
               "not capturing " + key + ": argument " + std::to_string(i) +
                   " points to managed memory (cudaMallocManaged), which "
                   "capture does not support");
      return -1;
    }
    CUdeviceptr base = 0;
    size_t size = 0;
    if (s.getAddressRange(&base, &size, CUdeviceptr(ptr)) != CUDA_SUCCESS) {
      warnOnce(s, "range:" + key + std::to_string(i),
               "not capturing " + key + ": argument " + std::to_string(i) +
                   " is not inside a device allocation");
      return -1;
    }
    uint32_t index = 0;
    while (index < launch.allocs.size() && launch.allocs[index].originalBase != uint64_t(base))
      ++index;
    if (index == launch.allocs.size()) {
      CapturedAlloc alloc;
      alloc.originalBase = uint64_t(base);
      alloc.size = size;
      launch.allocs.push_back(std::move(alloc));
      bytes += 2ull * size;
    }
    arg.isPointer = true;
    arg.alloc = index;
    arg.offset = uint64_t(CUdeviceptr(ptr) - base);
    launch.args.push_back(std::move(arg));
  }

  // 3. The byte budget counts contents before and after.
  if (s.bytesUsed + bytes > s.maxBytes) {
    warnOnce(s, "budget:" + key,
             "not capturing a launch of " + key + ": it needs " + std::to_string(bytes) +
                 " bytes and the budget "
                 "(CUDAL1_CAPTURE_MAX_BYTES=" +
                 std::to_string(s.maxBytes) + ") has " + std::to_string(s.maxBytes - s.bytesUsed) +
                 " left");
    return -1;
  }
  for (CapturedAlloc &a : launch.allocs) {
    a.before.resize(a.size);
    e = cudaMemcpy(a.before.data(), reinterpret_cast<void *>(a.originalBase), a.size,
                   cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
      warnOnce(s, "copy:" + key,
               "not capturing " + key + ": reading an allocation failed: " + cudaText(e));
      return -1;
    }
  }
  s.bytesUsed += bytes;
  s.launchesPerKey[key] += 1;
  Pending p;
  p.used = true;
  p.launch = std::move(launch);
  for (size_t i = 0; i < s.pending.size(); ++i)
    if (!s.pending[i].used) {
      s.pending[i] = std::move(p);
      return int(i);
    }
  s.pending.push_back(std::move(p));
  return int(s.pending.size() - 1);
}

extern "C" void cudal1_capture_end(int handle) {
  if (handle < 0)
    return;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (size_t(handle) >= s.pending.size() || !s.pending[handle].used)
    return;
  Pending &p = s.pending[handle];
  p.used = false;
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    warnOnce(s, "launch:" + p.launch.kernelKey,
             "the launch of " + p.launch.kernelKey + " failed (" + cudaText(e) +
                 "); it is not recorded");
    return;
  }
  for (CapturedAlloc &a : p.launch.allocs) {
    a.after.resize(a.size);
    e = cudaMemcpy(a.after.data(), reinterpret_cast<void *>(a.originalBase), a.size,
                   cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
      warnOnce(s, "copy:" + p.launch.kernelKey,
               "reading the results of " + p.launch.kernelKey + " failed: " + cudaText(e));
      return;
    }
  }
  s.file.launches.push_back(std::move(p.launch));
  s.dirty = true;
}

extern "C" void cudal1_capture_refuse_kernel(const char *kernelKey, const char *reason) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.refusedKernels[kernelKey] = reason && *reason
                                    ? reason
                                    : "it reads __constant__ or __device__ globals, which "
                                      "a capture cannot restore";
}

extern "C" int cudal1_capture_flush(void) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.dirty)
    return 0;
  Status st = writeCaptureFile(s.path, s.file);
  if (!st.ok()) {
    std::fprintf(stderr, "cudal1-capture: %s\n", st.message().c_str());
    return 1;
  }
  s.dirty = false;
  return 0;
}
