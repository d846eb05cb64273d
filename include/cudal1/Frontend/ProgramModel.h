// The ProgramModel: what the front end extracts from one CUDA translation
// unit. Plain data (strings and numbers) so that the analysis, the passes and
// the tests can work on it without an AST.
#ifndef CUDAL1_FRONTEND_PROGRAMMODEL_H
#define CUDAL1_FRONTEND_PROGRAMMODEL_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cudal1 {

/// A presumed source position (after macro expansion, as a user reads it).
struct SourcePos {
  std::string file;
  unsigned line = 0;
  unsigned col = 0;
  std::string str() const;
};

struct KernelParam {
  std::string name;
  std::string type;
  bool isPointer = false;
  bool pointeeConst = false;
  bool isRestrict = false;
  /// Element type of a pointer parameter ("" for scalars).
  std::string elementType;
};

/// A loop of a kernel. Loops are numbered in source order (preorder).
struct KernelLoop {
  unsigned id = 0;
  int parent = -1;
  unsigned depth = 0;
  std::string kind; ///< for | while | do
  std::string var;  ///< induction variable, "" when none was recognised
  std::string init, cond, bound, step;
  /// Set when `var = init + $kN * step` holds for the N-th iteration, which
  /// lets the analysis treat the loop counter $kN as an affine dimension.
  bool affine = false;
  bool gridStride = false;
  SourcePos pos;
};

enum class AccessKind { Read, Write };

/// The comparison of a guard.
enum class GuardOp { LT, LE, GT, GE, EQ, NE };
/// "<", "<=", ">", ">=", "==", "!=".
const char *toString(GuardOp op);

/// A condition `lhs op rhs` that dominates an access, each side normalized
/// as indices are; a condition that must be false to reach the access (an
/// early return, an else branch) has its operator negated.
struct Guard {
  std::string lhs;
  GuardOp op = GuardOp::LT;
  std::string rhs;
  /// "lhs op rhs", as the analysis' messages print it.
  std::string str() const;
};

/// An integer times a product of thread-invariant names (launch dimensions
/// such as blockDim.x, kernel parameters, globals), the names sorted.
struct Monomial {
  int64_t coeff = 0;
  std::vector<std::string> symbols;
  bool operator==(const Monomial &o) const { return coeff == o.coeff && symbols == o.symbols; }
};

/// A polynomial in thread-invariant names: a sum of monomials with distinct
/// symbol lists in sorted order and no zero coefficient (so two equal values
/// compare equal); no terms is 0.
struct SymbolicValue {
  std::vector<Monomial> terms;
  bool isZero() const { return terms.empty(); }
  /// The integer value when no name occurs.
  std::optional<int64_t> constant() const;
  /// The single name when the value is exactly that name (`N`).
  std::optional<std::string> name() const;
  /// C-like text: "N * K + 2".
  std::string str() const;
  bool operator==(const SymbolicValue &o) const { return terms == o.terms; }
  bool operator!=(const SymbolicValue &o) const { return !(*this == o); }
};

/// A variable of an affine index and its coefficient. Variables are
/// threadIdx.{x,y,z}, blockIdx.{x,y,z}, loop counters ($kN: the iteration
/// number of loop N) and atoms ("#I": AffineForm::atoms[I]).
struct AffineTerm {
  std::string var;
  SymbolicValue coeff;
  bool operator==(const AffineTerm &o) const { return var == o.var && coeff == o.coeff; }
};

/// A sum of terms plus a thread- and loop-invariant part.
struct LinearPart {
  std::vector<AffineTerm> terms; ///< in variable order, no zero coefficient
  SymbolicValue constant;
  /// The coefficient of `var` (0 when absent).
  SymbolicValue coefficient(const std::string &var) const;
  bool operator==(const LinearPart &o) const { return terms == o.terms && constant == o.constant; }
};

/// `numerator / divisor` (floor) or `numerator % divisor` of a linear part
/// by a positive invariant: the row and column of a 1-D thread mapping
/// (`idx / N`, `idx % N`).
struct IndexAtom {
  enum class Op { FloorDiv, Mod } op = Op::FloorDiv;
  LinearPart numerator; ///< may use earlier atoms
  SymbolicValue divisor;
  bool operator==(const IndexAtom &o) const {
    return op == o.op && numerator == o.numerator && divisor == o.divisor;
  }
};

/// One dimension of a flattened multi-dimensional index `i * N + j`: the
/// index is the sum over its dimensions of stride * index, where the stride
/// is a product of kernel parameters (1 for the innermost) and the index's
/// coefficients involve only integers and launch dimensions.
struct LogicalDim {
  SymbolicValue stride;
  LinearPart index;
};

/// The structured form of an index (docs/Analysis.md, "Affine forms"):
/// linear in the thread and block indices, loop counters and atoms, with
/// coefficients that are polynomials in invariant names. Computed once by
/// the front end from the normalized index.
struct AffineForm {
  bool affine = false;
  std::string whyNot; ///< when not affine: what is outside the form
  LinearPart linear;  ///< the whole index
  std::vector<IndexAtom> atoms;
  std::vector<LogicalDim> dims; ///< the decomposition, outermost (largest stride) first
};

