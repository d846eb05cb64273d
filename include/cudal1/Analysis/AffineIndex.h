// Index expressions as MLIR affine expressions. The front end writes each
// index as normalized text (docs/Analysis.md); IndexSpace parses it into an
// mlir::AffineExpr over named dimensions (thread and block indices, loop
// counters, opaque values) and symbols (launch dimensions, parameters), and
// answers the questions the passes ask: stride along threadIdx.x, linearity.
#ifndef CUDAL1_ANALYSIS_AFFINEINDEX_H
#define CUDAL1_ANALYSIS_AFFINEINDEX_H

#include "cudal1/Frontend/ProgramModel.h"

#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
}

namespace cudal1 {

/// Names ↔ positions. Dimensions 0-5 are threadIdx.{x,y,z} and
/// blockIdx.{x,y,z}; loop counters ($kN) and opaque values (?name) get the
/// next ones. Everything else (blockDim, gridDim, parameters) is a symbol.
class IndexSpace {
public:
  enum : unsigned { ThreadX = 0, ThreadY, ThreadZ, BlockX, BlockY, BlockZ, NumBuiltinDims };

  explicit IndexSpace(mlir::MLIRContext &ctx);

  /// Parses normalized text; `rename` may map a name first (a kernel
  /// parameter to the launch argument bound to it). Returns nullopt for text
  /// outside the grammar.
  std::optional<mlir::AffineExpr>
  parse(llvm::StringRef text, const std::function<std::string(llvm::StringRef)> &rename = nullptr);

  /// Human-readable C-like text with the original names.
  std::string print(mlir::AffineExpr e) const;

  unsigned numDims() const { return dimNames.size(); }
  unsigned numSymbols() const { return symbolNames.size(); }
  const std::string &dimName(unsigned i) const { return dimNames[i]; }
  const std::string &symbolName(unsigned i) const { return symbolNames[i]; }
  bool isOpaqueDim(unsigned i) const { return dimNames[i][0] == '?'; }
  bool isLoopDim(unsigned i) const { return dimNames[i][0] == '$'; }
  /// The symbol position of a name, if it was seen.
  std::optional<unsigned> symbol(llvm::StringRef name) const;
  mlir::MLIRContext &context() const { return ctx; }

private:
  mlir::MLIRContext &ctx;
  std::vector<std::string> dimNames, symbolNames;
  std::map<std::string, unsigned, std::less<>> dims, symbols;

  mlir::AffineExpr name(llvm::StringRef n);
};

/// Whether `e` uses any opaque dimension (then its strides are unknown).
bool usesOpaque(mlir::AffineExpr e, const IndexSpace &space);

/// The coefficient of dimension `dim` in `e`, i.e. how far `e` moves when
/// that dimension grows by one; nullopt when `e` is not linear in it (or
/// depends on an opaque value).
std::optional<mlir::AffineExpr> coefficientOf(mlir::AffineExpr e, unsigned dim,
                                              const IndexSpace &space);

/// `e` with every dimension set to 0 (its thread- and loop-invariant part).
mlir::AffineExpr dropDims(mlir::AffineExpr e, const IndexSpace &space);

/// Evaluates `e` with dimensions and symbols bound to the given values
/// (missing ones bind to 0); nullopt when it does not fold to a constant.
std::optional<int64_t> evaluate(mlir::AffineExpr e, llvm::ArrayRef<int64_t> dimValues,
                                llvm::ArrayRef<int64_t> symbolValues);

/// Whether `a` and `b` are the same function, tested at several random
/// points (symbolic coefficients are products that MLIR does not reorder).
bool sameFunction(mlir::AffineExpr a, mlir::AffineExpr b, const IndexSpace &space);

/// The constant c with e = c * g_d + (terms free of thread dimension d),
/// where g_d = blockIdx.d * blockDim.d + threadIdx.d is the global thread id;
/// nullopt when e uses threadIdx.d and blockIdx.d in another combination
/// (then e depends on the block shape, not only on the global id).
std::optional<int64_t> globalCoefficient(mlir::AffineExpr e, unsigned d, IndexSpace &space);

/// Whether `e` depends on threadIdx.d, blockIdx.d and blockDim.d only through
/// the global id blockIdx.d * blockDim.d + threadIdx.d (for every d): two
/// decompositions of the same global ids into blocks give the same value.
/// Tested at random points, so it also sees through / and %.
bool dependsOnGlobalIdsOnly(mlir::AffineExpr e, IndexSpace &space);

/// Replacements for the dimensions of `e` (for replaceDims) that set to 0
/// every loop counter whose coefficient is the thread coefficient times
/// blockDim.d * gridDim.d: the counter of a grid-stride loop, which then
/// reads as the logical element index. `folded` says whether any was.
llvm::SmallVector<mlir::AffineExpr> gridStrideFold(mlir::AffineExpr e, IndexSpace &space,
                                                   bool &folded);

/// A stride: an integer, a symbolic expression, or unknown.
struct Stride {
  enum class Kind { Constant, Symbolic, Unknown } kind = Kind::Unknown;
  int64_t value = 0;
  std::string text;
};

/// The element stride between adjacent threadIdx.x of the index `e`.
Stride strideAlong(mlir::AffineExpr e, unsigned dim, const IndexSpace &space);

/// The structured affine form of normalized index text (ProgramModel.h,
/// AffineForm): parsed by `space`, then expanded into a polynomial that must
/// be linear in the thread and block indices, loop counters and the atoms
/// `x / s`, `x % s` of invariant divisors; `affine` is false (with the
/// reason) otherwise. The front end stores it with every access.
AffineForm affineFormOf(llvm::StringRef normalized, IndexSpace &space);

/// Whether `p` is exactly blockIdx.d * blockDim.d + threadIdx.d.
bool isGlobalId(const LinearPart &p, unsigned d);
/// The loop N when `p` is exactly the counter $kN.
std::optional<unsigned> loopCounterOf(const LinearPart &p);

} // namespace cudal1

#endif
