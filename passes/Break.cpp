// break: faults on purpose, for the judge's tests (issue 15). Each kind is
// wrong on every input a test gives it, at kernel level (replay against the
// double reference) and at program level (the reference program):
//   off-by-one     every plain global store whose index moves with
//                  threadIdx.x writes one element further (element 0 is
//                  never written, one past the end is);
//   partial-write  those stores are skipped by odd threadIdx.x;
//   skip-work      the second half of the threads along x return at once;
//   race           atomicAdd becomes a read, an add and a write;
//   side-stream    the kernel's launches (those without a stream of their
//                  own) go to a non-blocking stream behind a 50 ms delay,
//                  and nothing joins it: the host's next copy reads the
//                  buffers before the kernel wrote them. A host fault: it is
//                  judged as a whole program (editsHostCode), never by replay.
#include "Break.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"

#include <cstdlib>
#include <cstring>

using namespace clang;
using namespace cudal1;

bool cudal1::testTransformsEnabled() {
  const char *e = std::getenv("CUDAL1_TEST_TRANSFORMS");
  return e && std::strcmp(e, "1") == 0;
}

namespace {

/// What in a kernel's body each kind would edit.
struct Sites {
  std::vector<const BinaryOperator *> stores; ///< `a[i] = e` moving with threadIdx.x
  std::vector<const CallExpr *> atomicAdds;
  /// The kernel's launches in the main file on the default stream.
  std::vector<const CUDAKernelCallExpr *> defaultStreamLaunches;
  const CompoundStmt *body = nullptr;
};

class SiteFinder : public RecursiveASTVisitor<SiteFinder> {
public:
  SiteFinder(TransformContext &ctx, unsigned kernel, Sites &s) : ctx(ctx), kernel(kernel), s(s) {}
  bool VisitBinaryOperator(BinaryOperator *b) {
    if (!b->isAssignmentOp() || b->getBeginLoc().isMacroID() || b->getEndLoc().isMacroID())
      return true;
    const Expr *lhs = b->getLHS()->IgnoreParenImpCasts();
    if (!isa<ArraySubscriptExpr>(lhs))
      return true;
    const MemAccess *a = ctx.unit.accessOf(kernel, lhs, AccessKind::Write);
    if (!a || a->atomic)
      return true;
    size_t i = size_t(a - ctx.model().kernels[kernel].accesses.data());
    const Stride &st = ctx.analysis(kernel).accesses[i].strideX;
    if (st.kind == Stride::Kind::Unknown || (st.kind == Stride::Kind::Constant && st.value == 0))
      return true;
    s.stores.push_back(b);
    return true;
  }
  bool VisitCallExpr(CallExpr *c) {
    const FunctionDecl *f = c->getDirectCallee();
    if (f && f->getName() == "atomicAdd" && c->getNumArgs() == 2 && !c->getBeginLoc().isMacroID())
      s.atomicAdds.push_back(c);
    return true;
  }

private:
  TransformContext &ctx;
  unsigned kernel;
  Sites &s;
};

Sites findSites(TransformContext &ctx, unsigned kernel) {
  Sites s;
  const FunctionDecl *fd = ctx.unit.kernelDecl(kernel);
  s.body = fd ? dyn_cast_or_null<CompoundStmt>(fd->getBody()) : nullptr;
  if (s.body)
    SiteFinder(ctx, kernel, s).TraverseStmt(const_cast<CompoundStmt *>(s.body));
  const SourceManager &sm = ctx.unit.ast().getSourceManager();
  for (const LaunchSite &l : ctx.model().launches) {
    const CUDAKernelCallExpr *k = ctx.unit.launchExpr(l.id);
    if (l.kernelIndex != int(kernel) || !l.stream.empty() || !k || !k->getConfig() ||
        k->getConfig()->getNumArgs() < 4 || k->getBeginLoc().isMacroID() ||
        !sm.isInMainFile(sm.getFileLoc(k->getBeginLoc())))
      continue;
    // The configuration's third and fourth arguments are defaulted.
    const auto *shm = dyn_cast<CXXDefaultArgExpr>(k->getConfig()->getArg(2));
    if (shm && isa<CXXDefaultArgExpr>(k->getConfig()->getArg(3)))
      s.defaultStreamLaunches.push_back(k);
  }
  return s;
}

std::vector<std::string> kindsFor(const Sites &s) {
  std::vector<std::string> k;
  if (!s.stores.empty()) {
    k.push_back("off-by-one");
    k.push_back("partial-write");
  }
  if (!s.atomicAdds.empty())
    k.push_back("race");
  if (!s.defaultStreamLaunches.empty())
    k.push_back("side-stream");
  k.push_back("skip-work");
  return k;
}

std::string text(TransformContext &ctx, SourceRange r) {
  return Lexer::getSourceText(CharSourceRange::getTokenRange(r), ctx.unit.ast().getSourceManager(),
                              ctx.unit.ast().getLangOpts())
      .str();
}

} // namespace

