// fuse: launch A and the launch B right after it become one launch of a new
// kernel that runs A's body and then B's body in each thread. Legal when both
// launches have the same configuration (so the same threads exist) and every
// element B touches that A wrote (or the reverse) is touched by the same
// global thread (the Presburger test says same-thread or disjoint): then no
// thread needs another thread's result of A. Each body becomes a lambda that
// takes the kernel's own parameters, so it is copied verbatim: its names stay
// its own and a `return` in it ends only that part.
#include "Fuse.h"
#include "cudal1/Rewrite/HostCode.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"

#define DEBUG_TYPE "fuse"

using namespace clang;
using namespace cudal1;

namespace {

std::string text(ASTContext &ast, const Stmt *s) {
  CharSourceRange r = statementRange(ast, s);
  return r.isValid() ? Lexer::getSourceText(r, ast.getSourceManager(), ast.getLangOpts()).str()
                     : "";
}

std::string declText(ASTContext &ast, const Decl *d) {
  CharSourceRange r = Lexer::makeFileCharRange(CharSourceRange::getTokenRange(d->getSourceRange()),
                                               ast.getSourceManager(), ast.getLangOpts());
  return r.isValid() ? Lexer::getSourceText(r, ast.getSourceManager(), ast.getLangOpts()).str()
                     : "";
}

/// The launch right after `a` in its block (error checks may lie between).
int nextLaunch(TransformContext &ctx, unsigned a) {
  ASTContext &ast = ctx.unit.ast();
  const CUDAKernelCallExpr *ka = ctx.unit.launchExpr(a);
  auto *block = dyn_cast_or_null<CompoundStmt>(parentStmt(ast, ka));
  if (!block)
    return -1;
  bool after = false;
  for (const Stmt *s : block->body()) {
    if (!after) {
      after = s == ka;
      continue;
    }
    if (auto *kc = dyn_cast<CUDAKernelCallExpr>(s))
      return ctx.unit.launchId(kc);
    if (!isErrorCheck(ast, s))
      return -1;
  }
  return -1;
}

std::string kernelProblem(TransformContext &ctx, unsigned launch) {
  const LaunchSite &l = ctx.model().launches[launch];
  const CUDAKernelCallExpr *kc = ctx.unit.launchExpr(launch);
  std::string at = "launch #" + std::to_string(launch) + ": ";
  if (l.kernelIndex < 0)
    return at + "the kernel is not known";
  const Kernel &k = ctx.model().kernels[l.kernelIndex];
  const FunctionDecl *fd = ctx.unit.kernelDecl(l.kernelIndex);
  if (kc->getBeginLoc().isMacroID() || kc->getEndLoc().isMacroID())
    return at + "it is written inside a macro";
  if (!k.templateArgs.empty() || fd->getTemplateInstantiationPattern())
    return at + "the kernel is a template";
  if (k.fromHeader || !ctx.unit.ast().getSourceManager().isWrittenInMainFile(fd->getLocation()))
    return at + "the kernel is not defined in this file";
  if (!fd->getLexicalDeclContext()->isTranslationUnit())
    return at +
           "the kernel is declared inside a namespace or class (its body's names resolve there)";
  if (!k.shared.empty() || !k.barriers.empty())
    return at + "the kernel uses shared memory or barriers";
  if (usesWarpIntrinsics(fd))
    return at + "the kernel uses warp-level intrinsics";
  if (kc->getNumArgs() != fd->getNumParams())
    return at + "default arguments are used";
  if (kc->HasSideEffects(ctx.unit.ast(), /*IncludePossibleEffects=*/false))
    return at + "its arguments have side effects";
  if (std::string why = hiddenEffects(fd); !why.empty())
    return at + why;
  return "";
}

} // namespace

