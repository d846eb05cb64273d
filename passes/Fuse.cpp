// fuse: launch A and the N - 1 launches right after it (count=N, 2 by
// default) become one launch of a new kernel that runs their bodies in order
// in each thread. Legal when all have the same configuration (so the same
// threads exist) and, for every pair of them, every element the later one
// touches that the earlier one wrote (or the reverse) is touched by the same
// global thread (the Presburger test says same-thread or disjoint): then no
// thread needs another thread's result of an earlier body. Each body becomes
// a lambda that takes the kernel's own parameters, so it is copied verbatim:
// its names stay its own and a `return` in it ends only that part.
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

const char *const kOrdinals[] = {"first", "second", "third",   "fourth",
                                 "fifth", "sixth",  "seventh", "eighth"};
static_assert(sizeof(kOrdinals) / sizeof(kOrdinals[0]) == Fuse::maxChain);

/// "launch #5" in a pair, "launch #5 (third of the chain)" in a longer chain.
std::string launchName(unsigned id, size_t pos, unsigned count) {
  std::string s = "launch #" + std::to_string(id);
  if (count > 2)
    s += std::string(" (") + kOrdinals[pos] + " of the chain)";
  return s;
}

/// The sync whose statement `s` is, or -1.
int syncOf(TransformContext &ctx, const Stmt *s) {
  for (const HostSync &hs : ctx.model().syncs)
    if (enclosingStatement(ctx.unit.ast(), ctx.unit.syncCall(hs.id)) == s)
      return int(hs.id);
  return -1;
}

/// The launch `a` and the launches after it in its block, up to `count` in
/// all (error checks may lie between): "" and `ids` filled, or why fewer
/// follow. For a pair the reason is the one fuse always gave.
std::string chainLaunches(TransformContext &ctx, unsigned a, unsigned count,
                          std::vector<unsigned> &ids) {
  ASTContext &ast = ctx.unit.ast();
  const CUDAKernelCallExpr *ka = ctx.unit.launchExpr(a);
  ids = {a};
  const char *pairWhy = "no launch follows it in its block (only error checks may lie between)";
  auto *block = dyn_cast_or_null<CompoundStmt>(parentStmt(ast, ka));
  if (!block)
    return pairWhy;
  bool after = false;
  for (const Stmt *s : block->body()) {
    if (!after) {
      after = s == ka;
      continue;
    }
    if (auto *kc = dyn_cast<CUDAKernelCallExpr>(s)) {
      ids.push_back(unsigned(ctx.unit.launchId(kc)));
      if (ids.size() == count)
        return "";
      continue;
    }
    if (isErrorCheck(ast, s))
      continue;
    if (count == 2)
      return pairWhy;
    std::string missing = std::string("the ") + kOrdinals[ids.size()] + " launch of the chain";
    std::string last = "launch #" + std::to_string(ids.back());
    if (int sync = syncOf(ctx, s); sync >= 0)
      return missing + " is not reached: a host synchronization (sync #" + std::to_string(sync) +
             ") follows " + last;
    return missing + " is not reached: a statement that is not an error check follows " + last;
  }
  if (count == 2)
    return pairWhy;
  return std::string("the ") + kOrdinals[ids.size()] +
         " launch of the chain is not reached: the block ends after launch #" +
         std::to_string(ids.back());
}

