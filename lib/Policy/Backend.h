// Where the network comes from: libCudaL1PolicyTorch.so, opened on first
// use (TorchBackend.cpp), or nowhere in a build without libtorch
// (NoTorch.cpp). CMake picks the file; nothing branches on macros.
#ifndef CUDAL1_LIB_POLICY_BACKEND_H
#define CUDAL1_LIB_POLICY_BACKEND_H

#include "Torch/Network.h"

#include "llvm/Support/Error.h"

#include <memory>

namespace cudal1 {

llvm::Expected<std::unique_ptr<policynet::Network>>
createPolicyNetwork(const policynet::NetConfig &config, uint64_t seed);

} // namespace cudal1

#endif
