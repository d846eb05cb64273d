// dlopen of the driver and the status conversion at the boundary.
#include "Driver.h"

#include <dlfcn.h>
#include <mutex>

namespace cudal1::cuda {

namespace {
DriverApi gApi;
Status gStatus;
std::once_flag gOnce;

void load() {
  void *lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    const char *why = ::dlerror();
    gStatus = makeError("no CUDA driver (libcuda.so.1: ", why ? why : "?", ")");
    return;
  }
  using GetProc =
      CUresult (*)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
  auto getProc = reinterpret_cast<GetProc>(::dlsym(lib, "cuGetProcAddress_v2"));
  if (!getProc) {
    gStatus = makeError("the CUDA driver is too old (no cuGetProcAddress_v2)");
    return;
  }
#define CUDAL1_LOAD(name, version)                                                                 \
  {                                                                                                \
    void *fn = nullptr;                                                                            \
    CUdriverProcAddressQueryResult q;                                                              \
    if (getProc(#name, &fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) != CUDA_SUCCESS ||     \
        !fn) {                                                                                     \
      gStatus = makeError("the CUDA driver lacks " #name " (ABI ", version, ")");                  \
      return;                                                                                      \
    }                                                                                              \
    gApi.name = reinterpret_cast<decltype(gApi.name)>(fn);                                         \
  }
  CUDAL1_DRIVER_FUNCTIONS(CUDAL1_LOAD)
#undef CUDAL1_LOAD
}
} // namespace

Expected<const DriverApi *> driver() {
  std::call_once(gOnce, load);
  if (!gStatus.ok())
    return gStatus;
  return static_cast<const DriverApi *>(&gApi);
}

std::string errorName(CUresult r) {
  const char *name = nullptr;
  if (gApi.cuGetErrorName && gApi.cuGetErrorName(r, &name) == CUDA_SUCCESS && name)
    return name;
  return "CUresult " + std::to_string(int(r));
}

Status checkCu(CUresult r, const char *what) {
  if (r == CUDA_SUCCESS)
    return Status::success();
  const char *text = nullptr;
  if (gApi.cuGetErrorString)
    gApi.cuGetErrorString(r, &text);
  return makeError(what, ": ", errorName(r), " (", text ? text : "?", ")");
}

} // namespace cudal1::cuda
