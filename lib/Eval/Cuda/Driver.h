// The CUDA driver API, loaded at run time with dlopen + cuGetProcAddress so
// that cudal1-eval starts (and says "no GPU") on machines without a driver.
// Only lib/Eval/Cuda/ includes this file.
#ifndef CUDAL1_LIB_EVAL_CUDA_DRIVER_H
#define CUDAL1_LIB_EVAL_CUDA_DRIVER_H

#include "cudal1/Eval/Error.h"

#include <cuda.h>

#include <string>

namespace cudal1::cuda {

#define CUDAL1_DRIVER_FUNCTIONS(X)                                             \
  X(cuInit)                                                                    \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuCtxSetCurrent)                                                           \
  X(cuCtxSynchronize)                                                          \
  X(cuModuleLoadData)                                                          \
  X(cuModuleGetFunction)                                                       \
  X(cuModuleUnload)                                                            \
  X(cuFuncGetAttribute)                                                        \
  X(cuFuncSetAttribute)                                                        \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)                                                                 \
  X(cuMemcpyHtoD)                                                              \
  X(cuMemcpyDtoH)                                                              \
  X(cuMemcpyDtoDAsync)                                                         \
  X(cuMemsetD8)                                                                \
  X(cuMemsetD8Async)                                                           \
  X(cuMemsetD32Async)                                                          \
  X(cuLaunchKernel)                                                            \
  X(cuEventCreate)                                                             \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuEventElapsedTime)                                                        \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)

/// Function pointers with the exact types of this toolkit's cuda.h, fetched
/// for its CUDA_VERSION (so versioned entry points such as cuMemAlloc_v2 are
/// the ones the header means).
struct DriverApi {
#define CUDAL1_DECLARE(name) decltype(&::name) name = nullptr;
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
