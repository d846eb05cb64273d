// drop-sync: deletes one cudaDeviceSynchronize / cudaStreamSynchronize call.
// Legal when every host path from the call reaches another synchronizing call
// (a device or default-stream synchronization, a device-to-host cudaMemcpy,
// an event synchronization of an event recorded after it) before anything
// that observes device work: a host access of a buffer, a clock read, a
// device query, a free, the end of the function or the program. A path that
// loops back to the call itself does not count as synchronized.
#include "DropSync.h"
#include "cudal1/Rewrite/HostCode.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "drop-sync"

using namespace clang;
using namespace cudal1;

namespace {

/// How control leaves a piece of host code: every path synchronized, some
/// path observed the device first, or neither. Returned: a callee returned
/// (only inside a callee).
enum class Flow { Open, Synced, Blocked, Returned };

class SyncWalker {
public:
  SyncWalker(ASTContext &ctx, const CallExpr *self, VarSet buffers, bool strict,
             std::string selfStream)
      : ctx(ctx), self(self), buffers(std::move(buffers)), strict(strict),
        selfStream(std::move(selfStream)) {}
  std::string why;

  Flow block(const std::string &w) {
    if (why.empty())
      why = w;
    return Flow::Blocked;
  }

  Flow stmt(const Stmt *s) {
    if (!s)
      return Flow::Open;
    if (auto *e = dyn_cast<Expr>(s))
      return expr(e);
    if (auto *cs = dyn_cast<CompoundStmt>(s)) {
      for (const Stmt *c : cs->body())
        if (Flow r = stmt(c); r != Flow::Open)
          return r;
      return Flow::Open;
    }
    if (auto *ds = dyn_cast<DeclStmt>(s)) {
      for (const Decl *d : ds->decls())
        if (auto *vd = dyn_cast<VarDecl>(d))
          if (Flow r = expr(vd->getInit()); r != Flow::Open)
            return r;
      return Flow::Open;
    }
    // An error check only exits on an error that happened anyway; the
    // removed call's own errors are then reported by a later call.
    if ((isa<IfStmt>(s) || isa<DoStmt>(s)) && isErrorCheck(ctx, s))
      return Flow::Open;
    if (auto *is = dyn_cast<IfStmt>(s)) {
      if (Flow r = seq({is->getInit(), is->getConditionVariableDeclStmt(), is->getCond()});
          r != Flow::Open)
        return r;
      return branches(stmt(is->getThen()), stmt(is->getElse()));
    }
    if (auto *fs = dyn_cast<ForStmt>(s))
      return loop({fs->getInit(), fs->getConditionVariableDeclStmt(), fs->getCond()},
                  {fs->getBody(), fs->getInc()});
    if (auto *ws = dyn_cast<WhileStmt>(s))
      return loop({ws->getConditionVariableDeclStmt(), ws->getCond()}, {ws->getBody()});
    if (auto *rs = dyn_cast<CXXForRangeStmt>(s))
      return loop({rs->getInit(), rs->getRangeStmt()}, {rs->getBody()});
    if (auto *ds = dyn_cast<DoStmt>(s)) {
      // The body runs at least once (error-checking macros: do { } while (0));
      // a break or continue in it is refused (breakable stays as it is).
      if (Flow r = stmt(ds->getBody()); r != Flow::Open)
        return r;
      return expr(ds->getCond());
    }
    if (auto *ss = dyn_cast<SwitchStmt>(s)) {
      if (Flow r = seq({ss->getInit(), ss->getCond()}); r != Flow::Open)
        return r;
      ++breakable;
      Flow r = stmt(ss->getBody());
      --breakable;
      return settle(r);
    }
    if (isa<BreakStmt>(s) || isa<ContinueStmt>(s))
      return breakable ? Flow::Open : block("a break or continue leaves the path");
    if (auto *rs = dyn_cast<ReturnStmt>(s)) {
      if (Flow r = expr(rs->getRetValue()); r != Flow::Open)
        return r;
      if (depth == 0)
        return block("a return from the function");
      return Flow::Returned;
    }
    if (isa<NullStmt>(s))
      return Flow::Open;
    if (auto *ls = dyn_cast<LabelStmt>(s))
      return stmt(ls->getSubStmt());
    if (auto *as = dyn_cast<AttributedStmt>(s))
      return stmt(as->getSubStmt());
    return block(std::string("unsupported statement (") + s->getStmtClassName() + ")");
  }

