// graph: the run of launches in a host loop's body becomes one CUDA graph.
// The first iteration captures the launches (stream capture on a stream of
// the helper's own) and instantiates the graph; every iteration launches it
// on the launches' original stream, so its order with the rest of the
// program is unchanged. Arguments are evaluated each iteration as before and
// a kernel node whose arguments or configuration changed (a pointer swap, an
// offset `x + t * n`) is updated on the executable graph with
// cudaGraphExecKernelNodeSetParams. Legal when the launches are an
// unconditional, contiguous run of the body (only error checks between
// them) and the loop reads no device data on the host.
#include "Graph.h"
#include "cudal1/Rewrite/HostCode.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"

#include "runtime/graph-loop.inc" // the helper inserted: passes/runtime/graph-loop.cuh

#define DEBUG_TYPE "graph"

using namespace clang;
using namespace cudal1;

namespace {

/// The statements of a loop body (a block, or one statement).
std::vector<const Stmt *> bodyStatements(const Stmt *body) {
  if (auto *cs = dyn_cast<CompoundStmt>(body))
    return std::vector<const Stmt *>(cs->body_begin(), cs->body_end());
  return {body};
}

std::string text(ASTContext &ast, const Expr *e) { return spelled(ast, e); }

struct Run {
  std::vector<const Stmt *> stmts; ///< the body's statements
  size_t first = 0, last = 0;      ///< the run of launches (and joins): [first, last]
  std::vector<const CUDAKernelCallExpr *> launches;
  std::vector<const VarDecl *> sides; ///< per launch: its side stream (streams pass), or null
  std::vector<const CXXMemberCallExpr *> joins; ///< side-stream joins in the run
  std::string stream; ///< the launches' (origin) stream, "" for the default
};

/// `var.method(origin)` on a Cudal1SideStream that the streams pass
/// declared: the variable (origin spelled into `origin`), else null.
const VarDecl *sideStreamCall(ASTContext &ast, const Expr *e, StringRef method,
                              std::string *origin = nullptr) {
  auto *mc = dyn_cast_or_null<CXXMemberCallExpr>(e ? e->IgnoreUnlessSpelledInSource() : nullptr);
  if (!mc || !mc->getMethodDecl() || mc->getMethodDecl()->getName() != method ||
      mc->getNumArgs() != 1)
    return nullptr;
  auto *dre = dyn_cast<DeclRefExpr>(mc->getImplicitObjectArgument()->IgnoreParenImpCasts());
  auto *vd = dre ? dyn_cast<VarDecl>(dre->getDecl()) : nullptr;
  const CXXRecordDecl *rd = vd ? vd->getType()->getAsCXXRecordDecl() : nullptr;
  if (!rd || rd->getName() != "Cudal1SideStream")
    return nullptr;
  if (origin)
    *origin = spelled(ast, mc->getArg(0)->IgnoreUnlessSpelledInSource());
  return vd;
}

/// The side stream a launch was put on by the streams pass (its origin
/// stream spelled into `origin`), or null.
const VarDecl *launchSide(ASTContext &ast, const CUDAKernelCallExpr *kc, std::string &origin) {
  const CallExpr *cfg = kc->getConfig();
  if (cfg->getNumArgs() < 4 || isa<CXXDefaultArgExpr>(cfg->getArg(3)))
    return nullptr;
  return sideStreamCall(ast, cfg->getArg(3), "fork", &origin);
}

/// The run of launches of a loop, or the reason there is none.
std::string findRun(TransformContext &ctx, unsigned loop, Run &run) {
  ASTContext &ast = ctx.unit.ast();
  const HostLoop &hl = ctx.model().hostLoops[loop];
  const Stmt *body = loopBody(ctx.unit.hostLoopStmt(loop));
  run.stmts = bodyStatements(body);
  std::vector<size_t> at;
  for (unsigned id : hl.launches) {
    const CUDAKernelCallExpr *kc = ctx.unit.launchExpr(id);
    auto it = std::find(run.stmts.begin(), run.stmts.end(), kc);
    if (it == run.stmts.end())
      return "launch #" + std::to_string(id) +
             " is not a statement of the loop body (conditional, nested or inside an expression)";
    at.push_back(it - run.stmts.begin());
  }
  if (at.empty())
    return "the loop launches no kernel";
  run.first = *std::min_element(at.begin(), at.end());
  run.last = *std::max_element(at.begin(), at.end());
  // Joins of side streams right after the last launch (error checks between
  // them and it) belong to the run.
  for (size_t i = run.last + 1; i < run.stmts.size(); ++i) {
    if (sideStreamCall(ast, dyn_cast<Expr>(run.stmts[i]), "join"))
      run.last = i;
    else if (!isErrorCheck(ast, run.stmts[i]))
      break;
  }
  auto lineOf = [&](const Stmt *s) {
    const SourceManager &sm = ast.getSourceManager();
    return std::to_string(sm.getPresumedLineNumber(sm.getFileLoc(s->getBeginLoc())));
  };
  // Side streams forked and not yet joined: the capture must end joined.
  std::vector<const VarDecl *> open;
  for (size_t i = run.first; i <= run.last; ++i) {
    const Stmt *s = run.stmts[i];
    if (auto *kc = dyn_cast<CUDAKernelCallExpr>(s)) {
      std::string origin;
      const VarDecl *side = launchSide(ast, kc, origin);
      if (side && std::find(open.begin(), open.end(), side) != open.end())
        return "side stream '" + side->getName().str() + "' is forked twice before its join";
      if (side)
        open.push_back(side);
      run.launches.push_back(kc);
      run.sides.push_back(side);
      continue;
    }
    if (const VarDecl *side = sideStreamCall(ast, dyn_cast<Expr>(s), "join")) {
      auto it = std::find(open.begin(), open.end(), side);
      if (it == open.end())
        return "line " + lineOf(s) + " joins side stream '" + side->getName().str() +
               "', which no launch of the run forked";
      open.erase(it);
      run.joins.push_back(cast<CXXMemberCallExpr>(s));
      continue;
    }
    if (auto *ds = dyn_cast<DeclStmt>(s))
      for (const Decl *d : ds->decls())
        if (auto *vd = dyn_cast<VarDecl>(d);
            vd && vd->getType()->getAsCXXRecordDecl() &&
            vd->getType()->getAsCXXRecordDecl()->getName() == "Cudal1SideStream")
          return "side stream '" + vd->getName().str() +
                 "' is declared between the launches (it would be created during the capture)";
    if (!isErrorCheck(ast, s))
      return "the launches are not one run: line " + lineOf(s) +
             " between them does more than check errors";
  }
  if (!open.empty())
    return "side stream '" + open.front()->getName().str() +
           "' is not joined back within the run of launches (the capture must end joined)";
  return "";
}

/// The stream a launch is ordered on: its origin stream when the streams
/// pass forked it onto a side stream.
std::string effectiveStream(TransformContext &ctx, unsigned id) {
  std::string origin;
  if (launchSide(ctx.unit.ast(), ctx.unit.launchExpr(id), origin))
    return isDefaultStream(origin) ? "" : origin;
  return ctx.model().launches[id].stream;
}

/// Why one launch cannot go through the helper ("" when it can).
std::string launchProblem(TransformContext &ctx, const CUDAKernelCallExpr *kc, unsigned id) {
  ASTContext &ast = ctx.unit.ast();
  const LaunchSite &l = ctx.model().launches[id];
  std::string at = "launch #" + std::to_string(id) + ": ";
  if (l.kernelIndex < 0)
    return at + "the kernel is not known";
  if (kc->getBeginLoc().isMacroID() || kc->getEndLoc().isMacroID())
    return at + "it is written inside a macro";
  // The side stream's fork in the configuration is the streams pass's own
  // (the helper redoes it during the capture); everything else must be pure.
  const CallExpr *cfg = kc->getConfig();
  for (unsigned i = 0; i < cfg->getNumArgs(); ++i) {
    std::string origin;
    if (i == 3 && launchSide(ast, kc, origin))
      continue;
    if (cfg->getArg(i)->HasSideEffects(ast, /*IncludePossibleEffects=*/false))
      return at + "its configuration has side effects";
  }
  for (const Expr *a : kc->arguments())
    if (a->HasSideEffects(ast, /*IncludePossibleEffects=*/false))
      return at + "its arguments have side effects";
  const FunctionDecl *k = kc->getDirectCallee();
  if (!k)
    return at + "the kernel is not a named function";
  if (kc->getNumArgs() != k->getNumParams())
    return at + "default arguments are used";
  if (auto *dre = dyn_cast<DeclRefExpr>(kc->getCallee()->IgnoreImpCasts());
      !dre || (k->getTemplateSpecializationArgs() && !dre->hasExplicitTemplateArgs()))
    return at + "the kernel's template arguments are deduced, not written";
  for (unsigned i = 0; i < kc->getNumArgs(); ++i) {
    const Expr *a = kc->getArg(i)->IgnoreImpCasts();
    if (k->getParamDecl(i)->getType()->isPointerType() && a->getType()->isIntegerType())
      return at + "an integer is passed for pointer parameter " + std::to_string(i);
  }
  return "";
}

} // namespace