std::string Break::legality(TransformContext &ctx, Target t) const {
  if (ctx.model().kernels[t.kernel].fromHeader)
    return "the kernel is defined in a header; cudal1 rewrites only the file it is given";
  Sites s = findSites(ctx, t.kernel);
  if (!s.body)
    return "the kernel has no body here";
  bool writes = false;
  for (const MemAccess &a : ctx.model().kernels[t.kernel].accesses)
    writes |= a.kind == AccessKind::Write;
  if (!writes)
    return "the kernel writes no global memory, so no fault would show";
  return "";
}

std::vector<ParamSpace> Break::space(TransformContext &ctx, Target t) const {
  return {{"kind", kindsFor(findSites(ctx, t.kernel))}};
}

std::string Break::checkParams(TransformContext &ctx, Target t, const PlanStep &step) const {
  for (const auto &[k, v] : step.params)
    if (k != "kind")
      return "unknown parameter '" + k + "'";
  std::optional<std::string> kind = step.param("kind");
  if (!kind)
    return "kind is required (off-by-one, partial-write, race, side-stream or skip-work)";
  for (const std::string &k : kindsFor(findSites(ctx, t.kernel)))
    if (k == *kind)
      return "";
  return "kind=" + *kind + " has nothing to break in this kernel (it offers: " + [&] {
    std::string all;
    for (const std::string &k : kindsFor(findSites(ctx, t.kernel)))
      all += (all.empty() ? "" : ", ") + k;
    return all;
  }() + ")";
}

llvm::Error Break::apply(TransformContext &ctx, Target t, const PlanStep &step) const {
  Sites s = findSites(ctx, t.kernel);
  std::string kind = step.param("kind").value_or("");
  if (kind == "skip-work") {
    ctx.rewriter.InsertTextAfterToken(
        s.body->getLBracLoc(),
        "\n  { // cudal1 break(kind=skip-work)\n"
        "    unsigned long long cudal1_t = (unsigned long long)blockIdx.x * blockDim.x + "
        "threadIdx.x;\n"
        "    unsigned long long cudal1_all = (unsigned long long)gridDim.x * blockDim.x;\n"
        "    if (cudal1_all > 1 && cudal1_t >= cudal1_all / 2)\n"
        "      return;\n"
        "  }\n");
  } else if (kind == "off-by-one") {
    for (const BinaryOperator *b : s.stores) {
      const auto *sub = cast<ArraySubscriptExpr>(b->getLHS()->IgnoreParenImpCasts());
      ctx.rewriter.ReplaceText(sub->getIdx()->getSourceRange(),
                               "(" + text(ctx, sub->getIdx()->getSourceRange()) + ") + 1");
    }
  } else if (kind == "partial-write") {
    for (const BinaryOperator *b : s.stores)
      ctx.rewriter.ReplaceText(b->getSourceRange(), "((threadIdx.x & 1) ? (void)0 : (void)(" +
                                                        text(ctx, b->getSourceRange()) + "))");
  } else if (kind == "race") {
    ctx.insertHelperBefore(t.kernel, "cudal1BreakRacyAdd",
                           "// cudal1 break(kind=race): atomicAdd without the atomic.\n"
                           "template <class T> __device__ T cudal1BreakRacyAdd(T *p, T v) {\n"
                           "  T old = *(volatile T *)p;\n"
                           "  *(volatile T *)p = old + v;\n"
                           "  return old;\n"
                           "}\n");
    for (const CallExpr *c : s.atomicAdds)
      ctx.rewriter.ReplaceText(c->getCallee()->getSourceRange(), "cudal1BreakRacyAdd");
  } else if (kind == "side-stream") {
    ctx.insertHelperBefore(t.kernel, "cudal1BreakSideStream",
                           "// cudal1 break(kind=side-stream): a non-blocking stream that a 50 ms\n"
                           "// delay kernel holds back; nothing joins it.\n"
                           "__global__ void cudal1BreakDelay() {\n"
                           "  long long t0 = clock64();\n"
                           "  while (clock64() - t0 < 100000000LL) {\n"
                           "  }\n"
                           "}\n"
                           "static cudaStream_t cudal1BreakSideStream() {\n"
                           "  static cudaStream_t s = nullptr;\n"
                           "  if (!s)\n"
                           "    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);\n"
                           "  cudal1BreakDelay<<<1, 1, 0, s>>>();\n"
                           "  return s;\n"
                           "}\n");
    // `>>>` is where the configuration call's parentheses close.
    for (const CUDAKernelCallExpr *k : s.defaultStreamLaunches)
      ctx.rewriter.InsertTextBefore(k->getConfig()->getRParenLoc(), ", 0, cudal1BreakSideStream()");
  } else {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "break: unknown kind '%s'",
                                   kind.c_str());
  }
  return llvm::Error::success();
}

bool Break::editsHostCode(const PlanStep &step) const {
  return step.param("kind").value_or("") == "side-stream";
}