  /// Walks `s` up to `target` (a statement inside it): the path from the top
  /// of a loop body back to the synchronization. Only Blocked matters.
  Flow prefix(const Stmt *s, const Stmt *target) {
    if (s == target)
      return Flow::Open;
    if (auto *cs = dyn_cast<CompoundStmt>(s)) {
      for (const Stmt *c : cs->body()) {
        if (contains(c, target))
          return prefix(c, target);
        if (Flow r = stmt(c); r != Flow::Open)
          return r == Flow::Blocked ? r : Flow::Open;
      }
      return Flow::Open;
    }
    if (auto *is = dyn_cast<IfStmt>(s)) {
      if (Flow r = seq({is->getInit(), is->getConditionVariableDeclStmt(), is->getCond()});
          r != Flow::Open)
        return r == Flow::Blocked ? r : Flow::Open;
      const Stmt *in = contains(is->getThen(), target) ? is->getThen() : is->getElse();
      const Stmt *other = in == is->getThen() ? is->getElse() : is->getThen();
      if (stmt(other) == Flow::Blocked)
        return Flow::Blocked;
      return prefix(in, target);
    }
    if (auto *fs = dyn_cast<ForStmt>(s)) {
      if (seq({fs->getInit(), fs->getConditionVariableDeclStmt(), fs->getCond()}) == Flow::Blocked)
        return Flow::Blocked;
      return prefix(fs->getBody(), target);
    }
    if (auto *ws = dyn_cast<WhileStmt>(s)) {
      if (seq({ws->getConditionVariableDeclStmt(), ws->getCond()}) == Flow::Blocked)
        return Flow::Blocked;
      return prefix(ws->getBody(), target);
    }
    if (auto *ds = dyn_cast<DoStmt>(s))
      return prefix(ds->getBody(), target);
    if (auto *rs = dyn_cast<CXXForRangeStmt>(s))
      return prefix(rs->getBody(), target);
    return block(std::string("unsupported statement around the synchronization (") +
                 s->getStmtClassName() + ")");
  }

  bool contains(const Stmt *outer, const Stmt *inner) {
    for (const Stmt *p = inner; p; p = parentStmt(ctx, p))
      if (p == outer)
        return true;
    return false;
  }

  Flow seq(std::initializer_list<const Stmt *> list) {
    for (const Stmt *s : list)
      if (Flow r = stmt(s); r != Flow::Open)
        return r;
    return Flow::Open;
  }

private:
  ASTContext &ctx;
  const CallExpr *self;
  VarSet buffers;
  bool strict; ///< only device-wide (or same-stream) synchronizations count
  std::string selfStream;
  unsigned breakable = 0, depth = 0;
  bool earlyReturn = false;
  std::set<std::string> recordedEvents;
  std::set<const FunctionDecl *> active;

  /// A loop that does not contain the synchronization may run zero times:
  /// its body can block but never synchronizes every path.
  Flow loop(std::initializer_list<const Stmt *> head, std::initializer_list<const Stmt *> body) {
    if (Flow r = seq(head); r == Flow::Blocked)
      return r;
    ++breakable;
    Flow r = seq(body);
    --breakable;
    return settle(r);
  }
  Flow settle(Flow r) {
    if (r == Flow::Returned)
      earlyReturn = true;
    return r == Flow::Blocked ? r : Flow::Open;
  }
  Flow branches(Flow a, Flow b) {
    if (a == Flow::Blocked || b == Flow::Blocked)
      return Flow::Blocked;
    if (a == b)
      return a;
    if (a == Flow::Returned || b == Flow::Returned)
      earlyReturn = true;
    return Flow::Open;
  }

