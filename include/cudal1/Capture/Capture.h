// The capture runtime: an instrumented program calls it around each kernel
// launch to record the launch's inputs and outputs (see docs/Evaluator.md).
//
// Environment:
//   CUDAL1_CAPTURE_FILE          output file (default cudal1.capture)
//   CUDAL1_CAPTURE_MAX_LAUNCHES  launches recorded per kernel key (default 4)
//   CUDAL1_CAPTURE_MAX_BYTES     total bytes of recorded contents (default 1 GiB)
//   CUDAL1_CAPTURE_DISABLE=1     record nothing (the calls become cheap no-ops)
// The file is written atomically at exit and by cudal1_capture_flush().
#ifndef CUDAL1_CAPTURE_CAPTURE_H
#define CUDAL1_CAPTURE_CAPTURE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Call right before a launch. `args[i]` points to argument i's value (as for
/// cudaLaunchKernel); `argIsPointer[i]` says the value is a device pointer
/// whose allocation is to be recorded. Synchronizes the device, records the
/// arguments and every pointed-to allocation, and returns a handle for
/// cudal1_capture_end, or -1 when this launch is not recorded (caps reached,
/// capture disabled, or a refused argument: a message says which).
int cudal1_capture_begin(const char *kernelKey, unsigned gridX, unsigned gridY, unsigned gridZ,
                         unsigned blockX, unsigned blockY, unsigned blockZ, size_t sharedBytes,
                         void **args, const size_t *argSizes, const int *argIsPointer, int numArgs);

/// Call right after the launch: synchronizes and records the allocations'
/// contents after the launch. Ignores handle -1.
void cudal1_capture_end(int handle);

/// Declares that kernelKey reads __constant__ or __device__ globals, which a
/// capture cannot restore: its launches are refused with a message.
void cudal1_capture_refuse_kernel(const char *kernelKey, const char *reason);

/// Writes the capture file now (it is also written at exit). Returns 0 on
/// success.
int cudal1_capture_flush(void);

#ifdef __cplusplus
}

namespace cudal1 {
/// RAII form: begins in the constructor, ends in the destructor; put the
/// launch inside the scope.
class CaptureScope {
public:
  CaptureScope(const char *kernelKey, unsigned gridX, unsigned gridY, unsigned gridZ,
               unsigned blockX, unsigned blockY, unsigned blockZ, size_t sharedBytes, void **args,
               const size_t *argSizes, const int *argIsPointer, int numArgs)
      : handle(cudal1_capture_begin(kernelKey, gridX, gridY, gridZ, blockX, blockY, blockZ,
                                    sharedBytes, args, argSizes, argIsPointer, numArgs)) {}
  ~CaptureScope() { cudal1_capture_end(handle); }
  CaptureScope(const CaptureScope &) = delete;
  CaptureScope &operator=(const CaptureScope &) = delete;
  bool recording() const { return handle >= 0; }

private:
  int handle;
};
} // namespace cudal1
#endif

#endif
