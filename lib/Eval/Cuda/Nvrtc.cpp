// NVRTC at the boundary: status codes become Status messages.
#include "cudal1/Eval/Cuda.h"

#include <nvrtc.h>

namespace cudal1::cuda {

namespace {
Status checkNvrtc(nvrtcResult r, const char *what) {
  if (r == NVRTC_SUCCESS)
    return Status::success();
  return makeError(what, ": ", nvrtcGetErrorString(r));
}
} // namespace

Expected<std::vector<uint8_t>> compileWithNvrtc(const std::string &source, const std::string &name,
                                                const std::vector<std::string> &options,
                                                std::string &log) {
  nvrtcProgram prog;
  if (Status s =
          checkNvrtc(nvrtcCreateProgram(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr),
                     "nvrtcCreateProgram");
      !s.ok())
    return s;
  std::vector<const char *> opts;
  for (const std::string &o : options)
    opts.push_back(o.c_str());
  nvrtcResult compiled = nvrtcCompileProgram(prog, int(opts.size()), opts.data());
  size_t logSize = 0;
  if (nvrtcGetProgramLogSize(prog, &logSize) == NVRTC_SUCCESS && logSize > 1) {
    log.resize(logSize);
    nvrtcGetProgramLog(prog, log.data());
    log.resize(logSize - 1);
  }
  Status s = checkNvrtc(compiled, "NVRTC compilation");
  std::vector<uint8_t> cubin;
  if (s.ok()) {
    size_t size = 0;
    s = checkNvrtc(nvrtcGetCUBINSize(prog, &size), "nvrtcGetCUBINSize");
    if (s.ok() && size == 0)
      s = makeError("NVRTC produced no cubin (is the architecture a real "
                    "sm_XX one?)");
    if (s.ok()) {
      cubin.resize(size);
      s = checkNvrtc(nvrtcGetCUBIN(prog, reinterpret_cast<char *>(cubin.data())), "nvrtcGetCUBIN");
    }
  }
  nvrtcDestroyProgram(&prog);
  if (!s.ok())
    return s;
  return cubin;
}

} // namespace cudal1::cuda
