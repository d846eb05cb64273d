// The kernel part of a split-path bundle (issue 15 item 6,
// docs/formats/kernel-plans.md): the kernel-level plans of a program bundle
// that the GPU machine judges by replay. cudal1-opt --emit-bundle writes
// BUNDLE/kernels/manifest.txt (the kernels, their double references, the
// variants) and BUNDLE/instrumented.cu; cudal1-eval builds and runs the
// instrumented program once to capture the launches, writes one kernel
// bundle per captured kernel (docs/formats/bundle.md) and evaluates it, and
// records in BUNDLE/kernels/status.txt which kernels were replayed and why
// the others were not (their plans are then judged as whole programs, from
// the program bundle). Captures cannot be made without a GPU, so the
// manifest says how to make them rather than holding them.
#ifndef CUDAL1_EVAL_KERNELPLANS_H
#define CUDAL1_EVAL_KERNELPLANS_H

#include "cudal1/Eval/Error.h"
#include "cudal1/Eval/LaunchRemap.h"

#include <string>
#include <vector>

namespace cudal1 {

/// Version 2 added a variant's launch remap (launch=); version 1 files read
/// the same (none of their variants changes the launch).
constexpr int kKernelPlansVersion = 2;

struct KernelPlanKernel {
  std::string key;            ///< the kernel key the captures name
  std::string name;           ///< for messages
  std::string entry;          ///< the original's mangled name
  std::string args;           ///< the kernel bundle's args (ReferenceKernel::bundleArgs)
  std::string reference;      ///< its double reference, relative to kernels/
  std::string referenceEntry; ///< the reference's entry
};

struct KernelPlanVariant {
  std::string id;        ///< the program bundle's variant id; its source is BUNDLE/ID.cu
  std::string kernelKey; ///< one of the kernels
  std::string entry;     ///< its mangled name in the variant (restrict changes it)
  bool fastMath = false;
  /// What the plan does to the kernel's launches, applied to each captured
  /// launch before verification and timing (empty: they are kept).
  LaunchRemap launch;
};

struct KernelPlans {
  std::string dir; ///< BUNDLE/kernels, where the manifest was read from
  /// The instrumented program's source, relative to the program bundle
  /// (beside original.cu, so that its quoted includes resolve the same).
  std::string instrumented = "instrumented.cu";
  /// The capture runtime's sources (lib/Capture, include/), relative to
  /// kernels/: compiled into the instrumented program on the GPU machine.
  std::string runtime = "runtime";
  std::string arch = "sm_90";
  std::vector<std::string> flags; ///< the user's flags that matter to device code
  std::vector<KernelPlanKernel> kernels;
  std::vector<KernelPlanVariant> variants;
  const KernelPlanKernel *kernel(const std::string &key) const;
};

/// The runtime's files, relative to the runtime directory.
const std::vector<std::string> &captureRuntimeFiles();

std::string formatKernelPlans(const KernelPlans &plans);
Expected<KernelPlans> parseKernelPlans(const std::string &text, const std::string &dir,
                                       const std::string &name);
/// Reads DIR/manifest.txt (DIR is BUNDLE/kernels).
Expected<KernelPlans> readKernelPlans(const std::string &dir);
Status writeKernelPlans(const KernelPlans &plans, const std::string &dir);

/// What the capture gave, per kernel of the manifest (status.txt).
struct KernelPlanStatus {
  std::string key;
  bool replayed = false;
  unsigned launches = 0; ///< captured launches
  std::string results;   ///< its kernel bundle, relative to kernels/ (replayed only)
  std::string remark;    ///< why not replayed (or "" when it was)
};
/// A variant of a replayed kernel left to the program level, and why (its
/// launch remap gives no one configuration for the captured launches).
struct KernelPlanVariantStatus {
  std::string id;
  std::string remark;
};
struct KernelPlansStatus {
  std::string remark; ///< for the whole capture: why nothing was replayed; "" otherwise
  std::vector<KernelPlanStatus> kernels;
  std::vector<KernelPlanVariantStatus> variants; ///< since version 2
  const KernelPlanVariantStatus *findVariant(const std::string &id) const;
  const KernelPlanStatus *find(const std::string &key) const;
};
std::string formatKernelPlansStatus(const KernelPlansStatus &s);
Expected<KernelPlansStatus> parseKernelPlansStatus(const std::string &text,
                                                   const std::string &name);
Expected<KernelPlansStatus> readKernelPlansStatus(const std::string &dir);
Status writeKernelPlansStatus(const KernelPlansStatus &s, const std::string &dir);

} // namespace cudal1

#endif
