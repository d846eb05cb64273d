// fast-math: the hardware approximations (__expf, __sinf, __fdividef, ...)
// are several times faster than the accurate library calls; opt-in only,
// since results change in the last bits (more for large arguments).
#include "FastMath.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/ADT/StringMap.h"

#include <map>

#define DEBUG_TYPE "fast-math"

using namespace clang;
using namespace cudal1;

namespace {

const llvm::StringMap<std::string> &intrinsics() {
  static const llvm::StringMap<std::string> m = {
      {"expf", "__expf"},     {"logf", "__logf"},   {"sinf", "__sinf"},
      {"cosf", "__cosf"},     {"tanf", "__tanf"},   {"powf", "__powf"},
      {"exp10f", "__exp10f"}, {"log2f", "__log2f"}, {"log10f", "__log10f"}};
  return m;
}

bool isFloat(QualType t) { return t->isSpecificBuiltinType(BuiltinType::Float); }

/// The rewritable sites of a kernel, collected over all its instantiations:
/// a site counts only when it qualifies in every instantiation that has it
/// (a division of T is float in one and double in another).
class SiteFinder : public RecursiveASTVisitor<SiteFinder> {
public:
  explicit SiteFinder(const SourceManager &sm) : sm(sm) {}

  struct Call {
    SourceLocation name;
    std::string callee;
    bool ok = true;
  };
  struct Div {
    const BinaryOperator *node;
    bool ok = true;
  };
  std::map<unsigned, Call> calls;
  std::map<unsigned, Div> divs;
  std::vector<unsigned> divOrder; ///< preorder: enclosing divisions first

  bool VisitCallExpr(CallExpr *ce) {
    auto *dre = dyn_cast<DeclRefExpr>(ce->getCallee()->IgnoreParenImpCasts());
    if (!dre)
      return true;
    std::string name = dre->getNameInfo().getAsString();
    if (!intrinsics().count(name))
      return true;
    const FunctionDecl *f = ce->getDirectCallee();
    // The CUDA library function, called by its plain name outside macros.
    bool ok = f && !dre->hasQualifier() && !dre->getLocation().isMacroID() &&
              f->getDeclContext()->getRedeclContext()->isTranslationUnit() &&
              sm.isInSystemHeader(f->getLocation());
    Call &c =
        calls.try_emplace(dre->getLocation().getRawEncoding(), Call{dre->getLocation(), name, true})
            .first->second;
    c.ok &= ok;
    return true;
  }

  bool VisitBinaryOperator(BinaryOperator *bo) {
    if (bo->getOpcode() != BO_Div)
      return true;
    bool ok = isFloat(bo->getType()) && isFloat(bo->getLHS()->IgnoreImpCasts()->getType()) &&
              isFloat(bo->getRHS()->IgnoreImpCasts()->getType()) &&
              !bo->getOperatorLoc().isMacroID() && !bo->getBeginLoc().isMacroID() &&
              !bo->getEndLoc().isMacroID();
    unsigned key = bo->getOperatorLoc().getRawEncoding();
    auto [it, fresh] = divs.try_emplace(key, Div{bo, true});
    if (fresh)
      divOrder.push_back(key);
    it->second.ok &= ok;
    return true;
  }

  unsigned okCalls() const {
    unsigned n = 0;
    for (const auto &[k, c] : calls)
      n += c.ok;
    return n;
  }
  unsigned okDivs() const {
    unsigned n = 0;
    for (const auto &[k, d] : divs)
      n += d.ok;
    return n;
  }

private:
  const SourceManager &sm;
};

SiteFinder findSites(TransformContext &ctx, unsigned kernel) {
  SiteFinder f(ctx.unit.ast().getSourceManager());
  const ProgramModel &m = ctx.model();
  for (unsigned i : kernelsSharingDefinition(m, kernel))
    f.TraverseStmt(const_cast<Stmt *>(ctx.unit.kernelDecl(i)->getBody()));
  return f;
}

} // namespace

std::string FastMath::legality(TransformContext &ctx, Target t) const {
  if (ctx.model().kernels[t.kernel].fromHeader)
    return "the kernel is defined in a header; cudal1 rewrites only the file it is given";
  SiteFinder f = findSites(ctx, t.kernel);
  if (f.okCalls() == 0)
    return f.calls.empty() ? "the kernel calls none of expf, logf, sinf, cosf, tanf, powf, "
                             "exp10f, log2f, log10f"
                           : "every single-precision math call is written inside a macro or "
                             "does not resolve to the CUDA library function";
  return "";
}

std::vector<ParamSpace> FastMath::space(TransformContext &ctx, Target t) const {
  SiteFinder f = findSites(ctx, t.kernel);
  if (f.okDivs() == 0)
    return {{"div", {"no"}}};
  return {{"div", {"no", "yes"}}};
}

llvm::Error FastMath::apply(TransformContext &ctx, Target t, const PlanStep &step) const {
  SiteFinder f = findSites(ctx, t.kernel);
  Rewriter &rw = ctx.rewriter;
  // 1. Callee names: a token each.
  for (const auto &[key, c] : f.calls)
    if (c.ok)
      rw.ReplaceText(c.name, c.callee.size(), intrinsics().lookup(c.callee));
  if (step.param("div").value_or("no") != "yes")
    return llvm::Error::success();
  // 2. Divisions, innermost first, so that an enclosing one reads the
  // operands with their rewrites already in place.
  for (auto it = f.divOrder.rbegin(); it != f.divOrder.rend(); ++it) {
    const SiteFinder::Div &d = f.divs.at(*it);
    if (!d.ok)
      continue;
    const BinaryOperator *bo = d.node;
    std::string lhs = rw.getRewrittenText(bo->getLHS()->getSourceRange());
    std::string rhs = rw.getRewrittenText(bo->getRHS()->getSourceRange());
    rw.ReplaceText(bo->getSourceRange(), "__fdividef(" + lhs + ", " + rhs + ")");
  }
  return llvm::Error::success();
}