  Flow expr(const Expr *e) {
    if (!e)
      return Flow::Open;
    if (isa<LambdaExpr>(e))
      return Flow::Open; // not run here
    if (auto *bo = dyn_cast<BinaryOperator>(e); bo && bo->isLogicalOp()) {
      if (Flow r = expr(bo->getLHS()); r != Flow::Open)
        return r;
      return settle(expr(bo->getRHS()));
    }
    if (auto *co = dyn_cast<AbstractConditionalOperator>(e)) {
      if (Flow r = expr(co->getCond()); r != Flow::Open)
        return r;
      return branches(expr(co->getTrueExpr()), expr(co->getFalseExpr()));
    }
    // Operands first, then the node itself.
    for (const Stmt *c : e->children())
      if (auto *ce = dyn_cast_or_null<Expr>(c))
        if (Flow r = expr(ce); r != Flow::Open)
          return r;
    if (isa<CUDAKernelCallExpr>(e))
      return Flow::Open; // stream-ordered, observes nothing on the host
    if (auto *call = dyn_cast<CallExpr>(e))
      return callFlow(call);
    const Expr *base = nullptr;
    if (auto *uo = dyn_cast<UnaryOperator>(e); uo && uo->getOpcode() == UO_Deref)
      base = uo->getSubExpr();
    else if (auto *ase = dyn_cast<ArraySubscriptExpr>(e))
      base = ase->getBase();
    else if (auto *me = dyn_cast<MemberExpr>(e); me && me->isArrow())
      base = me->getBase();
    if (base)
      if (const VarDecl *vd = pointerBaseVar(base); vd && buffers.count(vd))
        return block("a host access of device buffer '" + vd->getNameAsString() + "' at line " +
                     std::to_string(line(e->getBeginLoc())));
    return Flow::Open;
  }

  unsigned line(SourceLocation l) {
    return ctx.getSourceManager().getPresumedLineNumber(ctx.getSourceManager().getFileLoc(l));
  }
  std::string argText(const CallExpr *ce, unsigned i) {
    if (i >= ce->getNumArgs() || isa<CXXDefaultArgExpr>(ce->getArg(i)))
      return "";
    const Expr *a = ce->getArg(i)->IgnoreUnlessSpelledInSource();
    CharSourceRange r = statementRange(ctx, a);
    return r.isValid() ? Lexer::getSourceText(r, ctx.getSourceManager(), ctx.getLangOpts()).str()
                       : "?";
  }

  Flow synced(const std::string &by) {
    LLVM_DEBUG(llvm::dbgs() << "drop-sync: synchronized again by " << by << "\n");
    return Flow::Synced;
  }

  Flow callFlow(const CallExpr *ce) {
    if (ce == self)
      return Flow::Open;
    std::string n = calleeName(ce);
    llvm::StringRef name(n);
    if (n == "cudaDeviceSynchronize" || n == "cudaThreadSynchronize")
      return synced(n);
    if (n == "cudaStreamSynchronize") {
      std::string s = argText(ce, 0);
      if (!selfStream.empty() ? s == selfStream : (!strict && isDefaultStream(s)))
        return synced(n);
      return Flow::Open;
    }
    if (n == "cudaMemcpy" || n == "cudaMemcpy2D" || n == "cudaMemcpyFromSymbol") {
      // A default-stream copy does not wait for work on other streams.
      if (strict)
        return block(n + " at line " + std::to_string(line(ce->getBeginLoc())) +
                     " (a default-stream copy may not wait for work on other streams)");
      // Synchronous with the host for device-to-host copies only.
      Expr::EvalResult r;
      const Expr *kind = ce->getArg(ce->getNumArgs() - 1);
      if (kind->EvaluateAsInt(r, ctx) &&
          r.Val.getInt().getZExtValue() == 2 /* cudaMemcpyDeviceToHost */)
        return synced(n);
      return Flow::Open;
    }
    if (n == "cudaEventRecord") {
      if (isDefaultStream(argText(ce, 1)))
        recordedEvents.insert(argText(ce, 0));
      return Flow::Open;
    }
    if (n == "cudaEventSynchronize")
      return !strict && recordedEvents.count(argText(ce, 0)) ? synced(n) : Flow::Open;
    if (n == "cudaEventQuery" || n == "cudaStreamQuery" || n == "cudaEventElapsedTime")
      return block("a device query (" + n + ") at line " + std::to_string(line(ce->getBeginLoc())));
    if (name.starts_with("cudaFree") || n == "cudaDeviceReset")
      return block(n + " at line " + std::to_string(line(ce->getBeginLoc())) +
                   " may release what running work uses");
    if (name.starts_with("cuda"))
      return Flow::Open;
    if (n == "exit" || n == "abort" || n == "quick_exit" || n == "_exit")
      return block("the program exits at line " + std::to_string(line(ce->getBeginLoc())));
    if (n == "now" || n == "clock" || n == "gettimeofday" || n == "clock_gettime" ||
        n == "omp_get_wtime" || n == "MPI_Wtime" || n == "time")
      return block("host timing code (" + n + ") at line " +
                   std::to_string(line(ce->getBeginLoc())));
    const FunctionDecl *fd = ce->getDirectCallee();
    const FunctionDecl *def = fd ? fd->getDefinition() : nullptr;
    if (def && def->hasBody() && !ctx.getSourceManager().isInSystemHeader(def->getLocation())) {
      if (depth >= 4 || active.count(def))
        return block("calls " + def->getNameAsString() + " too deeply to follow");
      return callee(def);
    }
    // A function we cannot look into may read a buffer passed by value.
    for (unsigned i = 0; i < ce->getNumArgs(); ++i)
      if (ce->getArg(i)->getType()->isPointerType() &&
          !(fd && i < fd->getNumParams() && fd->getParamDecl(i)->getType()->isReferenceType()))
        if (const VarDecl *vd = pointerBaseVar(ce->getArg(i)); vd && buffers.count(vd))
          return block("device buffer '" + vd->getNameAsString() + "' is passed to " +
                       (n.empty() ? std::string("a function") : n) + " at line " +
                       std::to_string(line(ce->getBeginLoc())));
    return Flow::Open;
  }

