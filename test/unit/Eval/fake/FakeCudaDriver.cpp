// A stand-in libcuda.so.1 for CPU tests of the evaluator's workers: device
// memory is host memory, and "kernels" are host functions chosen by a tag
// kernel name found in the loaded image (fake_tag_NAME). It implements only
// what lib/Eval/Cuda/Driver.h loads. Not a CUDA emulator.
#include <cuda.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>

namespace {
using Clock = std::chrono::steady_clock;
CUresult sticky = CUDA_SUCCESS;
unsigned memoSig = 0, memoValid = 0, lazyCalls = 0;
std::map<CUevent, Clock::time_point> events;

struct Module {
  std::string tag;
};
struct Function {
  std::string tag, name;
};

int clampIdx(int j, int n) { return j < 0 ? 0 : (j >= n ? n - 1 : j); }

template <typename T> T *ptr(void **params, int i) {
  return reinterpret_cast<T *>(*static_cast<CUdeviceptr *>(params[i]));
}
int intArg(void **params, int i) { return *static_cast<int *>(params[i]); }

// One thread of the stencil family; returns false for an illegal access.
bool stencilThread(const std::string &tag, void **p, long i) {
  const float *in = ptr<float>(p, 0), *w = ptr<float>(p, 1);
  float *out = ptr<float>(p, 2);
  int n = intArg(p, 3), R = intArg(p, 4);
  if (tag == "illegal")
    return false;
  if (tag == "pastend" ? i > n : i >= n)
    return true;
  float f = 0.f, b = 0.f;
  int last = tag == "offbyone" ? R - 1 : R;
  for (int k = -R; k <= last; ++k)
    f = std::fma(w[k + R], in[clampIdx(int(i) + k, n)], f);
  if (tag == "original" || tag == "slow") {
    for (int k = R; k >= -R; --k)
      b = std::fma(w[k + R], in[clampIdx(int(i) + k, n)], b);
    out[i] = 0.5f * (f + b);
  } else {
    out[i] = f;
  }
  if (tag == "nan")
    out[i] = f * (in[i] / in[i]);
  return true;
}

CUresult launch(const std::string &tag, unsigned gx, unsigned bx, void **p) {
  long threads = long(gx) * bx;
  if (tag == "hang")
    for (;;)
      std::this_thread::sleep_for(std::chrono::seconds(1));
  if (tag == "reference") {
    const double *in = ptr<double>(p, 0), *w = ptr<double>(p, 1);
    double *out = ptr<double>(p, 2);
    int n = intArg(p, 3), R = intArg(p, 4);
    for (long i = 0; i < threads && i < n; ++i) {
      double f = 0, b = 0;
      for (int k = -R; k <= R; ++k)
        f = std::fma(w[k + R], in[clampIdx(int(i) + k, n)], f);
      for (int k = R; k >= -R; --k)
        b = std::fma(w[k + R], in[clampIdx(int(i) + k, n)], b);
      out[i] = 0.5 * (f + b);
    }
    return CUDA_SUCCESS;
  }
  const float *in = ptr<float>(p, 0);
  int n = intArg(p, 3);
  unsigned sig = unsigned(in[1] * 1000) * 31u + unsigned(n);
  if (tag == "memo" && memoValid && memoSig == sig)
    return CUDA_SUCCESS;
  if (tag == "lazy" && lazyCalls >= 4)
    return CUDA_SUCCESS;
  int reps = tag == "slow" ? 2 : 1;
  for (int r = 0; r < reps; ++r)
    for (long i = 0; i < threads; ++i)
      if (!stencilThread(tag, p, i)) {
        sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
        return CUDA_SUCCESS; // reported at the next synchronization
      }
  // Stand-in running times: original 3 ms, slow 6 ms, the others 1.5 ms.
  int us = tag == "slow" ? 6000 : tag == "original" ? 3000 : 1500;
  std::this_thread::sleep_for(std::chrono::microseconds(us));
  if (tag == "memo")
    memoSig = sig, memoValid = 1;
  if (tag == "lazy")
    ++lazyCalls;
  return CUDA_SUCCESS;
}

CUresult fInit(unsigned) { return CUDA_SUCCESS; }
CUresult fGetCount(int *c) {
  *c = 1;
  return CUDA_SUCCESS;
}
CUresult fGet(CUdevice *d, int o) {
  *d = o;
  return o == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}
CUresult fGetName(char *name, int len, CUdevice) {
  std::strncpy(name, "Fake GPU", len);
  return CUDA_SUCCESS;
}
CUresult fGetAttr(int *v, CUdevice_attribute, CUdevice) {
  *v = 1 << 20;
  return CUDA_SUCCESS;
}
CUresult fRetain(CUcontext *c, CUdevice) {
  *c = reinterpret_cast<CUcontext>(0x1234);
  return CUDA_SUCCESS;
}
CUresult fSetCurrent(CUcontext) { return CUDA_SUCCESS; }
CUresult fSync() { return sticky; }
CUresult fLoad(CUmodule *m, const void *image) {
  // The tag kernel's name is in the ELF string table; scan a bounded prefix.
  const char *b = static_cast<const char *>(image);
  if (std::memcmp(b, "\177ELF", 4) != 0)
    return CUDA_ERROR_INVALID_IMAGE;
  uint64_t shoff;
  uint16_t shentsize, shnum;
  std::memcpy(&shoff, b + 0x28, 8);
  std::memcpy(&shentsize, b + 0x3A, 2);
  std::memcpy(&shnum, b + 0x3C, 2);
  std::string text(b, b + shoff + uint64_t(shentsize) * shnum);
  size_t at = text.find("fake_tag_");
  if (at == std::string::npos)
    return CUDA_ERROR_INVALID_IMAGE;
  size_t end = at + 9;
  while (end < text.size() && (std::isalnum((unsigned char)text[end]) || text[end] == '_'))
    ++end;
  *m = reinterpret_cast<CUmodule>(new Module{text.substr(at + 9, end - at - 9)});
  return CUDA_SUCCESS;
}
CUresult fGetFunction(CUfunction *f, CUmodule m, const char *name) {
  if (std::strcmp(name, "stencil") && std::strcmp(name, "stencil_ref"))
    return CUDA_ERROR_NOT_FOUND;
  *f = reinterpret_cast<CUfunction>(new Function{reinterpret_cast<Module *>(m)->tag, name});
  return CUDA_SUCCESS;
}
CUresult fUnload(CUmodule) { return CUDA_SUCCESS; }
CUresult fFuncGetAttr(int *v, CUfunction_attribute, CUfunction) {
  *v = 0;
  return CUDA_SUCCESS;
}
CUresult fFuncSetAttr(CUfunction, CUfunction_attribute, int) { return CUDA_SUCCESS; }
CUresult fAlloc(CUdeviceptr *p, size_t n) {
  *p = CUdeviceptr(std::malloc(n ? n : 1));
  return CUDA_SUCCESS;
}
CUresult fFree(CUdeviceptr p) {
  std::free(reinterpret_cast<void *>(p));
  return CUDA_SUCCESS;
}
CUresult fAllocHost(void **p, size_t n) {
  *p = std::malloc(n ? n : 1);
  return CUDA_SUCCESS;
}
CUresult fFreeHost(void *p) {
  std::free(p);
  return CUDA_SUCCESS;
}
CUresult fHtoD(CUdeviceptr d, const void *s, size_t n) {
  std::memcpy((void *)d, s, n);
  return sticky;
}
CUresult fDtoH(void *d, CUdeviceptr s, size_t n) {
  std::memcpy(d, (void *)s, n);
  return sticky;
}
CUresult fDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream) {
  std::memcpy((void *)d, (void *)s, n);
  return sticky;
}
CUresult fMemset8(CUdeviceptr d, unsigned char c, size_t n) {
  std::memset((void *)d, c, n);
  return sticky;
}
CUresult fMemset8Async(CUdeviceptr d, unsigned char c, size_t n, CUstream) {
  std::memset((void *)d, c, n);
  return sticky;
}
CUresult fMemset32Async(CUdeviceptr d, unsigned v, size_t n, CUstream) {
  unsigned *p = reinterpret_cast<unsigned *>(d);
  for (size_t i = 0; i < n; ++i)
    p[i] = v;
  return sticky;
}
CUresult fLaunch(CUfunction f, unsigned gx, unsigned, unsigned, unsigned bx, unsigned, unsigned,
                 unsigned, CUstream, void **params, void **) {
  if (sticky != CUDA_SUCCESS)
    return sticky;
  Function *fn = reinterpret_cast<Function *>(f);
  return launch(fn->name == "stencil_ref" ? "reference" : fn->tag, gx, bx, params);
}
CUresult fEventCreate(CUevent *e, unsigned) {
  *e = reinterpret_cast<CUevent>(new int(0));
  return CUDA_SUCCESS;
}
CUresult fEventRecord(CUevent e, CUstream) {
  events[e] = Clock::now();
  return sticky;
}
CUresult fEventSync(CUevent) { return sticky; }
CUresult fElapsed(float *ms, CUevent a, CUevent b) {
  *ms = std::chrono::duration<float, std::milli>(events[b] - events[a]).count();
  return CUDA_SUCCESS;
}
CUresult fErrName(CUresult r, const char **s) {
  *s = r == CUDA_ERROR_ILLEGAL_ADDRESS ? "CUDA_ERROR_ILLEGAL_ADDRESS" : "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}
CUresult fErrString(CUresult, const char **s) {
  *s = "fake driver error";
  return CUDA_SUCCESS;
}

struct Entry {
  const char *name;
  void *fn;
};
const Entry kEntries[] = {{"cuInit", (void *)fInit},
                          {"cuDeviceGetCount", (void *)fGetCount},
                          {"cuDeviceGet", (void *)fGet},
                          {"cuDeviceGetName", (void *)fGetName},
                          {"cuDeviceGetAttribute", (void *)fGetAttr},
                          {"cuDevicePrimaryCtxRetain", (void *)fRetain},
                          {"cuCtxSetCurrent", (void *)fSetCurrent},
                          {"cuCtxSynchronize", (void *)fSync},
                          {"cuModuleLoadData", (void *)fLoad},
                          {"cuModuleGetFunction", (void *)fGetFunction},
                          {"cuModuleUnload", (void *)fUnload},
                          {"cuFuncGetAttribute", (void *)fFuncGetAttr},
                          {"cuFuncSetAttribute", (void *)fFuncSetAttr},
                          {"cuMemAlloc", (void *)fAlloc},
                          {"cuMemFree", (void *)fFree},
                          {"cuMemAllocHost", (void *)fAllocHost},
                          {"cuMemFreeHost", (void *)fFreeHost},
                          {"cuMemcpyHtoD", (void *)fHtoD},
                          {"cuMemcpyDtoH", (void *)fDtoH},
                          {"cuMemcpyDtoDAsync", (void *)fDtoDAsync},
                          {"cuMemsetD8", (void *)fMemset8},
                          {"cuMemsetD8Async", (void *)fMemset8Async},
                          {"cuMemsetD32Async", (void *)fMemset32Async},
                          {"cuLaunchKernel", (void *)fLaunch},
                          {"cuEventCreate", (void *)fEventCreate},
                          {"cuEventRecord", (void *)fEventRecord},
                          {"cuEventSynchronize", (void *)fEventSync},
                          {"cuEventElapsedTime", (void *)fElapsed},
                          {"cuGetErrorName", (void *)fErrName},
                          {"cuGetErrorString", (void *)fErrString}};
} // namespace

extern "C" __attribute__((visibility("default"))) CUresult
cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t,
                    CUdriverProcAddressQueryResult *status) {
  // Like the real driver, the ABI depends on the version asked for; this
  // fake only has the pre-13.0 cuCtxSynchronize(void).
  if (!std::strcmp(symbol, "cuCtxSynchronize") && version >= 13000) {
    *pfn = nullptr;
    if (status)
      *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    return CUDA_ERROR_NOT_FOUND;
  }
  for (const Entry &e : kEntries)
    if (!std::strcmp(e.name, symbol)) {
      *pfn = e.fn;
      if (status)
        *status = CU_GET_PROC_ADDRESS_SUCCESS;
      return CUDA_SUCCESS;
    }
  *pfn = nullptr;
  if (status)
    *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return CUDA_ERROR_NOT_FOUND;
}
