/// The double-precision reference of one kernel, derived from its source:
/// the kernel and the device functions it calls, copied with every float
/// type, literal, math call and atomic promoted to double, for the
/// evaluator's tolerance rule (docs/Reference.md, docs/Evaluator.md).
#ifndef CUDAL1_REWRITE_REFERENCE_H
#define CUDAL1_REWRITE_REFERENCE_H

#include "cudal1/Frontend/ProgramModel.h"
#include "cudal1/Rewrite/PlanDriver.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cudal1 {

/// One parameter of the kernel and of its reference.
struct ReferenceParam {
  std::string name;
  std::string type;          ///< the original's C++ type, e.g. `const float *`
  std::string referenceType; ///< the reference's, e.g. `const double *`
  /// The bundle manifest's type of the original (docs/formats/bundle.md),
  /// e.g. `f32*`; the evaluator passes `f32` buffers and scalars to the
  /// reference as `f64`. A `float4 *` is `f32*` (its doubles are a
  /// `double4_16a` array of the same element order).
  std::string bundleType;
};

/// One factor of a reduction's length: how many terms one accumulation
/// sums along one loop or across the threads of an atomic.
struct ReductionFactor {
  enum Kind {
    Constant,     ///< `value`
    Param,        ///< (the scalar parameter `param` - init) / step, see below
    BlockThreads, ///< threads per block (a tree over the block, a block-wide atomic)
    GridThreads,  ///< threads of the launch (an atomic every thread updates)
    GridBlocks,   ///< blocks of the launch (one atomic per block to one address)
    Unknown,      ///< not derived (the text says what)
  };
  Kind kind = Unknown;
  int64_t value = 1; ///< Constant
  int param = -1;    ///< Param: the kernel parameter index
  /// Param: terms = (the parameter's value - offset) / stride (a loop from
  /// offset in steps of stride).
  int64_t offset = 0, stride = 1;
  /// Divided by the threads of the block or the launch (BlockThreads,
  /// GridThreads): a block- or grid-stride loop, where each thread sums a
  /// share and the shares meet in a tree or an atomic. Constant: none.
  Kind per = Constant;
  int64_t divisor = 1; ///< e.g. 32: one atomic per warp
  std::string text;    ///< e.g. `cols`, `blockDim.x`, `k < n / 2`
};

/// An accumulation the reference's tolerance must cover: `acc += ...`,
/// `acc = acc + ...`, `acc = fmaf(a, b, acc)` or a float atomicAdd; its
/// length is the product of its factors (the loops between the
/// accumulator's declaration and the statement, and the threads sharing an
/// atomic's address).
struct ReductionSite {
  SourcePos pos;
  std::string what; ///< e.g. `sum += ... in loop at line 12`
  std::vector<ReductionFactor> factors;
};

/// A launch's shape and scalar arguments, to evaluate reduction lengths.
struct LaunchShape {
  uint64_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  /// The value of scalar parameter i (an integer), when known.
  llvm::function_ref<std::optional<int64_t>(unsigned)> scalar;
};

struct ReferenceKernel {
  std::string kernel; ///< the kernel's name as the model spells it (`k<float>`)
  std::string key;    ///< its kernel key (ProgramModel)
  std::string entry;  ///< the reference's entry point: extern "C", `<kernel>_ref`
  /// The original kernel's entry point: its mangled name, or its name
  /// where it has none (extern "C").
  std::string originalEntry;
  /// The input with the promoted copies appended (line numbers of the
  /// original part unchanged, the first line starts with a comment naming
  /// the entry): compile it as its own unit and load `entry`.
  std::string source;
  std::vector<ReferenceParam> params;
  std::vector<ReductionSite> reductions;
  /// Copies of device functions the reference calls instead of the
  /// originals (`name_ref`), in the order they are emitted.
  std::vector<std::string> promotedCallees;
  /// Things promoted only approximately, e.g. a float literal written in a
  /// larger macro keeps its float value (notes, not errors).
  std::vector<std::string> notes;
  /// The appended text as pieces (helpers, callee copies, the kernel), each
  /// with the name it defines, in emission order: deriveReferenceProgram
  /// merges the pieces of several kernels, one copy of each.
  std::vector<std::pair<std::string, std::string>> parts;
  /// Nothing was promoted: the kernel computes what its reference does.
  bool promotesNothing = false;

  /// `f32* f32* i32`: the manifest's `args` line of the original.
  std::string bundleArgs() const;
  /// The reductions for people, e.g. `line 7: grid threads; line 12: cols`
  /// ("none" when there are none).
  std::string reductionsText() const;
};

/// Derives the reference of kernel `kernel`, named by its name, its name
/// with template arguments (`k<float>`), its kernel key or its mangled name.
/// A construct that cannot be promoted (inline PTX over float operands,
/// textures and surfaces, half types, float bit reinterpretation, float
/// types inside macros, ...) refuses with an error naming it at
/// file:line:col; the evaluator then judges without a reference
/// (`fallback-no-reference`).
llvm::Expected<ReferenceKernel> deriveReference(const RewriteInput &in, llvm::StringRef kernel);

/// deriveReference for several kernels from one parse: one result per
/// kernels[i], in order (each the parse's error when the input does not
/// parse).
std::vector<llvm::Expected<ReferenceKernel>>
deriveReferences(const RewriteInput &in, const std::vector<std::string> &kernels);

/// One kernel of a reference program.
struct ReferenceProgramKernel {
  std::string kernel, key;
  std::string entry;      ///< its reference's entry ("" when kept)
  bool promoted = false;  ///< its launches call the reference
  std::string why;        ///< why it is kept as it is (refusal, no launch)
  unsigned launches = 0;  ///< launch sites now calling the reference
  unsigned leftAlone = 0; ///< launch sites in macros or templates, still float
};

/// The reference program (docs/Reference.md, "The reference program"): the
/// original with every kernel that deriveReference promotes replaced by its
/// double reference at each launch, host code otherwise unchanged. A launch
/// `k<<<g, b, s, st>>>(a...)` becomes a call of a host wrapper that gives
/// each float buffer argument a double shadow of its whole allocation (kept
/// across launches, re-read where the host or a float kernel changed the
/// float values), runs the reference on the shadows and writes the rounded
/// results back to the float buffers; where that cannot be done at run time
/// (not a device allocation, stream capture) the float kernel runs.
struct ReferenceProgram {
  std::string source; ///< "" when no kernel is promoted
  std::vector<ReferenceProgramKernel> kernels;
  unsigned promoted() const;
  /// e.g. `2 of 3 kernels promoted; kept: 'k3' (why)`.
  std::string summary() const;
};

/// The reference program of a unit; an error only when it does not parse.
llvm::Expected<ReferenceProgram> deriveReferenceProgram(const RewriteInput &in);

/// The longest reduction of the kernel at this launch (the manifest's
/// `reduction-length`): the largest product of factors, unknown factors
/// counted as 1; at least 1.
uint64_t reductionLength(const ReferenceKernel &ref, const LaunchShape &launch);

} // namespace cudal1

#endif