  /// The body of a user function, with its pointer parameters as buffers.
  Flow callee(const FunctionDecl *def) {
    VarSet saved = buffers;
    buffers = deviceBuffers(ctx, def);
    for (const ParmVarDecl *p : def->parameters())
      if (p->getType()->isPointerType())
        buffers.insert(p);
    bool savedEarly = earlyReturn;
    unsigned savedBreakable = breakable;
    earlyReturn = false;
    breakable = 0;
    active.insert(def);
    ++depth;
    Flow r = stmt(def->getBody());
    --depth;
    active.erase(def);
    if (r == Flow::Returned || (r == Flow::Synced && earlyReturn))
      r = Flow::Open; // some path returned before the synchronization
    earlyReturn = savedEarly;
    breakable = savedBreakable;
    buffers = std::move(saved);
    if (r == Flow::Blocked)
      why = "in " + def->getNameAsString() + ": " + why;
    return r;
  }
};

/// Launches or asynchronous copies on explicit streams in `fd`: a later
/// default-stream copy would not wait for them.
bool usesExplicitStreams(TransformContext &ctx, const FunctionDecl *fd, const std::string &name) {
  for (const LaunchSite &l : ctx.model().launches)
    if (l.function == name && !isDefaultStream(l.stream))
      return true;
  struct Finder : RecursiveASTVisitor<Finder> {
    ASTContext &ctx;
    bool found = false;
    explicit Finder(ASTContext &ctx) : ctx(ctx) {}
    bool VisitCallExpr(CallExpr *ce) {
      llvm::StringRef n = calleeName(ce);
      if (n.starts_with("cuda") && n.ends_with("Async") && ce->getNumArgs()) {
        const Expr *s = ce->getArg(ce->getNumArgs() - 1);
        if (!isa<CXXDefaultArgExpr>(s)) {
          CharSourceRange r = statementRange(ctx, s->IgnoreUnlessSpelledInSource());
          if (!isDefaultStream(
                  Lexer::getSourceText(r, ctx.getSourceManager(), ctx.getLangOpts()).str()))
            found = true;
        }
      }
      return true;
    }
  } f(ctx.unit.ast());
  f.TraverseStmt(const_cast<Stmt *>(fd->getBody()));
  return f.found;
}

} // namespace