std::string Fuse::legality(TransformContext &ctx, Target t) const {
  ASTContext &ast = ctx.unit.ast();
  const FunctionDecl *host = ctx.unit.launchFunction(t.launch);
  if (host->isTemplateInstantiation() || host->getTemplatedKind() != FunctionDecl::TK_NonTemplate)
    return "the launch is in a function template (one edit for every instantiation)";
  int b = nextLaunch(ctx, t.launch);
  if (b < 0)
    return "no launch follows it in its block (only error checks may lie between)";
  for (unsigned id : {unsigned(t.launch), unsigned(b)})
    if (std::string why = kernelProblem(ctx, id); !why.empty())
      return why;
  const LaunchSite &la = ctx.model().launches[t.launch], &lb = ctx.model().launches[b];
  // 1. The same index space: configurations written identically.
  if (la.grid != lb.grid || la.block != lb.block || la.sharedMem != lb.sharedMem ||
      la.stream != lb.stream)
    return "launch #" + std::to_string(b) + " has another configuration (<<<" + lb.grid + ", " +
           lb.block + ">>> vs <<<" + la.grid + ", " + la.block + ">>>)";
  // 2. Element to element.
  const VarSet &fresh = freshAllocations(ctx, host);
  if (std::string why = launchConflict(ctx, t.launch, b, fresh, /*sameThreadOk=*/true);
      !why.empty())
    return why;
  // 3. Both kernels are visible where the fused one goes (before the host function).
  for (unsigned id : {unsigned(t.launch), unsigned(b)}) {
    const FunctionDecl *k = ctx.unit.kernelDecl(ctx.model().launches[id].kernelIndex);
    const SourceManager &sm = ast.getSourceManager();
    if (!sm.isBeforeInTranslationUnit(k->getSourceRange().getEnd(), host->getBeginLoc()))
      return "kernel '" + k->getNameAsString() + "' is defined after the host function";
  }
  return "";
}

llvm::Error Fuse::apply(TransformContext &ctx, Target t, const PlanStep &) const {
  ASTContext &ast = ctx.unit.ast();
  unsigned b = nextLaunch(ctx, t.launch);
  const CUDAKernelCallExpr *ea = ctx.unit.launchExpr(t.launch), *eb = ctx.unit.launchExpr(b);
  const FunctionDecl *ka = ea->getDirectCallee()->getDefinition();
  const FunctionDecl *kb = eb->getDirectCallee()->getDefinition();
  std::string name = freshName(ctx, "cudal1Fused");
  PrintingPolicy pp(ast.getLangOpts());
  // The fused kernel: parameters of A then of B (unqualified: no
  // __restrict__, as A's and B's pointers may meet), each body a lambda.
  std::string params, callA, callB;
  auto part = [&](const FunctionDecl *k, const char *prefix, std::string &call) {
    std::string lambdaParams;
    for (unsigned i = 0; i < k->getNumParams(); ++i) {
      const ParmVarDecl *p = k->getParamDecl(i);
      std::string pn = std::string(prefix) + std::to_string(i);
      QualType ty = p->getType().getUnqualifiedType();
      params += (params.empty() ? "" : ", ") + ty.getAsString(pp) + " " + pn;
      call += (i ? ", " : "") + pn;
      lambdaParams += (i ? ", " : "") + declText(ast, p);
    }
    return "  [](" + lambdaParams + ") " + text(ast, k->getBody()) + "(" + call + ");\n";
  };
  std::string bodyA = part(ka, "a", callA);
  std::string bodyB = part(kb, "b", callB);
  std::string kernel = "// cudal1 fuse: " + name + " runs " + ka->getNameAsString() + " then " +
                       kb->getNameAsString() + " in each thread\n__global__ void " + name + "(" +
                       params + ") {\n" + bodyA + bodyB + "}\n\n";
  ctx.insertHelperBefore(ctx.unit.launchFunction(t.launch), name, kernel);
  // One launch of it with A's configuration and both argument lists.
  std::string args;
  for (const CUDAKernelCallExpr *e : {ea, eb})
    for (const Expr *a : e->arguments())
      args += (args.empty() ? "" : ", ") + spelled(ast, a);
  ctx.rewriter.ReplaceText(statementRange(ast, ea),
                           name + text(ast, ea->getConfig()) + "(" + args + ")");
  std::string old = text(ast, eb);
  for (size_t p; (p = old.find("*/")) != std::string::npos;)
    old.replace(p, 2, "* /");
  ctx.rewriter.ReplaceText(statementRange(ast, eb), "/* cudal1 fuse: " + old + " */");
  return llvm::Error::success();
}