/// One access to global memory through a pointer parameter.
struct MemAccess {
  std::string param; ///< the kernel parameter the pointer derives from
  int paramIndex = -1;
  AccessKind kind = AccessKind::Read;
  bool atomic = false;
  std::string index;           ///< the index as written in the source
  std::string normalized;      ///< the index over builtins, parameters and loop counters
  std::vector<unsigned> loops; ///< enclosing loops, outermost first
  /// Conditions that dominate the access and bound a thread-dependent value
  /// (if-conditions, early returns, loop conditions), normalized.
  std::vector<Guard> guards;
  /// The index as an affine form (affine == false when it is not one).
  AffineForm affine;
  SourcePos pos;
};

struct SharedDecl {
  std::string name, type;
  long long bytes = -1; ///< -1 when not a compile-time constant
  bool dynamic = false; ///< extern __shared__
  SourcePos pos;
};

/// A call of interest inside a kernel: barrier, atomic or device function.
struct KernelCall {
  std::string callee;
  std::string target; ///< atomics: the parameter they update
  SourcePos pos;
};

struct Kernel {
  std::string name;
  std::string mangledName;
  std::string key; ///< stable identity: mangled name + normalized source of it and its callees
  std::string templateArgs;
  bool fromHeader = false;
  SourcePos pos;
  /// The kernels of this definition (instantiations of one template share
  /// one), this one included, by index; filled by the front end.
  std::vector<unsigned> sameDefinition;
  std::vector<KernelParam> params;
  std::vector<KernelLoop> loops;
  std::vector<MemAccess> accesses;
  std::vector<SharedDecl> shared;
  std::vector<KernelCall> barriers, atomics, calls;
  /// Static operation counts of the body (for the policy's features).
  unsigned flops = 0, intOps = 0, mathCalls = 0, branches = 0;
};

struct LaunchSite {
  unsigned id = 0;
  std::string kernel;   ///< kernel name
  int kernelIndex = -1; ///< into ProgramModel::kernels
  SourcePos pos;
  std::string grid, block, sharedMem, stream; ///< "" when defaulted
  unsigned gridDims = 0, blockDims = 0;       ///< 1..3, 0 when unknown
  std::vector<std::string> args;              ///< argument expressions as written
  std::vector<std::string> argBuffers;        ///< base variable of a pointer argument, else ""
  std::string function;                       ///< enclosing host function
  bool inLoop = false;
  SourcePos loopPos; ///< the outermost enclosing host loop
  int loop = -1;     ///< the innermost enclosing host loop (into ProgramModel::hostLoops)
};

enum class HostEventKind { Launch, Sync, Memcpy, Memset, Alloc, Free, Other };

/// One step of a host function, in source order.
struct HostEvent {
  HostEventKind kind = HostEventKind::Other;
  int launch = -1;                        ///< into ProgramModel::launches for Launch
  std::string call;                       ///< e.g. cudaMemcpy
  std::vector<std::string> reads, writes; ///< buffers (variables)
  bool inLoop = false;
  int loop = -1; ///< innermost enclosing host loop
  int sync = -1; ///< for Sync: into ProgramModel::syncs
  SourcePos pos;
};

/// A loop of a host function (for, while, do, range-for; not the
/// `do { } while (0)` of macros), numbered in source order over the whole
/// unit: the targets of loop-level transforms (`@loop#N`).
struct HostLoop {
  unsigned id = 0;
  int parent = -1;                ///< enclosing host loop
  std::string function;           ///< enclosing host function
  std::vector<unsigned> launches; ///< launch ids inside it, nested loops included
  SourcePos pos;
};

/// A host synchronization call (cudaDeviceSynchronize, cudaStreamSynchronize,
/// ...), numbered over the unit: the targets of `@sync#N`.
struct HostSync {
  unsigned id = 0;
  std::string call;
  std::string function;
  int loop = -1; ///< innermost enclosing host loop
  SourcePos pos;
};

struct HostFunction {
  std::string name;
  SourcePos pos;
  std::vector<HostEvent> events;
};

struct ProgramModel {
  std::string mainFile;
  /// The identity of the unit's host code, as the tuning database keys host
  /// plans (docs/TuneDB.md, Keys): "host:" + the file's path relative to its
  /// project root + "#" + a hash of the normalized tokens of the host
  /// functions (hostCodeKey in Frontend.h).
  std::string hostKey;
  std::vector<Kernel> kernels;
  std::vector<LaunchSite> launches;
  std::vector<HostFunction> hostFunctions;
  std::vector<HostLoop> hostLoops;
  std::vector<HostSync> syncs;
};

const char *toString(AccessKind k);
const char *toString(HostEventKind k);

} // namespace cudal1

#endif
