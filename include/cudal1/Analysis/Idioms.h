// Structural recognizers of the computations that passes replace or
// restructure (docs/Analysis.md, "Idioms"): matrix products (GEMM, GEMV),
// their reduction loops, guarded global ids and grid coverage. They match
// the AST and the accesses' affine forms (ProgramModel.h), never spelled
// text, and return typed descriptions (which parameter is A, B and C, the
// leading dimensions, M/N/K, alpha and beta), or why the kernel is not one.
#ifndef CUDAL1_ANALYSIS_IDIOMS_H
#define CUDAL1_ANALYSIS_IDIOMS_H

#include "cudal1/Frontend/ProgramModel.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace clang {
class ArraySubscriptExpr;
class ASTContext;
class CallExpr;
class CUDAKernelCallExpr;
class Expr;
class ForStmt;
class FunctionDecl;
class IfStmt;
class ParmVarDecl;
class Stmt;
class VarDecl;
} // namespace clang

namespace mlir {
class MLIRContext;
}

namespace cudal1 {

class ParsedUnit;

/// What one dimension of an index is in terms of the threads: a global id
/// `blockIdx.d * blockDim.d + threadIdx.d`, the quotient or remainder of one
/// by an invariant (the row and column of a 1-D mapping), or a loop counter.
struct ThreadCoord {
  enum class Kind { GlobalId, Quotient, Remainder, Loop, Other } kind = Kind::Other;
  unsigned axis = 0;     ///< GlobalId, Quotient, Remainder: 0 x, 1 y, 2 z
  SymbolicValue divisor; ///< Quotient, Remainder
  unsigned loop = 0;     ///< Loop: the counter $k<loop>
  bool operator==(const ThreadCoord &o) const {
    return kind == o.kind && axis == o.axis && divisor == o.divisor && loop == o.loop;
  }
  bool operator!=(const ThreadCoord &o) const { return !(*this == o); }
};

/// The coordinate `p` is (atoms resolved through `form`).
ThreadCoord coordOf(const LinearPart &p, const AffineForm &form);

/// A guard `coord < bound` with an invariant bound: the guarded global id.
struct GuardedId {
  ThreadCoord coord;
  SymbolicValue bound;
  const Guard *guard = nullptr;
};

/// The guards of `a` as guarded ids (the conditions of enclosing loops
/// left out); "" or the reason one is not `coordinate < invariant`.
std::string guardedIds(const MemAccess &a, mlir::MLIRContext &ctx, std::vector<GuardedId> &out);

/// A reduction loop `for (k = 0; k < K; ++k) T += [s *] X[..] * Y[..]`
/// (also `k++`, `k += 1`, `T = T + ...`, a counter declared before the loop,
/// the factors in any order): T is a local accumulator or, accumulating in
/// place, a global element.
struct DotLoop {
  const clang::ForStmt *loop = nullptr;
  unsigned loopId = 0; ///< into Kernel::loops: the affine forms' $k<loopId>
  const clang::VarDecl *counter = nullptr;
  const clang::Expr *bound = nullptr;
  const clang::VarDecl *accumulator = nullptr;       ///< a local, or null
  const clang::ArraySubscriptExpr *target = nullptr; ///< in place: the element, or null
  /// `C[o] = C[o] + ...`: the element read on the right, or null.
  const clang::ArraySubscriptExpr *targetRead = nullptr;
  const clang::Expr *update = nullptr;                        ///< the statement `T += ...`
  const clang::Expr *summand = nullptr;                       ///< what each iteration adds
  const clang::ArraySubscriptExpr *x = nullptr, *y = nullptr; ///< the operands, as written
  const MemAccess *xAccess = nullptr, *yAccess = nullptr;
  const clang::Expr *scale = nullptr; ///< a scalar factor of the summand, or null
  /// `acc += X[..] * Y[..]` exactly (the form the tiled rewrite prints as it was).
  bool plainProduct = false;
};

/// Whether `s` is such a loop in kernel `kernel`; "" or why not.
std::string recognizeDotLoop(const ParsedUnit &u, unsigned kernel, const clang::Stmt *s,
                             DotLoop &out);

/// A scalar of alpha * op(A) op(B) + beta * C: an expression of the kernel
/// (a parameter or a literal), or the constant when `expr` is null.
struct GemmScalar {
  const clang::Expr *expr = nullptr;
  int64_t constant = 0;
};

struct GemmOperand {
  const clang::ParmVarDecl *param = nullptr;
  const clang::ArraySubscriptExpr *read = nullptr;
  const MemAccess *access = nullptr;
  bool transposed = false;
  SymbolicValue ld; ///< the distance between rows as stored (a product of parameters)
};

/// C = alpha * op(A) op(B) + beta * C, row-major, one thread per element of
/// C (GEMM), or y = alpha * op(A) x + beta * y, one thread per row (GEMV).
struct GemmIdiom {
  enum class Accumulation { Local, InPlace } accumulation = Accumulation::Local;
  /// TwoD: row and column are global ids of two axes; OneD: the quotient
  /// and remainder of the x global id by the column count.
  enum class Mapping { TwoD, OneD } mapping = Mapping::TwoD;
  bool matrixVector = false;
  std::string elementType; ///< canonical, e.g. float, double, int
  GemmOperand a, b;        ///< for GEMV, b is the vector x
  const clang::ParmVarDecl *c = nullptr;
  const clang::ArraySubscriptExpr *store = nullptr; ///< the write of C's element
  SymbolicValue ldc;
  const clang::ParmVarDecl *m = nullptr, *n = nullptr, *k = nullptr; ///< n null for GEMV
  GemmScalar alpha{nullptr, 1}, beta{nullptr, 0};
  DotLoop dot;
  const clang::IfStmt *guard = nullptr;
  ThreadCoord row, col;
};

/// Whether kernel `kernel` computes exactly a GEMM or GEMV and nothing else:
/// integer index declarations, one bounds check on the thread coordinates,
/// inside it a zeroed local accumulator, the reduction loop and the store
/// (`C = acc`, `alpha * acc`, `alpha * acc + beta * C`), or the in-place
/// form (`C *= beta` or `C = 0`, then `C += alpha * A * B`). "" or why not.
std::string recognizeGemm(const ParsedUnit &u, unsigned kernel, mlir::MLIRContext &ctx,
                          GemmIdiom &out);

/// A sum of a global array into one element: `*out += sum_{i<n} f(x[i])`
/// with f the identity (cast to the target's type) or the square.
struct SumIdiom {
  const clang::ParmVarDecl *x = nullptr, *out = nullptr, *n = nullptr;
  std::string outType; ///< canonical
  bool square = false;
  long long tree = 0; ///< the block tree: its shared array's size (0: one atomic per element)
};

/// Whether kernel `kernel` is exactly the atomic sum `int i = GLOBAL-ID;
/// if (i < n) atomicAdd(out, x[i] | (T)x[i] | x[i] * x[i]);`. "" or why not.
std::string recognizeAtomicSum(const ParsedUnit &u, unsigned kernel, mlir::MLIRContext &ctx,
                               SumIdiom &out);

/// Whether kernel `kernel` is exactly the block tree sum with one atomic
/// per block (a shared array loaded with `(i < n) ? x[i] : 0`, halved by
/// `s = blockDim.x / 2; s > 0; s /= 2` with barriers, `if (tid == 0)
/// atomicAdd(out, cache[0])`), matched on the AST (names and the order of
/// commutative operands free). The block size must still be checked at the
/// launch (a power of two no larger than `tree`). "" or why not.
std::string recognizeTreeSum(const ParsedUnit &u, unsigned kernel, mlir::MLIRContext &ctx,
                             SumIdiom &out);

/// One atomicAdd into an address that is the same for every thread of a
/// block, which every thread reaches (what warp-reduce turns into one atomic
/// per warp): the kernel's only atomic, its result unused, a statement at
/// the top of the body or directly inside a top-level `if` without else
/// (maybe cast to void); no return or goto in the kernel, no warp-level
/// intrinsics; the value float, double, int, unsigned int or unsigned long
/// long; the target an access through a pointer parameter whose affine
/// index has no threadIdx term (none through a quotient or remainder
/// either; an index outside the affine form, a product of block indices,
/// by its affine expression), and whose local variables are neither modified anywhere nor
/// declared inside the if (so the address means the same after it). The
/// atomic sum (recognizeAtomicSum) is one.
struct UniformAtomic {
  const clang::IfStmt *guard = nullptr; ///< null: the atomic is a top-level statement
  const clang::Expr *stmt = nullptr;    ///< the statement: the call, maybe cast to void
  const clang::CallExpr *call = nullptr;
  const MemAccess *target = nullptr;
  std::string valueType; ///< canonical: float, double, int, unsigned int, unsigned long long
};

/// Whether kernel `kernel` holds such an atomic; "" or why not.
std::string recognizeUniformAtomic(const ParsedUnit &u, unsigned kernel, mlir::MLIRContext &ctx,
                                   UniformAtomic &out);

/// Whether the grid of launch `launch` has at least `bound` threads along
/// dimension `d`: the grid's component is `(X + c) / b` with b the block's
/// constant size and X + c equal, as a polynomial in host variables, to
/// `bound` + b - 1 (`bound` over the kernel's parameters, each replaced by
/// its launch argument), with every variable involved unchanged in the
/// launching function. "" or why not. `boundText` names the bound in the
/// message.
std::string gridCovers(ParsedUnit &u, unsigned launch, unsigned d, const SymbolicValue &bound,
                       const std::string &boundText);

/// The value of a compile-time integer: a literal, a constant expression,
/// or a component of a dim3 variable initialised with constants (`block.x`).
std::optional<int64_t> constValue(clang::ASTContext &ast, const clang::Expr *e);
/// Component `d` of a dim3 launch-configuration argument as written (null:
/// defaulted, that is 1).
const clang::Expr *dimComponent(const clang::Expr *cfg, unsigned d);

} // namespace cudal1

#endif