std::string kernelProblem(TransformContext &ctx, unsigned launch, const std::string &name) {
  const LaunchSite &l = ctx.model().launches[launch];
  const CUDAKernelCallExpr *kc = ctx.unit.launchExpr(launch);
  std::string at = name + ": ";
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

/// Why the kernel of launch `id` is not visible where the fused kernel goes
/// (before the host function), or "".
std::string definedAfter(TransformContext &ctx, unsigned id, const FunctionDecl *host) {
  const FunctionDecl *k = ctx.unit.kernelDecl(ctx.model().launches[id].kernelIndex);
  const SourceManager &sm = ctx.unit.ast().getSourceManager();
  if (!sm.isBeforeInTranslationUnit(k->getSourceRange().getEnd(), host->getBeginLoc()))
    return "kernel '" + k->getNameAsString() + "' is defined after the host function";
  return "";
}

/// Why launch ids[j] cannot join ids[0..j-1] of a chain of `count` (its
/// kernel, its configuration, its accesses against each earlier one), or "".
/// For a pair, the checks and reasons fuse always gave, in that order.
std::string joinProblem(TransformContext &ctx, const std::vector<unsigned> &ids, size_t j,
                        unsigned count, const FunctionDecl *host) {
  const ProgramModel &m = ctx.model();
  std::string name = launchName(ids[j], j, count);
  if (std::string why = kernelProblem(ctx, ids[j], name); !why.empty())
    return why;
  // 1. The same index space: configurations written identically.
  const LaunchSite &la = m.launches[ids[0]], &lb = m.launches[ids[j]];
  if (la.grid != lb.grid || la.block != lb.block || la.sharedMem != lb.sharedMem ||
      la.stream != lb.stream)
    return name + " has another configuration (<<<" + lb.grid + ", " + lb.block + ">>> vs <<<" +
           la.grid + ", " + la.block + ">>>)";
  // 2. Element to element, against every earlier launch of the chain.
  const VarSet &fresh = freshAllocations(ctx, host);
  for (size_t i = 0; i < j; ++i)
    if (std::string why = launchConflict(ctx, ids[i], ids[j], fresh, /*sameThreadOk=*/true);
        !why.empty())
      return count == 2 ? why : name + " against " + launchName(ids[i], i, count) + ": " + why;
  // 3. The kernels are visible where the fused one goes.
  if (j == 1)
    if (std::string why = definedAfter(ctx, ids[0], host); !why.empty())
      return why;
  return definedAfter(ctx, ids[j], host);
}

std::string hostProblem(TransformContext &ctx, unsigned launch) {
  const FunctionDecl *host = ctx.unit.launchFunction(launch);
  if (host->isTemplateInstantiation() || host->getTemplatedKind() != FunctionDecl::TK_NonTemplate)
    return "the launch is in a function template (one edit for every instantiation)";
  return "";
}

/// Why the `count` launches from `a` do not fuse, or "" (ids filled).
std::string chainProblem(TransformContext &ctx, unsigned a, unsigned count,
                         std::vector<unsigned> &ids) {
  if (std::string why = hostProblem(ctx, a); !why.empty())
    return why;
  if (std::string why = chainLaunches(ctx, a, count, ids); !why.empty())
    return why;
  if (std::string why = kernelProblem(ctx, a, launchName(a, 0, count)); !why.empty())
    return why;
  const FunctionDecl *host = ctx.unit.launchFunction(a);
  for (size_t j = 1; j < ids.size(); ++j)
    if (std::string why = joinProblem(ctx, ids, j, count, host); !why.empty())
      return why;
  return "";
}

/// count=N of a step: N, or 0 with `why` set.
unsigned countOf(const PlanStep &step, std::string &why) {
  unsigned n = 2;
  for (const auto &[key, value] : step.params) {
    if (key != "count") {
      why = "unknown parameter '" + key + "'";
      return 0;
    }
    if (llvm::StringRef(value).getAsInteger(10, n) || n < 2 || n > Fuse::maxChain) {
      why = "parameter count=" + value + " is not an integer from 2 to " +
            std::to_string(Fuse::maxChain);
      return 0;
    }
  }
  return n;
}

/// cudal1FusedN, N the first number neither in the source nor in what this
/// step's earlier targets inserted (freshName sees only the source): the
/// same name as always for one target, another for each further one.
std::string fusedName(TransformContext &ctx) {
  const SourceManager &sm = ctx.unit.ast().getSourceManager();
  const RewriteBuffer *buf = ctx.rewriter.getRewriteBufferFor(sm.getMainFileID());
  std::string now = buf ? std::string(buf->begin(), buf->end()) : "";
  for (unsigned n = 0;; ++n) {
    std::string name = "cudal1Fused" + std::to_string(n);
    if (ctx.unit.code().find(name) == std::string::npos && now.find(name) == std::string::npos)
      return name;
  }
}

} // namespace

std::string Fuse::legality(TransformContext &ctx, Target t) const {
  std::vector<unsigned> ids;
  return chainProblem(ctx, unsigned(t.launch), 2, ids);
}

