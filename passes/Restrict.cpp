// restrict: tells the compiler that a kernel's pointers do not alias, which
// lets it keep loads in registers and use the read-only data path. Proven
// only from the file's launches, which must pass distinct buffer variables.
#include "Restrict.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/TypeLoc.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

#define DEBUG_TYPE "restrict"

using namespace clang;
using namespace cudal1;

namespace {

/// A parameter this pass can qualify: an object pointer, named, declared
/// with a plain pointer declarator outside macros (not `float a[]`).
bool editablePointer(const ParmVarDecl *inst, const ParmVarDecl *pattern) {
  QualType t = inst->getType();
  if (!t->isPointerType() || t->getPointeeType()->isFunctionType())
    return false;
  if (pattern->getName().empty() || pattern->getLocation().isMacroID() ||
      !pattern->getTypeSourceInfo())
    return false;
  TypeLoc tl = pattern->getTypeSourceInfo()->getTypeLoc().getUnqualifiedLoc();
  return !tl.getAs<ArrayTypeLoc>() && !tl.getAs<DecayedTypeLoc>();
}

bool isObjectPointer(const ParmVarDecl *p) {
  return p->getType()->isPointerType() && !p->getType()->getPointeeType()->isFunctionType();
}

/// Whether every use of `p` in `body` is a load through it (`p[i]`, `*p`,
/// `p->f`, `p[i].f` read as an rvalue): then `const` on the pointee keeps
/// the code valid. A pointer that escapes (passed on, stored, offset) fails.
class ReadOnlyUses {
public:
  explicit ReadOnlyUses(const ParmVarDecl *p) : p(p) {}
  bool ok = true;
  void walk(const Stmt *s) {
    if (!s || !ok)
      return;
    if (auto *dre = dyn_cast<DeclRefExpr>(s); dre && dre->getDecl() == p)
      ok = checkUse(dre);
    stack.push_back(s);
    for (const Stmt *c : s->children())
      walk(c);
    stack.pop_back();
  }

private:
  const ParmVarDecl *p;
  std::vector<const Stmt *> stack; ///< ancestors of the node being walked

  bool checkUse(const Stmt *use) {
    size_t i = stack.size();
    const Stmt *child = use;
    auto up = [&]() -> const Stmt * { return i ? stack[--i] : nullptr; };
    const Stmt *parent = up();
    while (parent && (isa<ParenExpr>(parent) || isa<ImplicitCastExpr>(parent))) {
      child = parent;
      parent = up();
    }
    // 1. The pointer is dereferenced.
    bool deref = false;
    if (auto *ase = dyn_cast_or_null<ArraySubscriptExpr>(parent))
      deref = ase->getBase() == child;
    else if (auto *uo = dyn_cast_or_null<UnaryOperator>(parent))
      deref = uo->getOpcode() == UO_Deref;
    else if (auto *me = dyn_cast_or_null<MemberExpr>(parent))
      deref = me->isArrow() && me->getBase() == child;
    if (!deref)
      return false;
    // 2. The element (or a member of it) is only read.
    child = parent;
    parent = up();
    while (parent && (isa<ParenExpr>(parent) ||
                      (isa<MemberExpr>(parent) && !cast<MemberExpr>(parent)->isArrow() &&
                       cast<MemberExpr>(parent)->getBase() == child))) {
      child = parent;
      parent = up();
    }
    auto *ice = dyn_cast_or_null<ImplicitCastExpr>(parent);
    return ice && ice->getCastKind() == CK_LValueToRValue;
  }
};

struct ParamPlan {
  bool addRestrict = false, addConst = false;
};

/// What to add to each parameter of the kernel's definition; `why` explains
/// an empty plan. Every instantiation must agree for `const`.
std::vector<ParamPlan> planParams(TransformContext &ctx, unsigned kernel) {
  const FunctionDecl *fd = ctx.unit.kernelDecl(kernel);
  const FunctionDecl *pat = editableDecl(fd);
  std::vector<ParamPlan> out(fd->getNumParams());
  // `const` changes the function type: keep it off kernels declared twice or
  // explicitly instantiated/specialised, whose other declarations would differ.
  bool typeMayChange = std::distance(pat->redecls_begin(), pat->redecls_end()) == 1;
  for (unsigned s : kernelsSharingDefinition(ctx.model(), kernel)) {
    TemplateSpecializationKind tsk = ctx.unit.kernelDecl(s)->getTemplateSpecializationKind();
    if (tsk != TSK_Undeclared && tsk != TSK_ImplicitInstantiation)
      typeMayChange = false;
  }
  for (unsigned i = 0; i < fd->getNumParams() && i < pat->getNumParams(); ++i) {
    if (!editablePointer(fd->getParamDecl(i), pat->getParamDecl(i)))
      continue;
    out[i].addRestrict = !fd->getParamDecl(i)->getType().isRestrictQualified();
    bool addConst = typeMayChange &&
                    pat->getParamDecl(i)
                        ->getTypeSourceInfo()
                        ->getTypeLoc()
                        .getUnqualifiedLoc()
                        .getAs<PointerTypeLoc>() &&
                    !pat->getParamDecl(i)->getTypeSpecStartLoc().isMacroID();
    for (unsigned s : kernelsSharingDefinition(ctx.model(), kernel)) {
      if (!addConst)
        break;
      const FunctionDecl *sd = ctx.unit.kernelDecl(s);
      const ParmVarDecl *p = sd->getParamDecl(i);
      QualType pointee = p->getType()->getPointeeType();
      if (pointee.isConstQualified() || pointee->isPointerType() || pointee->isArrayType() ||
          ctx.analysis(s).params[i].writes) {
        addConst = false;
        break;
      }
      ReadOnlyUses uses(p);
      uses.walk(sd->getBody());
      addConst = uses.ok;
    }
    out[i].addConst = addConst;
  }
  return out;
}

} // namespace