std::string DropSync::legality(TransformContext &ctx, Target t) const {
  ASTContext &ast = ctx.unit.ast();
  const HostSync &hs = ctx.model().syncs[t.sync];
  const CallExpr *call = ctx.unit.syncCall(t.sync);
  const FunctionDecl *fd = ctx.unit.syncFunction(t.sync);
  if (hs.call == "cudaEventSynchronize")
    return "it waits for one event; drop-sync removes device and stream synchronizations";
  if (fd->isTemplateInstantiation() || fd->getTemplatedKind() != FunctionDecl::TK_NonTemplate)
    return "the synchronization is in a function template (one edit for every instantiation)";
  // 1. The call must be a statement of its own (an error-checking macro
  //    around it is fine): its result feeds nothing else.
  const Stmt *st = enclosingStatement(ast, call);
  if (!st)
    return "the synchronization is not a statement of its own";
  if (st != call && !isErrorCheck(ast, st, call))
    return "the result of the synchronization is used";
  CharSourceRange range = statementRange(ast, st);
  if (range.isInvalid() || !ast.getSourceManager().isWrittenInMainFile(range.getBegin()))
    return "the synchronization is written inside a macro that does more";
  // 2. Which later calls synchronize what this one did.
  std::string stream;
  if (hs.call == "cudaStreamSynchronize") {
    CharSourceRange r = statementRange(ast, call->getArg(0)->IgnoreUnlessSpelledInSource());
    stream = Lexer::getSourceText(r, ast.getSourceManager(), ast.getLangOpts()).str();
    if (isDefaultStream(stream))
      stream.clear();
  }
  bool strict = !stream.empty() || usesExplicitStreams(ctx, fd, hs.function);
  SyncWalker w(ast, call, deviceBuffers(ast, fd), strict, stream);
  // 3. Every path from the call: the rest of each enclosing block, and for
  //    each enclosing loop the way back to the call and the way out.
  const Stmt *cur = st;
  while (true) {
    const Stmt *p = parentStmt(ast, cur);
    if (!p)
      return "the synchronization is not inside a function body";
    Flow r = Flow::Open;
    if (auto *cs = dyn_cast<CompoundStmt>(p)) {
      bool after = false;
      for (const Stmt *c : cs->body()) {
        if (after && (r = w.stmt(c)) != Flow::Open)
          break;
        after |= c == cur;
      }
      if (r == Flow::Synced)
        return "";
      if (r == Flow::Blocked)
        return "needed before " + w.why;
      if (p == fd->getBody())
        return "nothing synchronizes again before the end of " + hs.function;
    } else if (auto *fs = dyn_cast<ForStmt>(p); fs && fs->getBody() == cur) {
      if (w.seq({fs->getInc(), fs->getConditionVariableDeclStmt(), fs->getCond()}) ==
              Flow::Blocked ||
          w.prefix(fs->getBody(), st) == Flow::Blocked)
        return "needed before " + w.why + " (next iteration)";
    } else if (auto *ws = dyn_cast<WhileStmt>(p); ws && ws->getBody() == cur) {
      if (w.seq({ws->getConditionVariableDeclStmt(), ws->getCond()}) == Flow::Blocked ||
          w.prefix(ws->getBody(), st) == Flow::Blocked)
        return "needed before " + w.why + " (next iteration)";
    } else if (auto *ds = dyn_cast<DoStmt>(p); ds && ds->getBody() == cur) {
      if (w.seq({ds->getCond()}) == Flow::Blocked || w.prefix(ds->getBody(), st) == Flow::Blocked)
        return "needed before " + w.why + " (next iteration)";
    } else if (auto *rs = dyn_cast<CXXForRangeStmt>(p); rs && rs->getBody() == cur) {
      if (w.prefix(rs->getBody(), st) == Flow::Blocked)
        return "needed before " + w.why + " (next iteration)";
    } else if (!isa<IfStmt>(p)) {
      return std::string("unsupported statement around the synchronization (") +
             p->getStmtClassName() + ")";
    }
    cur = p;
  }
}

llvm::Error DropSync::apply(TransformContext &ctx, Target t, const PlanStep &) const {
  ASTContext &ast = ctx.unit.ast();
  const CallExpr *call = ctx.unit.syncCall(t.sync);
  const Stmt *st = enclosingStatement(ast, call);
  CharSourceRange range = statementRange(ast, st);
  std::string text = Lexer::getSourceText(range, ast.getSourceManager(), ast.getLangOpts()).str();
  for (size_t p; (p = text.find("*/")) != std::string::npos;)
    text.replace(p, 2, "* /");
  // The `;` after the statement stays: an empty statement keeps any
  // unbraced if/for around it well-formed.
  ctx.rewriter.ReplaceText(range, "/* cudal1 drop-sync: " + text + " */");
  return llvm::Error::success();
}