std::vector<ParamSpace> Fuse::space(TransformContext &ctx, Target t) const {
  // The pair is legal (the driver asks only then): extend the chain one
  // launch at a time, each new one checked against all before it.
  std::vector<unsigned> ids;
  (void)chainLaunches(ctx, unsigned(t.launch), maxChain, ids); // fewer may follow
  if (ids.size() < 3)
    return {};
  const FunctionDecl *host = ctx.unit.launchFunction(unsigned(t.launch));
  size_t k = 2;
  while (k < ids.size() && joinProblem(ctx, ids, k, maxChain, host).empty())
    ++k;
  if (k < 3)
    return {};
  ParamSpace count{"count", {}};
  for (size_t n = 2; n <= k; ++n)
    count.values.push_back(std::to_string(n));
  return {count};
}

std::string Fuse::checkParams(TransformContext &ctx, Target t, const PlanStep &step) const {
  std::string why;
  unsigned n = countOf(step, why);
  if (!n)
    return why;
  std::vector<unsigned> ids;
  return n > 2 ? chainProblem(ctx, unsigned(t.launch), n, ids) : "";
}

llvm::Error Fuse::apply(TransformContext &ctx, Target t, const PlanStep &step) const {
  ASTContext &ast = ctx.unit.ast();
  std::string why;
  unsigned n = countOf(step, why);
  std::vector<unsigned> ids;
  if (!n || !chainLaunches(ctx, unsigned(t.launch), n, ids).empty()) // checked before
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "fuse: the chain is gone");
  std::vector<const CUDAKernelCallExpr *> calls;
  for (unsigned id : ids) {
    calls.push_back(ctx.unit.launchExpr(id));
    // Two targets of one step (`@k: fuse` where k's launches follow each
    // other) would both rewrite this launch.
    CharSourceRange r = statementRange(ast, calls.back());
    if (ctx.rewriter.getRewrittenText(r) != text(ast, calls.back()))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "launch #" + std::to_string(id) +
                                         " is in the chains of two targets of this step");
  }
  std::string name = fusedName(ctx);
  PrintingPolicy pp(ast.getLangOpts());
  // The fused kernel: the parameters of each kernel in order (unqualified:
  // no __restrict__, as their pointers may meet), prefixed a, b, c, ...;
  // each body a lambda.
  std::string params, bodies, names;
  for (size_t c = 0; c < calls.size(); ++c) {
    const FunctionDecl *k = calls[c]->getDirectCallee()->getDefinition();
    std::string prefix(1, char('a' + c)), call, lambdaParams;
    for (unsigned i = 0; i < k->getNumParams(); ++i) {
      const ParmVarDecl *p = k->getParamDecl(i);
      std::string pn = prefix + std::to_string(i);
      QualType ty = p->getType().getUnqualifiedType();
      params += (params.empty() ? "" : ", ") + ty.getAsString(pp) + " " + pn;
      call += (i ? ", " : "") + pn;
      lambdaParams += (i ? ", " : "") + declText(ast, p);
    }
    bodies += "  [](" + lambdaParams + ") " + text(ast, k->getBody()) + "(" + call + ");\n";
    names += (c == 0 ? "" : c + 1 == calls.size() ? " then " : ", ") + k->getNameAsString();
  }
  std::string kernel = "// cudal1 fuse: " + name + " runs " + names +
                       " in each thread\n__global__ void " + name + "(" + params + ") {\n" +
                       bodies + "}\n\n";
  ctx.insertHelperBefore(ctx.unit.launchFunction(t.launch), name, kernel);
  // One launch of it with the first launch's configuration and every
  // argument list; the other launches stay as comments.
  std::string args;
  for (const CUDAKernelCallExpr *e : calls)
    for (const Expr *a : e->arguments())
      args += (args.empty() ? "" : ", ") + spelled(ast, a);
  ctx.rewriter.ReplaceText(statementRange(ast, calls[0]),
                           name + text(ast, calls[0]->getConfig()) + "(" + args + ")");
  for (size_t c = 1; c < calls.size(); ++c) {
    std::string old = text(ast, calls[c]);
    for (size_t p; (p = old.find("*/")) != std::string::npos;)
      old.replace(p, 2, "* /");
    ctx.rewriter.ReplaceText(statementRange(ast, calls[c]), "/* cudal1 fuse: " + old + " */");
  }
  return llvm::Error::success();
}