std::string Graph::legality(TransformContext &ctx, Target t) const {
  ASTContext &ast = ctx.unit.ast();
  const Stmt *loop = ctx.unit.hostLoopStmt(t.loop);
  const FunctionDecl *fd = ctx.unit.hostLoopFunction(t.loop);
  if (fd->isTemplateInstantiation() || fd->getTemplatedKind() != FunctionDecl::TK_NonTemplate)
    return "the loop is in a function template (one edit for every instantiation)";
  if (std::string why = writtenByMacro(ast, loop, "the loop"); !why.empty())
    return why;
  // The graph's declaration goes before the loop: a braceless body of an
  // outer loop or if gets braces.
  if (std::string why = roomAround(ast, loop, "the loop"); !why.empty())
    return why;
  // 1. One unconditional run of launches: the same kernels every iteration.
  Run run;
  if (std::string why = findRun(ctx, t.loop, run); !why.empty())
    return why;
  const HostLoop &hl = ctx.model().hostLoops[t.loop];
  for (size_t i = 0; i < run.launches.size(); ++i) {
    unsigned id = hl.launches[i];
    if (std::string why = launchProblem(ctx, run.launches[i], id); !why.empty())
      return why;
    if (effectiveStream(ctx, id) != effectiveStream(ctx, hl.launches[0]))
      return "the launches use different streams";
  }
  // 2. Nothing in the loop reads device data on the host (so nothing it
  //    decides depends on it).
  if (std::string why = hostAccessOfDeviceData(ast, loop, deviceBuffers(ast, fd)); !why.empty())
    return "the loop reads device data on the host: " + why;
  return "";
}

