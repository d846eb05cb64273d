// Opens libCudaL1PolicyTorch.so on first use. Linking libtorch into
// cudal1-opt would cost every run about 0.4 s and ~290 shared libraries
// (docs/Toolchain.md); only runs that score plans pay for it this way.
#include "Backend.h"

#include "cudal1/Policy/Policy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <dlfcn.h>
#include <mutex>

using namespace llvm;

namespace cudal1 {
namespace {

struct Opened {
  policynet::CreateNetworkFn create = nullptr;
  std::string error;
};

/// Next to the running tool (bin/../lib, the build tree's layout), else
/// where this build put it.
Opened openBackend() {
  Opened o;
  std::vector<std::string> candidates;
  std::string exe = sys::fs::getMainExecutable(nullptr, (void *)&openBackend);
  if (!exe.empty()) {
    SmallString<256> p(sys::path::parent_path(sys::path::parent_path(exe)));
    sys::path::append(p, "lib", CUDAL1_POLICY_TORCH_NAME);
    candidates.push_back(std::string(p));
  }
  candidates.push_back(CUDAL1_POLICY_TORCH_PATH);
  std::string tried;
  for (const std::string &c : candidates) {
    if (!sys::fs::exists(c)) {
      tried += (tried.empty() ? "" : ", ") + c;
      continue;
    }
    void *h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char *e = dlerror();
      o.error = "cannot open the libtorch policy backend: " + std::string(e ? e : c);
      return o;
    }
    o.create =
        reinterpret_cast<policynet::CreateNetworkFn>(dlsym(h, policynet::kCreateNetworkSymbol));
    if (!o.create)
      o.error = c + ": no symbol " + policynet::kCreateNetworkSymbol;
    return o;
  }
  o.error = "the libtorch policy backend is not built (looked for " + tried + ")";
  return o;
}

} // namespace

bool policyBackendAvailable() { return true; }

Expected<std::unique_ptr<policynet::Network>>
createPolicyNetwork(const policynet::NetConfig &config, uint64_t seed) {
  static std::once_flag once;
  static Opened backend;
  std::call_once(once, [] { backend = openBackend(); });
  if (!backend.create)
    return createStringError(inconvertibleErrorCode(), backend.error);
  std::string error;
  policynet::Network *n = backend.create(&config, seed, &error);
  if (!n)
    return createStringError(inconvertibleErrorCode(), error);
  return std::unique_ptr<policynet::Network>(n);
}

} // namespace cudal1