std::string Restrict::legality(TransformContext &ctx, Target t) const {
  const FunctionDecl *fd = ctx.unit.kernelDecl(t.kernel);
  const FunctionDecl *pat = editableDecl(fd);
  const Kernel &k = ctx.model().kernels[t.kernel];
  if (ctx.model().kernels[t.kernel].fromHeader)
    return "the kernel is defined in a header; cudal1 rewrites only the file it is given";
  // 1. Something to add.
  std::vector<ParamPlan> plan = planParams(ctx, t.kernel);
  if (std::none_of(plan.begin(), plan.end(), [](const ParamPlan &p) { return p.addRestrict; })) {
    bool anyPointer = false;
    for (unsigned i = 0; i < fd->getNumParams(); ++i)
      anyPointer |= isObjectPointer(fd->getParamDecl(i));
    if (!anyPointer)
      return "the kernel has no pointer parameter";
    for (unsigned i = 0; i < fd->getNumParams() && i < pat->getNumParams(); ++i)
      if (isObjectPointer(fd->getParamDecl(i)) &&
          !fd->getParamDecl(i)->getType().isRestrictQualified())
        return "pointer parameter " + std::to_string(i) +
               " cannot take __restrict__ here (unnamed, an array declarator or in a macro)";
    return "every pointer parameter is already __restrict__";
  }
  // 2. Aliasing: every launch passes distinct plain buffers.
  std::vector<unsigned> launches = ctx.launchesOf(t.kernel);
  if (launches.empty())
    return "the kernel has no launch in this file, so nothing shows that its pointers do not "
           "alias";
  for (unsigned id : launches) {
    const LaunchSite &l = ctx.model().launches[id];
    std::vector<std::pair<std::string, std::string>> seen; // buffer, parameter
    for (unsigned i = 0; i < fd->getNumParams(); ++i) {
      if (!isObjectPointer(fd->getParamDecl(i)))
        continue;
      std::string pname = i < k.params.size() ? k.params[i].name : std::to_string(i);
      if (i >= l.args.size() || i >= l.argBuffers.size() || l.argBuffers[i].empty() ||
          l.args[i] != l.argBuffers[i])
        return "launch #" + std::to_string(id) + " passes '" +
               (i < l.args.size() ? l.args[i] : std::string("?")) + "' for " + pname +
               ", not a plain buffer variable";
      for (const auto &[buf, other] : seen)
        if (buf == l.argBuffers[i])
          return "launch #" + std::to_string(id) + " passes " + buf + " for both " + other +
                 " and " + pname;
      seen.emplace_back(l.argBuffers[i], pname);
    }
  }
  return referencedOutsideLaunches(ctx, t.kernel);
}

std::vector<ParamSpace> Restrict::space(TransformContext &, Target) const { return {}; }

llvm::Error Restrict::apply(TransformContext &ctx, Target t, const PlanStep &) const {
  const FunctionDecl *pat = editableDecl(ctx.unit.kernelDecl(t.kernel));
  std::vector<ParamPlan> plan = planParams(ctx, t.kernel);
  for (unsigned i = 0; i < plan.size(); ++i) {
    const ParmVarDecl *p = pat->getParamDecl(i);
    if (plan[i].addConst)
      ctx.rewriter.InsertTextBefore(p->getTypeSpecStartLoc(), "const ");
    if (plan[i].addRestrict)
      ctx.rewriter.InsertTextBefore(p->getLocation(), "__restrict__ ");
  }
  return llvm::Error::success();
}
