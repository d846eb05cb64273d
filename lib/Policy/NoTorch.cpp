// The policy in a build without libtorch: every model fails to load with a
// message that says so, and the `policy` strategy falls back to the
// heuristic with that remark.
#include "Backend.h"

#include "cudal1/Policy/Policy.h"

using namespace llvm;

namespace cudal1 {

bool policyBackendAvailable() { return false; }

Expected<std::unique_ptr<policynet::Network>> createPolicyNetwork(const policynet::NetConfig &,
                                                                  uint64_t) {
  return createStringError(inconvertibleErrorCode(),
                           "this cudal1 was built without libtorch (install libtorch-dev and "
                           "reconfigure)");
}

} // namespace cudal1
