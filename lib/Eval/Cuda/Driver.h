// The CUDA driver API, loaded at run time with dlopen + cuGetProcAddress so
// that cudal1-eval starts (and says "no GPU") on machines without a driver.
// Only lib/Eval/Cuda/ includes this file.
#ifndef CUDAL1_LIB_EVAL_CUDA_DRIVER_H
#define CUDAL1_LIB_EVAL_CUDA_DRIVER_H

#include "cudal1/Eval/Error.h"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>

namespace cudal1::cuda {

// Each entry point is requested at the ABI version whose prototype the
// member's type (cudaTypedefs.h's PFN_name_vVERSION) has. Asking for
// CUDA_VERSION instead returns the newest ABI, which can differ from the
// prototype in cuda.h: CUDA 13's cuCtxSynchronize (v13000) takes a context
// argument, and calling it as cuCtxSynchronize(void) returned
// CUDA_ERROR_CONTEXT_IS_DESTROYED on the H200.
#define CUDAL1_DRIVER_FUNCTIONS(X)                                                                 \
  X(cuInit, 2000)                                                                                  \
  X(cuDeviceGetCount, 2000)                                                                        \
  X(cuDeviceGet, 2000)                                                                             \
  X(cuDeviceGetName, 2000)                                                                         \
  X(cuDeviceGetAttribute, 2000)                                                                    \
  X(cuDevicePrimaryCtxRetain, 7000)                                                                \
  X(cuCtxSetCurrent, 4000)                                                                         \
  X(cuCtxSynchronize, 2000)                                                                        \
  X(cuModuleLoadData, 2000)                                                                        \
  X(cuModuleGetFunction, 2000)                                                                     \
  X(cuModuleUnload, 2000)                                                                          \
  X(cuFuncGetAttribute, 2020)                                                                      \
  X(cuFuncSetAttribute, 9000)                                                                      \
  X(cuMemAlloc, 3020)                                                                              \
  X(cuMemFree, 3020)                                                                               \
  X(cuMemAllocHost, 3020)                                                                          \
  X(cuMemFreeHost, 2000)                                                                           \
  X(cuMemcpyHtoD, 3020)                                                                            \
  X(cuMemcpyDtoH, 3020)                                                                            \
  X(cuMemcpyDtoDAsync, 3020)                                                                       \
  X(cuMemsetD8, 3020)                                                                              \
  X(cuMemsetD8Async, 3020)                                                                         \
  X(cuMemsetD32Async, 3020)                                                                        \
  X(cuLaunchKernel, 4000)                                                                          \
  X(cuEventCreate, 2000)                                                                           \
  X(cuEventRecord, 2000)                                                                           \
  X(cuEventSynchronize, 2000)                                                                      \
  X(cuEventElapsedTime, 12080)                                                                     \
  X(cuGetErrorName, 6000)                                                                          \
  X(cuGetErrorString, 6000)

/// Function pointers, each of the ABI version named in the list above.
struct DriverApi {
#define CUDAL1_DECLARE(name, version) PFN_##name##_v##version name = nullptr;
  CUDAL1_DRIVER_FUNCTIONS(CUDAL1_DECLARE)
#undef CUDAL1_DECLARE
};

/// Loads libcuda.so.1 once; an error when there is no driver.
Expected<const DriverApi *> driver();

/// Converts a driver status into a Status: "what: CUDA_ERROR_X (text)".
Status checkCu(CUresult r, const char *what);

/// The error's name, e.g. CUDA_ERROR_ILLEGAL_ADDRESS.
std::string errorName(CUresult r);

} // namespace cudal1::cuda

#endif