llvm::Error Graph::apply(TransformContext &ctx, Target t, const PlanStep &) const {
  ASTContext &ast = ctx.unit.ast();
  const Stmt *loop = ctx.unit.hostLoopStmt(t.loop);
  const FunctionDecl *fd = ctx.unit.hostLoopFunction(t.loop);
  Run run;
  findRun(ctx, t.loop, run);
  ctx.insertHelperBefore(fd, "Cudal1GraphLoop", runtime::graphLoop);
  std::string var = freshName(ctx, "cudal1Graph");
  std::string stream = effectiveStream(ctx, ctx.model().hostLoops[t.loop].launches[0]);
  if (stream.empty())
    stream = "0";
  // The graph lives as long as the loop runs.
  makeRoomAround(ctx, loop);
  ctx.rewriter.InsertTextBefore(loop->getBeginLoc(), "Cudal1GraphLoop " + var +
                                                         ";  // cudal1 graph\n" +
                                                         indentAt(ast, loop->getBeginLoc()));
  for (size_t i = 0; i < run.launches.size(); ++i) {
    const CUDAKernelCallExpr *kc = run.launches[i];
    const CallExpr *cfg = kc->getConfig();
    auto cfgArg = [&](unsigned i, const char *def) -> std::string {
      if (i >= cfg->getNumArgs() || isa<CXXDefaultArgExpr>(cfg->getArg(i)))
        return def;
      return text(ast, cfg->getArg(i)->IgnoreUnlessSpelledInSource());
    };
    std::string call = var +
                       (run.sides[i] ? ".launchSide(" + run.sides[i]->getName().str() + ", "
                                     : std::string(".launch(")) +
                       text(ast, kc->getCallee()->IgnoreImpCasts()) + ", " + cfgArg(0, "1") + ", " +
                       cfgArg(1, "1") + ", " + cfgArg(2, "0");
    for (const Expr *a : kc->arguments())
      call += ", " + text(ast, a);
    call += ")";
    ctx.rewriter.ReplaceText(statementRange(ast, kc), call);
  }
  // A side stream's join happens once, in the capture; replays hold it as
  // an edge of the graph.
  for (const CXXMemberCallExpr *j : run.joins)
    ctx.rewriter.ReplaceText(statementRange(ast, j),
                             var + ".join(" + sideStreamCall(ast, j, "join")->getName().str() +
                                 ")");
  // Launch the graph right after the run, on the original stream; an
  // unbraced body gets braces.
  const Stmt *last = run.stmts[run.last];
  CharSourceRange lr = statementRange(ast, last);
  SourceLocation semi = Lexer::findLocationAfterToken(lr.getEnd().getLocWithOffset(-1), tok::semi,
                                                      ast.getSourceManager(), ast.getLangOpts(),
                                                      /*SkipTrailingWhitespaceAndNewLine=*/false);
  if (semi.isInvalid())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no ';' after the last launch of the loop");
  ctx.rewriter.InsertTextAfter(semi, " " + var + ".replay(" + stream + ");");
  makeRoomAround(ctx, loopBody(loop));
  return llvm::Error::success();
}
