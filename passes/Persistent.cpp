// persistent: a host loop of launches becomes one launch of a new kernel
// that runs the loop on the device. Each launch of the body is a phase: its
// kernel's body, copied as a lambda that takes the kernel's parameters (as
// fuse does), called with the launch's arguments as the device evaluates
// them. Three forms:
//   block: one block; each thread runs the original threads of a phase
//     (their threadIdx and blockIdx, which the lambda takes as parameters
//     of those names) in a grid-stride loop; __syncthreads() between the
//     phases;
//   grid: the same in a cooperative launch of the co-resident blocks,
//     cooperative_groups grid.sync() between the phases;
//   owner: the launches' own grid and block, each thread running its own
//     element through every iteration with no barrier: legal only where the
//     dependence test proves that every element a phase writes and another
//     phase (or the same one in the next iteration) touches is touched by
//     the same thread, the buffers a swap exchanges counted as one.
// The host loop stays, without its launches and synchronizations, for what
// it computes on the host (the counter, swapped pointers); so it must do
// nothing else: no read of device data, no call, no branch, a trip count
// fixed on entry. The kernel evaluates the loop header, the swaps and the
// arguments that change per iteration from the same text.
#include "Persistent.h"
#include "cudal1/Analysis/Dependence.h"
#include "cudal1/Rewrite/HostCode.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"

#include "runtime/persistent.inc" // the helper inserted: passes/runtime/persistent.cuh

#include <algorithm>
#include <map>

#define DEBUG_TYPE "persistent"

using namespace clang;
using namespace cudal1;

namespace {

constexpr unsigned long long kMaxBlockThreads = 1024;

enum class Form { Owner, Grid, Block };

const char *formName(Form f) {
  switch (f) {
  case Form::Owner:
    return "owner";
  case Form::Grid:
    return "grid";
  case Form::Block:
    return "block";
  }
  return "";
}

/// What a statement of the loop body is.
enum class Kind {
  Launch, ///< a phase of the persistent kernel
  Keep,   ///< an error check (or an empty statement): stays on the host
  Sync,   ///< a host synchronization: removed, one after the persistent launch
  Replay  ///< host arithmetic on locals: kept, and replayed on the device
};

struct Phase {
  unsigned id = 0;
  const CUDAKernelCallExpr *call = nullptr;
  const FunctionDecl *kernel = nullptr; ///< the definition
  std::vector<bool> varies;             ///< per argument: it changes with the iteration
  std::string grid, block;              ///< the configuration as written
};

struct Shape {
  const ForStmt *loop = nullptr;
  const FunctionDecl *host = nullptr;
  std::vector<const Stmt *> stmts; ///< the body's statements
  std::vector<Kind> kinds;
  std::vector<int> phaseOf; ///< per statement: its phase, or -1
  std::vector<Phase> phases;
  VarSet inside;                         ///< declared in the loop (header or body)
  VarSet carried;                        ///< declared before the loop and assigned in it
  VarSet counters;                       ///< assigned by the increment
  std::vector<const VarDecl *> captured; ///< kernel parameters, in first-use order
  std::vector<const VarDecl *> locals;   ///< counters the initialisation sets: kernel locals
  std::string stream;                    ///< "" for the default stream
  const Stmt *firstSync = nullptr;
};

std::string lineOf(ASTContext &ast, const Stmt *s) {
  const SourceManager &sm = ast.getSourceManager();
  return std::to_string(sm.getPresumedLineNumber(sm.getFileLoc(s->getBeginLoc())));
}

std::string rangeText(ASTContext &ast, CharSourceRange r) {
  return r.isValid() ? Lexer::getSourceText(r, ast.getSourceManager(), ast.getLangOpts()).str()
                     : "";
}

std::string stmtText(ASTContext &ast, const Stmt *s) {
  return rangeText(ast, statementRange(ast, s));
}

std::string declText(ASTContext &ast, const Decl *d) {
  return rangeText(ast,
                   Lexer::makeFileCharRange(CharSourceRange::getTokenRange(d->getSourceRange()),
                                            ast.getSourceManager(), ast.getLangOpts()));
}

const Stmt *stripCleanups(const Stmt *s) {
  if (auto *e = dyn_cast_or_null<ExprWithCleanups>(s))
    return e->getSubExpr();
  return s;
}

bool isDim3(QualType t) {
  const CXXRecordDecl *rd = t->getAsCXXRecordDecl();
  return rd && (rd->getName() == "dim3" || rd->getName() == "uint3");
}

/// Why a variable of this type cannot be a parameter of the kernel ("" when
/// it can): scalars, enums, pointers to data and dim3.
std::string typeProblem(QualType t) {
  if (t->isReferenceType())
    return "is a reference";
  if (t->isArrayType())
    return "is an array";
  if (t->isPointerType()) {
    QualType p = t->getPointeeType();
    if (p->isFunctionType())
      return "is a function pointer";
    if (const TagDecl *td = p->getAsTagDecl(); td && td->getDeclContext()->isFunctionOrMethod())
      return "points to a type local to the function";
    return "";
  }
  if (t->isArithmeticType() || t->isEnumeralType() || t->isNullPtrType() || isDim3(t))
    return "";
  return "has type '" + t.getAsString() + "'";
}

/// The type as a declaration at namespace scope writes it.
std::string typeText(ASTContext &ast, QualType t) {
  t = t.getUnqualifiedType();
  // A typedef of the function, auto and decltype are spelled as what they
  // stand for (the kernel is declared at namespace scope).
  auto localName = [](QualType q) {
    const TypedefType *td = q->getAs<TypedefType>();
    return td && td->getDecl()->getDeclContext()->isFunctionOrMethod();
  };
  if (t->getContainedAutoType() || isa<DecltypeType>(t.getTypePtr()) || localName(t) ||
      (t->isPointerType() && localName(t->getPointeeType())))
    t = t.getCanonicalType().getUnqualifiedType();
  PrintingPolicy pp(ast.getLangOpts());
  return t.getAsString(pp);
}

std::string nameOf(const NamedDecl *d) { return "'" + d->getNameAsString() + "'"; }

/// "" when `e` evaluates the same on the device from the same text:
/// literals, local scalar, pointer and dim3 variables, arithmetic,
/// comparisons, casts, sizeof, dim3 members and constructions; no call, no
/// dereference or subscript of host memory, no side effect. The variables
/// it reads are appended to `refs`.
std::string deviceEvaluable(const Expr *e, std::vector<const VarDecl *> &refs) {
  if (!e)
    return "";
  e = e->IgnoreParens();
  if (isa<IntegerLiteral, FloatingLiteral, CharacterLiteral, CXXBoolLiteralExpr,
          CXXNullPtrLiteralExpr, GNUNullExpr, UnaryExprOrTypeTraitExpr, CXXDefaultArgExpr>(e))
    return "";
  if (auto *dre = dyn_cast<DeclRefExpr>(e)) {
    if (isa<EnumConstantDecl>(dre->getDecl()))
      return "";
    auto *vd = dyn_cast<VarDecl>(dre->getDecl());
    if (!vd)
      return "it names " + nameOf(dre->getDecl()) + ", which is not a variable";
    if (!vd->hasLocalStorage())
      return "it reads " + nameOf(vd) + ", which is not a local variable";
    if (std::string why = typeProblem(vd->getType()); !why.empty())
      return nameOf(vd) + " " + why;
    refs.push_back(vd);
    return "";
  }
  if (isa<CXXDynamicCastExpr, CXXConstCastExpr>(e))
    return "a cast the device cannot make";
  if (auto *c = dyn_cast<CastExpr>(e))
    return deviceEvaluable(c->getSubExpr(), refs);
  if (auto *m = dyn_cast<MaterializeTemporaryExpr>(e))
    return deviceEvaluable(m->getSubExpr(), refs);
  if (auto *c = dyn_cast<ExprWithCleanups>(e))
    return deviceEvaluable(c->getSubExpr(), refs);
  if (auto *b = dyn_cast<CXXBindTemporaryExpr>(e))
    return deviceEvaluable(b->getSubExpr(), refs);
  if (auto *u = dyn_cast<UnaryOperator>(e)) {
    if (u->getOpcode() == UO_Deref)
      return "a dereference of host memory";
    if (u->getOpcode() == UO_AddrOf)
      return "it takes an address";
    if (u->isIncrementDecrementOp())
      return "an increment inside an expression";
    return deviceEvaluable(u->getSubExpr(), refs);
  }
  if (auto *b = dyn_cast<BinaryOperator>(e)) {
    if (b->isAssignmentOp())
      return "an assignment inside an expression";
    if (b->getOpcode() == BO_Comma)
      return "a comma expression";
    if (std::string why = deviceEvaluable(b->getLHS(), refs); !why.empty())
      return why;
    return deviceEvaluable(b->getRHS(), refs);
  }
  if (auto *c = dyn_cast<ConditionalOperator>(e)) {
    for (const Expr *x : {c->getCond(), c->getTrueExpr(), c->getFalseExpr()})
      if (std::string why = deviceEvaluable(x, refs); !why.empty())
        return why;
    return "";
  }
  if (auto *m = dyn_cast<MemberExpr>(e)) {
    if (!m->isArrow() && isDim3(m->getBase()->getType()))
      return deviceEvaluable(m->getBase(), refs);
    return "a member access";
  }
  if (auto *c = dyn_cast<CXXConstructExpr>(e)) {
    if (!isDim3(c->getType()))
      return "a construction of '" + c->getType().getAsString() + "'";
    for (const Expr *a : c->arguments())
      if (std::string why = deviceEvaluable(a, refs); !why.empty())
        return why;
    return "";
  }
  if (auto *c = dyn_cast<CallExpr>(e)) {
    std::string n = calleeName(c);
    if (n.empty() && c->getDirectCallee())
      n = c->getDirectCallee()->getNameAsString();
    return n.empty() ? std::string("a call") : "a call of '" + n + "'";
  }
  if (isa<ArraySubscriptExpr>(e))
    return "a subscript of host memory";
  return std::string("a ") + e->getStmtClassName();
}

const VarDecl *localVar(const Expr *e) {
  auto *dre = dyn_cast<DeclRefExpr>(e->IgnoreParenImpCasts());
  auto *vd = dre ? dyn_cast<VarDecl>(dre->getDecl()) : nullptr;
  return vd && vd->hasLocalStorage() ? vd : nullptr;
}

/// `std::swap(a, b)` of two local variables: the call, else null.
const CallExpr *swapCall(const Stmt *s) {
  auto *c = dyn_cast_or_null<CallExpr>(stripCleanups(s));
  const FunctionDecl *fd = c ? c->getDirectCallee() : nullptr;
  if (!fd || fd->getName() != "swap" || !fd->isInStdNamespace() || c->getNumArgs() != 2)
    return nullptr;
  return localVar(c->getArg(0)) && localVar(c->getArg(1)) ? c : nullptr;
}

/// "" when `e`, a statement of the loop (or its increment), is host
/// arithmetic the device can replay: assignments, compound assignments and
/// increments of local variables (joined by commas in an increment) with
/// device-evaluable operands, or a std::swap of two locals. The variables
/// it assigns go to `assigned`, those it reads to `refs`.
std::string replayable(const Expr *e, std::vector<const VarDecl *> &assigned,
                       std::vector<const VarDecl *> &refs) {
  e = cast<Expr>(stripCleanups(e))->IgnoreParens();
  if (const CallExpr *sw = swapCall(e)) {
    for (const Expr *a : sw->arguments()) {
      const VarDecl *v = localVar(a);
      if (std::string why = typeProblem(v->getType()); !why.empty())
        return "std::swap of " + nameOf(v) + ", which " + why;
      assigned.push_back(v);
      refs.push_back(v);
    }
    return "";
  }
  if (auto *b = dyn_cast<BinaryOperator>(e)) {
    if (b->getOpcode() == BO_Comma) {
      if (std::string why = replayable(b->getLHS(), assigned, refs); !why.empty())
        return why;
      return replayable(b->getRHS(), assigned, refs);
    }
    if (b->isAssignmentOp()) {
      const VarDecl *v = localVar(b->getLHS());
      if (!v)
        return "an assignment to something other than a local variable";
      if (std::string why = typeProblem(v->getType()); !why.empty())
        return "an assignment to " + nameOf(v) + ", which " + why;
      assigned.push_back(v);
      if (b->isCompoundAssignmentOp())
        refs.push_back(v);
      return deviceEvaluable(b->getRHS(), refs);
    }
  }
  if (auto *u = dyn_cast<UnaryOperator>(e); u && u->isIncrementDecrementOp()) {
    const VarDecl *v = localVar(u->getSubExpr());
    if (!v)
      return "an increment of something other than a local variable";
    if (std::string why = typeProblem(v->getType()); !why.empty())
      return "an increment of " + nameOf(v) + ", which " + why;
    assigned.push_back(v);
    refs.push_back(v);
    return "";
  }
  std::vector<const VarDecl *> ignored;
  if (std::string why = deviceEvaluable(e, ignored); !why.empty())
    return why;
  return "an expression whose value is unused";
}

/// The sync call (cudaDeviceSynchronize, cudaThreadSynchronize,
/// cudaStreamSynchronize) that statement `s` is, possibly inside an
/// error-checking macro; else null.
const CallExpr *syncStatement(TransformContext &ctx, const Stmt *s) {
  ASTContext &ast = ctx.unit.ast();
  for (const HostSync &hs : ctx.model().syncs) {
    if (hs.call != "cudaDeviceSynchronize" && hs.call != "cudaThreadSynchronize" &&
        hs.call != "cudaStreamSynchronize")
      continue;
    const CallExpr *call = ctx.unit.syncCall(hs.id);
    if (!call || enclosingStatement(ast, call) != s)
      continue;
    if (stripCleanups(s) == call || isErrorCheck(ast, s, call))
      return call;
  }
  return nullptr;
}

/// The first break, continue, return or goto in `s`, or null.
const Stmt *earlyExit(const Stmt *s) {
  const Stmt *found = nullptr;
  forEachStmt(s, [&](const Stmt *x) {
    if (!found && isa<BreakStmt, ContinueStmt, ReturnStmt, GotoStmt, IndirectGotoStmt>(x))
      found = x;
  });
  return found;
}

bool isBuiltinIndex(const VarDecl *vd) {
  if (!vd || vd->hasLocalStorage())
    return false;
  StringRef n = vd->getName();
  return n == "threadIdx" || n == "blockIdx" || n == "blockDim" || n == "gridDim";
}

/// Whether a device function's body reads a thread or block index itself:
/// in the block and grid forms it would see the persistent kernel's
/// threads, not the launch's.
bool readsIndices(const FunctionDecl *f) {
  bool reads = false;
  forEachStmt(f->getBody(), [&](const Stmt *x) {
    if (auto *dre = dyn_cast<DeclRefExpr>(x))
      reads |= isBuiltinIndex(dyn_cast<VarDecl>(dre->getDecl()));
  });
  return reads;
}

/// Whether a device function synchronizes threads (a barrier, a fence,
/// warp-level intrinsics) or declares shared memory.
bool synchronizes(const FunctionDecl *f) {
  if (usesWarpIntrinsics(f))
    return true;
  for (const std::string &c : calleeNames(f))
    if (StringRef(c).starts_with("__syncthreads") || StringRef(c).starts_with("__threadfence") ||
        StringRef(c).starts_with("__barrier"))
      return true;
  bool shared = false;
  forEachStmt(f->getBody(), [&](const Stmt *x) {
    if (auto *ds = dyn_cast<DeclStmt>(x))
      for (const Decl *d : ds->decls())
        shared |= d->hasAttr<CUDASharedAttr>();
  });
  return shared;
}

/// The first device function that `fd` calls (a few levels down, not in
/// system headers) for which `test` holds; "" if none.
std::string calleeThat(const FunctionDecl *fd, unsigned depth, std::set<const FunctionDecl *> &seen,
                       bool (*test)(const FunctionDecl *)) {
  std::string found;
  forEachStmt(fd->getBody(), [&](const Stmt *s) {
    if (!found.empty())
      return;
    auto *ce = dyn_cast<CallExpr>(s);
    const FunctionDecl *callee = ce ? ce->getDirectCallee() : nullptr;
    if (!callee || !(callee = callee->getDefinition()) || !callee->hasBody() ||
        !seen.insert(callee).second)
      return;
    if (callee->getASTContext().getSourceManager().isInSystemHeader(callee->getLocation()))
      return;
    if (test(callee))
      found = callee->getNameAsString();
    else if (depth > 0)
      found = calleeThat(callee, depth - 1, seen, test);
  });
  return found;
}

/// The number a grid argument stands for when it is a constant (an
/// integer, dim3 of constants, or a dim3 variable initialised with them).
std::optional<unsigned long long> constantCount(ASTContext &ast, const Expr *e) {
  if (!e)
    return std::nullopt;
  e = e->IgnoreUnlessSpelledInSource();
  if (auto *dre = dyn_cast<DeclRefExpr>(e))
    if (auto *vd = dyn_cast<VarDecl>(dre->getDecl());
        vd && vd->hasInit() && isDim3(vd->getType()) && vd->getType().isConstQualified() == false)
      e = vd->getInit()->IgnoreUnlessSpelledInSource();
  Expr::EvalResult r;
  if (e->getType()->isIntegerType())
    return e->EvaluateAsInt(r, ast)
               ? std::optional<unsigned long long>(r.Val.getInt().getZExtValue())
               : std::nullopt;
  if (auto *ce = dyn_cast<CXXConstructExpr>(e)) {
    unsigned long long prod = 1;
    for (const Expr *a : ce->arguments()) {
      if (isa<CXXDefaultArgExpr>(a))
        continue;
      if (!a->EvaluateAsInt(r, ast))
        return std::nullopt;
      prod *= r.Val.getInt().getZExtValue();
    }
    return prod;
  }
  return std::nullopt;
}

/// Why one launch cannot become a phase ("" when it can).
std::string launchProblem(TransformContext &ctx, const Shape &s, unsigned id,
                          const CUDAKernelCallExpr *kc) {
  ASTContext &ast = ctx.unit.ast();
  const SourceManager &sm = ast.getSourceManager();
  const LaunchSite &l = ctx.model().launches[id];
  std::string at = "launch #" + std::to_string(id) + ": ";
  if (l.kernelIndex < 0)
    return at + "the kernel is not known";
  const Kernel &k = ctx.model().kernels[l.kernelIndex];
  const FunctionDecl *fd = ctx.unit.kernelDecl(l.kernelIndex);
  if (kc->getBeginLoc().isMacroID() || kc->getEndLoc().isMacroID())
    return at + "it is written inside a macro";
  if (!k.templateArgs.empty() || fd->getTemplateInstantiationPattern())
    return at + "the kernel is a template";
  if (k.fromHeader || !sm.isWrittenInMainFile(fd->getLocation()))
    return at + "the kernel is not defined in this file";
  if (!fd->getLexicalDeclContext()->isTranslationUnit())
    return at + "the kernel is declared inside a namespace or class";
  if (!sm.isBeforeInTranslationUnit(fd->getSourceRange().getEnd(), s.host->getBeginLoc()))
    return at + "the kernel is defined after the host function";
  if (!k.shared.empty())
    return at + "the kernel uses shared memory";
  if (!k.barriers.empty())
    return at + "the kernel calls " + k.barriers.front().callee +
           " (its threads would no longer be one block's)";
  if (usesWarpIntrinsics(fd))
    return at + "the kernel uses warp-level intrinsics";
  std::set<const FunctionDecl *> seen;
  if (std::string callee = calleeThat(fd, 3, seen, synchronizes); !callee.empty())
    return at + "the kernel calls '" + callee + "', which synchronizes threads";
  for (const std::string &c : calleeNames(fd))
    if (c == "printf" || c == "vprintf")
      return at + "the kernel prints (the output of every iteration would wait in the device's "
                  "printf buffer)";
  if (kc->getNumArgs() != fd->getNumParams())
    return at + "default arguments are used";
  if (std::string why = hiddenEffects(fd); !why.empty())
    return at + why;
  const CallExpr *cfg = kc->getConfig();
  if (cfg->getNumArgs() > 2 && !isa<CXXDefaultArgExpr>(cfg->getArg(2)))
    if (auto v = constantCount(ast, cfg->getArg(2)); !v || *v != 0)
      return at + "it asks for dynamic shared memory";
  return "";
}

/// The variables a statement assigns (assignments, increments, swaps).
void assignedIn(const Stmt *s, std::vector<const VarDecl *> &out) {
  forEachStmt(s, [&](const Stmt *x) {
    if (auto *b = dyn_cast<BinaryOperator>(x); b && b->isAssignmentOp()) {
      if (const VarDecl *v = localVar(b->getLHS()))
        out.push_back(v);
    } else if (auto *u = dyn_cast<UnaryOperator>(x); u && u->isIncrementDecrementOp()) {
      if (const VarDecl *v = localVar(u->getSubExpr()))
        out.push_back(v);
    } else if (const CallExpr *sw = swapCall(x)) {
      out.push_back(localVar(sw->getArg(0)));
      out.push_back(localVar(sw->getArg(1)));
    }
  });
}

/// The loop's shape, or why it cannot become a persistent kernel (the
/// checks every form shares).
std::string shapeOf(TransformContext &ctx, unsigned loopId, Shape &s) {
  ASTContext &ast = ctx.unit.ast();
  const Stmt *loopStmt = ctx.unit.hostLoopStmt(loopId);
  s.host = ctx.unit.hostLoopFunction(loopId);
  if (s.host->isTemplateInstantiation() ||
      s.host->getTemplatedKind() != FunctionDecl::TK_NonTemplate)
    return "the loop is in a function template (one edit for every instantiation)";
  if (loopStmt->getBeginLoc().isMacroID())
    return "the loop is written inside a macro";
  if (!isa_and_nonnull<CompoundStmt>(parentStmt(ast, loopStmt)))
    return "the loop is not a statement of a block";
  s.loop = dyn_cast<ForStmt>(loopStmt);
  if (!s.loop)
    return std::string("the loop is a ") +
           (isa<WhileStmt>(loopStmt) ? "while"
            : isa<DoStmt>(loopStmt)  ? "do"
                                     : "range-for") +
           " loop, not a counted for loop: its trip count is not known on entry";
  if (!s.loop->getCond())
    return "the loop has no condition: its trip count is not known on entry";
  const HostLoop &hl = ctx.model().hostLoops[loopId];
  if (hl.launches.empty())
    return "the loop launches no kernel";
  // 1. The launches are statements of the body itself.
  const Stmt *body = s.loop->getBody();
  if (auto *cs = dyn_cast<CompoundStmt>(body))
    s.stmts.assign(cs->body_begin(), cs->body_end());
  else
    s.stmts = {body};
  s.phaseOf.assign(s.stmts.size(), -1);
  for (unsigned id : hl.launches) {
    const CUDAKernelCallExpr *kc = ctx.unit.launchExpr(id);
    auto it = std::find_if(s.stmts.begin(), s.stmts.end(),
                           [&](const Stmt *x) { return stripCleanups(x) == kc; });
    if (it == s.stmts.end())
      return "launch #" + std::to_string(id) +
             " is not a statement of the loop body (conditional, nested or inside an expression)";
    s.phaseOf[it - s.stmts.begin()] = int(s.phases.size());
    Phase p;
    p.id = id;
    p.call = kc;
    s.phases.push_back(p);
  }
  std::sort(s.phases.begin(), s.phases.end(), [&](const Phase &a, const Phase &b) {
    return ast.getSourceManager().isBeforeInTranslationUnit(a.call->getBeginLoc(),
                                                            b.call->getBeginLoc());
  });
  for (size_t i = 0, n = 0; i < s.stmts.size(); ++i)
    if (s.phaseOf[i] >= 0)
      s.phaseOf[i] = int(n++);
  // 2. No host read of device data: nothing the host decides or computes in
  //    the loop depends on a launch's results.
  if (std::string why = hostAccessOfDeviceData(ast, s.loop, deviceBuffers(ast, s.host));
      !why.empty())
    return "the loop reads device data on the host: " + why;
  if (const Stmt *x = earlyExit(body))
    return "line " + lineOf(ast, x) + ": a " +
           (isa<BreakStmt>(x)      ? "break"
            : isa<ContinueStmt>(x) ? "continue"
            : isa<ReturnStmt>(x)   ? "return"
                                   : "goto") +
           " leaves the iteration early: the trip count is not known on entry";
  // 3. Every other statement: an error check, a synchronization, or host
  //    arithmetic on locals that the device can replay.
  // The variables the device reads: the header's, then each statement's.
  std::vector<const VarDecl *> refs, assigned;
  std::vector<std::vector<const VarDecl *>> stmtRefs(s.stmts.size());
  s.kinds.assign(s.stmts.size(), Kind::Keep);
  for (size_t i = 0; i < s.stmts.size(); ++i) {
    const Stmt *st = s.stmts[i];
    std::vector<const VarDecl *> &refs = stmtRefs[i];
    std::string at =
        "line " + lineOf(ast, st) + ": host code in the loop that the device cannot " + "replay: ";
    if (s.phaseOf[i] >= 0) {
      s.kinds[i] = Kind::Launch;
      continue;
    }
    if (isa<NullStmt>(st))
      continue;
    if (syncStatement(ctx, st)) {
      s.kinds[i] = Kind::Sync;
      if (!s.firstSync)
        s.firstSync = st;
      continue;
    }
    if (auto *ds = dyn_cast<DeclStmt>(st)) {
      for (const Decl *d : ds->decls()) {
        auto *vd = dyn_cast<VarDecl>(d);
        if (!vd)
          return at + "a declaration that is not a variable";
        if (!vd->hasLocalStorage())
          return at + "a static variable " + nameOf(vd);
        if (std::string why = typeProblem(vd->getType()); !why.empty())
          return at + nameOf(vd) + " " + why;
        if (vd->hasInit())
          if (std::string why = deviceEvaluable(vd->getInit(), refs); !why.empty())
            return at + why;
        s.inside.insert(vd);
      }
      s.kinds[i] = Kind::Replay;
      continue;
    }
    if (isErrorCheck(ast, st))
      continue;
    if (isa<IfStmt, SwitchStmt>(st))
      return at + "a branch";
    if (isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt>(st))
      return at + "a nested loop";
    if (isa<CompoundStmt>(st))
      return at + "a nested block";
    auto *e = dyn_cast<Expr>(st);
    if (!e)
      return at + std::string("a ") + st->getStmtClassName();
    if (std::string why = replayable(e, assigned, refs); !why.empty())
      return at + why;
    s.kinds[i] = Kind::Replay;
  }
  // 4. The header: evaluated on the device from its text too.
  if (const Stmt *init = s.loop->getInit()) {
    if (auto *ds = dyn_cast<DeclStmt>(init)) {
      for (const Decl *d : ds->decls()) {
        auto *vd = dyn_cast<VarDecl>(d);
        if (!vd || vd->isStaticLocal())
          return "the loop's initialisation declares something other than a variable";
        if (std::string why = typeProblem(vd->getType()); !why.empty())
          return "the loop's counter " + nameOf(vd) + " " + why;
        if (vd->hasInit())
          if (std::string why = deviceEvaluable(vd->getInit(), refs); !why.empty())
            return "the loop's initialisation cannot be evaluated on the device: " + why;
        s.inside.insert(vd);
      }
    } else if (auto *e = dyn_cast<Expr>(init)) {
      std::vector<const VarDecl *> initAssigned, initRefs;
      if (std::string why = replayable(e, initAssigned, initRefs); !why.empty())
        return "the loop's initialisation cannot be evaluated on the device: " + why;
      // A counter that the initialisation sets without reading it is a
      // local of the kernel (its value before the loop does not matter).
      for (const VarDecl *v : initAssigned)
        if (std::find(initRefs.begin(), initRefs.end(), v) == initRefs.end())
          s.locals.push_back(v);
      refs.insert(refs.end(), initRefs.begin(), initRefs.end());
    } else {
      return "the loop's initialisation is not a declaration or an expression";
    }
  }
  std::vector<const VarDecl *> condRefs;
  if (std::string why = deviceEvaluable(s.loop->getCond(), condRefs); !why.empty())
    return "the loop's condition cannot be evaluated on the device: " + why;
  if (s.loop->getConditionVariable())
    return "the loop's condition declares a variable";
  refs.insert(refs.end(), condRefs.begin(), condRefs.end());
  std::vector<const VarDecl *> incAssigned;
  if (const Expr *inc = s.loop->getInc())
    if (std::string why = replayable(inc, incAssigned, refs); !why.empty())
      return "the loop's increment cannot be evaluated on the device: " + why;
  s.counters.insert(incAssigned.begin(), incAssigned.end());
  // What changes in the loop: everything assigned in it (declared before).
  std::vector<const VarDecl *> all;
  assignedIn(s.loop, all);
  for (const VarDecl *v : all)
    if (!s.inside.count(v))
      s.carried.insert(v);
  // 5. The trip count is known on entry: the condition reads only the
  //    counters (assigned by the increment alone) and values that the loop
  //    does not change.
  std::map<const VarDecl *, const Stmt *> bodyAssigns;
  for (size_t i = 0; i < s.stmts.size(); ++i) {
    std::vector<const VarDecl *> a;
    assignedIn(s.stmts[i], a);
    for (const VarDecl *v : a)
      bodyAssigns.emplace(v, s.stmts[i]);
  }
  for (const VarDecl *v : condRefs) {
    auto it = bodyAssigns.find(v);
    if (it != bodyAssigns.end())
      return "the trip count is not known on entry: the condition reads " + nameOf(v) +
             ", which line " + lineOf(ast, it->second) + " assigns in the loop body";
    if (s.carried.count(v) && !s.counters.count(v))
      return "the trip count is not known on entry: the condition reads " + nameOf(v) +
             ", which the loop assigns";
  }
  for (const VarDecl *v : s.counters)
    if (auto it = bodyAssigns.find(v); it != bodyAssigns.end())
      return "the trip count is not known on entry: the counter " + nameOf(v) + " is assigned " +
             "in the loop body (line " + lineOf(ast, it->second) + ")";
  // 6. Each launch: a kernel whose body can be a phase, arguments the
  //    device can evaluate, a configuration and a stream that the loop does
  //    not change.
  auto changes = [&](const std::vector<const VarDecl *> &r) -> const VarDecl * {
    for (const VarDecl *v : r)
      if (s.carried.count(v) || s.inside.count(v))
        return v;
    return nullptr;
  };
  for (size_t pi = 0; pi < s.phases.size(); ++pi) {
    Phase &p = s.phases[pi];
    if (std::string why = launchProblem(ctx, s, p.id, p.call); !why.empty())
      return why;
    std::string at = "launch #" + std::to_string(p.id) + ": ";
    p.kernel = p.call->getDirectCallee()->getDefinition();
    for (unsigned a = 0; a < p.call->getNumArgs(); ++a) {
      std::vector<const VarDecl *> r;
      if (std::string why = deviceEvaluable(p.call->getArg(a), r); !why.empty())
        return at + "argument " + std::to_string(a) + " cannot be evaluated on the device: " + why;
      if (std::string why = typeProblem(p.kernel->getParamDecl(a)->getType()); !why.empty())
        return at + "parameter " + nameOf(p.kernel->getParamDecl(a)) + " " + why;
      p.varies.push_back(changes(r) != nullptr);
      // What the device evaluates: an argument that changes, or a variable
      // (passed by its name); other arguments are evaluated once on the host.
      if (p.varies.back() || localVar(p.call->getArg(a))) {
        std::vector<const VarDecl *> &into =
            stmtRefs[std::find(s.phaseOf.begin(), s.phaseOf.end(), int(pi)) - s.phaseOf.begin()];
        into.insert(into.end(), r.begin(), r.end());
      }
    }
    const CallExpr *cfg = p.call->getConfig();
    for (unsigned c = 0; c < cfg->getNumArgs() && c < 4; ++c) {
      if (isa<CXXDefaultArgExpr>(cfg->getArg(c)))
        continue;
      std::vector<const VarDecl *> r;
      if (c < 2)
        if (std::string why = deviceEvaluable(cfg->getArg(c), r); !why.empty())
          return at + "its configuration is not a plain expression: " + why;
      if (cfg->getArg(c)->HasSideEffects(ast, /*IncludePossibleEffects=*/false))
        return at + "its configuration has side effects";
      if (c == 3) { // the stream: any expression the loop does not change
        forEachStmt(cfg->getArg(c), [&](const Stmt *x) {
          if (auto *dre = dyn_cast<DeclRefExpr>(x))
            if (auto *vd = dyn_cast<VarDecl>(dre->getDecl()))
              r.push_back(vd);
        });
      }
      if (const VarDecl *v = changes(r))
        return at + "its " +
               (c == 0   ? "grid"
                : c == 1 ? "block"
                : c == 2 ? "shared memory"
                         : "stream") +
               " changes in the loop (it reads " + nameOf(v) + ")";
    }
    p.grid = spelled(ast, cfg->getArg(0)->IgnoreUnlessSpelledInSource());
    p.block = spelled(ast, cfg->getArg(1)->IgnoreUnlessSpelledInSource());
    std::string stream = cfg->getNumArgs() > 3 && !isa<CXXDefaultArgExpr>(cfg->getArg(3))
                             ? spelled(ast, cfg->getArg(3)->IgnoreUnlessSpelledInSource())
                             : "";
    if (isDefaultStream(stream))
      stream = "";
    if (pi == 0)
      s.stream = stream;
    else if (stream != s.stream)
      return "the launches use different streams";
  }
  // 7. The kernel's parameters: the host variables the device reads, each
  //    once by its own name (the kernel declares them as parameters).
  for (const std::vector<const VarDecl *> &r : stmtRefs)
    refs.insert(refs.end(), r.begin(), r.end());
  std::set<std::string> names;
  for (const VarDecl *v : refs) {
    if (s.inside.count(v) || std::find(s.locals.begin(), s.locals.end(), v) != s.locals.end() ||
        std::find(s.captured.begin(), s.captured.end(), v) != s.captured.end())
      continue;
    if (!names.insert(v->getNameAsString()).second)
      return "two host variables named " + nameOf(v) + " are read in the loop";
    s.captured.push_back(v);
  }
  // A parameter of that name would hide a global or function the kernels'
  // bodies use.
  for (const Phase &p : s.phases) {
    std::string clash;
    forEachStmt(p.kernel->getBody(), [&](const Stmt *x) {
      auto *dre = dyn_cast<DeclRefExpr>(x);
      if (!dre || !clash.empty())
        return;
      const ValueDecl *d = dre->getDecl();
      auto *vd = dyn_cast<VarDecl>(d);
      if ((vd && vd->hasLocalStorage()) || isa<ParmVarDecl>(d))
        return;
      if (names.count(d->getNameAsString()))
        clash = d->getNameAsString();
    });
    if (!clash.empty())
      return "host variable '" + clash + "' has the name of a global that kernel '" +
             p.kernel->getNameAsString() + "' uses";
  }
  return "";
}

// ---- form=owner: every element stays with its thread ----

/// The pointer variables that the loop's replayed statements exchange
/// (cycles of the permutation one iteration applies), or why the pointers
/// change otherwise.
std::string exchangeGroups(TransformContext &ctx, const Shape &s,
                           std::vector<std::vector<const VarDecl *>> &groups) {
  ASTContext &ast = ctx.unit.ast();
  std::map<const VarDecl *, const VarDecl *> holds; // variable -> the pointer it started as
  VarSet pointers;
  for (const VarDecl *v : s.carried)
    if (v->getType()->isPointerType()) {
      pointers.insert(v);
      holds[v] = v;
    }
  auto valueOf = [&](const Expr *e) -> const VarDecl * {
    const VarDecl *v = localVar(e);
    if (!v)
      return nullptr;
    auto it = holds.find(v);
    return it == holds.end() ? nullptr : it->second;
  };
  for (size_t i = 0; i < s.stmts.size(); ++i) {
    if (s.kinds[i] != Kind::Replay)
      continue;
    const Stmt *st = stripCleanups(s.stmts[i]);
    std::string at = "line " + lineOf(ast, st) + " ";
    if (auto *ds = dyn_cast<DeclStmt>(st)) {
      for (const Decl *d : ds->decls())
        if (auto *vd = dyn_cast<VarDecl>(d); vd && vd->getType()->isPointerType())
          holds[vd] = vd->hasInit() ? valueOf(vd->getInit()) : nullptr;
      continue;
    }
    if (const CallExpr *sw = swapCall(st)) {
      const VarDecl *a = localVar(sw->getArg(0)), *b = localVar(sw->getArg(1));
      if (a->getType()->isPointerType())
        std::swap(holds[a], holds[b]);
      continue;
    }
    std::vector<const VarDecl *> a;
    assignedIn(st, a);
    for (const VarDecl *v : a) {
      if (!v->getType()->isPointerType())
        continue;
      auto *b = dyn_cast<BinaryOperator>(cast<Expr>(st)->IgnoreParens());
      if (b && b->getOpcode() == BO_Assign && localVar(b->getLHS()) == v)
        holds[v] = valueOf(b->getRHS());
      else
        holds[v] = nullptr;
    }
  }
  std::map<const VarDecl *, const VarDecl *> next; // where each pointer's value goes
  for (const VarDecl *p : pointers) {
    const VarDecl *from = holds[p];
    if (!from)
      return nameOf(p) + " changes in the loop other than by exchanging buffers";
    if (next.count(from))
      return nameOf(p) + " and another pointer end the iteration with the same buffer";
    next[from] = p;
  }
  std::set<const VarDecl *> done;
  for (const VarDecl *p : pointers) {
    if (done.count(p) || next[p] == p)
      continue;
    std::vector<const VarDecl *> cycle;
    for (const VarDecl *q = p; !done.count(q); q = next[q]) {
      done.insert(q);
      cycle.push_back(q);
    }
    groups.push_back(cycle);
  }
  return "";
}

/// Whether a group of exchanged pointers holds distinct allocations: each
/// a local initialised by an allocation (or given one by cudaMalloc), and
/// written nowhere in the function but by this loop's replayed statements.
bool distinctAllocations(TransformContext &ctx, const Shape &s,
                         const std::vector<const VarDecl *> &group) {
  ASTContext &ast = ctx.unit.ast();
  const SourceManager &sm = ast.getSourceManager();
  const VarSet &fresh = freshAllocations(ctx, s.host);
  std::vector<CharSourceRange> replayed;
  for (size_t i = 0; i < s.stmts.size(); ++i)
    if (s.kinds[i] == Kind::Replay)
      replayed.push_back(statementRange(ast, s.stmts[i]));
  auto inReplayed = [&](SourceLocation l) {
    l = sm.getFileLoc(l);
    for (const CharSourceRange &r : replayed)
      if (r.isValid() && !sm.isBeforeInTranslationUnit(l, r.getBegin()) &&
          sm.isBeforeInTranslationUnit(l, r.getEnd()))
        return true;
    return false;
  };
  for (const VarDecl *m : group) {
    if (fresh.count(m))
      continue;
    if (isa<ParmVarDecl>(m) || !m->hasLocalStorage())
      return false;
    if (m->hasInit()) {
      auto *ce = dyn_cast<CallExpr>(m->getInit()->IgnoreParenCasts());
      if (!ce || !StringRef(calleeName(ce)).contains_insensitive("alloc"))
        return false;
    }
    bool ok = true;
    forEachStmt(s.host->getBody(), [&](const Stmt *x) {
      auto *dre = dyn_cast<DeclRefExpr>(x);
      if (!ok || !dre || dre->getDecl() != m)
        return;
      const Stmt *p = parentStmt(ast, dre);
      while (p && isa<ParenExpr>(p))
        p = parentStmt(ast, p);
      if (auto *ic = dyn_cast_or_null<ImplicitCastExpr>(p);
          ic && ic->getCastKind() == CK_LValueToRValue)
        return; // a read
      if (auto *b = dyn_cast_or_null<BinaryOperator>(p); b && b->getOpcode() == BO_Assign &&
                                                         localVar(b->getLHS()) == m &&
                                                         inReplayed(b->getBeginLoc()))
        return;
      if (auto *c = dyn_cast_or_null<CallExpr>(p); c && swapCall(c) && inReplayed(c->getBeginLoc()))
        return;
      if (auto *u = dyn_cast_or_null<UnaryOperator>(p); u && u->getOpcode() == UO_AddrOf) {
        const Stmt *q = parentStmt(ast, u);
        while (q && (isa<CastExpr>(q) || isa<ParenExpr>(q)))
          q = parentStmt(ast, q);
        auto *c = dyn_cast_or_null<CallExpr>(q);
        StringRef n = c ? StringRef(calleeName(c)) : "";
        if (n.starts_with("cudaMalloc") || n == "cudaHostAlloc")
          return;
      }
      ok = false;
    });
    if (!ok)
      return false;
  }
  return true;
}

/// Why form=owner is not legal ("" when it is): the launches share one
/// configuration, and every element that one launch writes and another
/// launch, or the same one in the next iteration, touches is touched by the
/// same thread (the buffers a swap exchanges counted as one).
std::string ownerProblem(TransformContext &ctx, const Shape &s) {
  const ProgramModel &m = ctx.model();
  for (const Phase &p : s.phases)
    if (p.grid != s.phases[0].grid || p.block != s.phases[0].block)
      return "launch #" + std::to_string(p.id) + " has another configuration (<<<" + p.grid + ", " +
             p.block + ">>> vs <<<" + s.phases[0].grid + ", " + s.phases[0].block + ">>>)";
  std::vector<std::vector<const VarDecl *>> groups;
  if (std::string why = exchangeGroups(ctx, s, groups); !why.empty())
    return why;
  std::map<const VarDecl *, unsigned> groupOf;
  std::vector<std::string> groupName;
  std::vector<bool> groupDistinct;
  for (const auto &g : groups) {
    std::string n;
    for (const VarDecl *v : g) {
      groupOf[v] = unsigned(groupName.size());
      n += (n.empty() ? "" : "|") + v->getNameAsString();
    }
    groupName.push_back(n);
    groupDistinct.push_back(distinctAllocations(ctx, s, g));
  }
  const VarSet &fresh = freshAllocations(ctx, s.host);
  auto distinct = [&](const VarDecl *v) {
    auto it = groupOf.find(v);
    return it == groupOf.end() ? fresh.count(v) > 0 : bool(groupDistinct[it->second]);
  };
  auto same = [&](const VarDecl *a, const VarDecl *b) {
    if (a == b)
      return true;
    auto ia = groupOf.find(a), ib = groupOf.find(b);
    return ia != groupOf.end() && ib != groupOf.end() && ia->second == ib->second;
  };
  // The launches with the exchanged buffers under one name each.
  ProgramModel unified;
  for (const Phase &p : s.phases) {
    LaunchSite l = m.launches[p.id];
    unified.kernels.push_back(m.kernels[l.kernelIndex]);
    l.kernelIndex = int(unified.kernels.size() - 1);
    l.id = unsigned(unified.launches.size());
    for (unsigned a = 0; a < p.call->getNumArgs() && a < l.args.size(); ++a) {
      const VarDecl *v = pointerBaseVar(p.call->getArg(a));
      auto it = v ? groupOf.find(v) : groupOf.end();
      if (it == groupOf.end())
        continue;
      if (l.args[a] == l.argBuffers[a])
        l.args[a] = groupName[it->second];
      l.argBuffers[a] = groupName[it->second];
    }
    unified.launches.push_back(l);
  }
  for (size_t i = 0; i < s.phases.size(); ++i)
    for (size_t j = i; j < s.phases.size(); ++j) {
      const Phase &a = s.phases[i], &b = s.phases[j];
      const Kernel &ka = m.kernels[m.launches[a.id].kernelIndex];
      const Kernel &kb = m.kernels[m.launches[b.id].kernelIndex];
      std::string pair =
          i == j ? "launch #" + std::to_string(a.id) + " and its next iteration"
                 : "launches #" + std::to_string(a.id) + " and #" + std::to_string(b.id);
      // Different variables must be distinct allocations.
      for (auto [w, kw, o, ko] : {std::tuple{&a, &ka, &b, &kb}, std::tuple{&b, &kb, &a, &ka}}) {
        for (const MemAccess &x : kw->accesses) {
          if (x.kind != AccessKind::Write)
            continue;
          if (x.paramIndex < 0)
            return "launch #" + std::to_string(w->id) + " writes memory the model cannot name";
          const VarDecl *vw = pointerBaseVar(w->call->getArg(x.paramIndex));
          if (!vw)
            return "launch #" + std::to_string(w->id) +
                   ": a written pointer argument is not a plain variable";
          for (const MemAccess &y : ko->accesses) {
            if (y.paramIndex < 0)
              return "launch #" + std::to_string(o->id) + " reads memory the model cannot name";
            const VarDecl *vo = pointerBaseVar(o->call->getArg(y.paramIndex));
            if (!vo)
              return "launch #" + std::to_string(o->id) +
                     ": a pointer argument is not a plain variable";
            if (!same(vw, vo) && !(distinct(vw) && distinct(vo)))
              return pair + ": " + nameOf(vw) + " and " + nameOf(vo) +
                     " may be the same buffer (not both distinct allocations)";
          }
        }
      }
      LaunchDependence dep = analyzeLaunchPair(unified, unsigned(i), unsigned(j), ctx.mlir);
      for (const BufferDependence &bd : dep.buffers)
        if (bd.result != DependenceResult::Disjoint && bd.result != DependenceResult::SameThread)
          return pair + " share '" + bd.buffer + "' not element by element (" +
                 toString(bd.result) + (bd.detail.empty() ? "" : ": " + bd.detail) +
                 "): a barrier must separate them";
    }
  return "";
}

/// The threads a phase's launch runs, when its grid and block are constants.
std::optional<unsigned long long> constantThreads(TransformContext &ctx, const Phase &p) {
  auto g = constantCount(ctx.unit.ast(), launchConfigArg(ctx, p.id, 0));
  auto b = constantBlockSize(ctx, p.id);
  if (!g || !b)
    return std::nullopt;
  return *g * *b;
}

/// Why a form is not legal on the loop ("" when it is).
std::string formProblem(TransformContext &ctx, const Shape &s, Form f) {
  if (f == Form::Owner)
    return ownerProblem(ctx, s);
  for (const Phase &p : s.phases) {
    std::set<const FunctionDecl *> seen;
    if (std::string callee = calleeThat(p.kernel, 3, seen, readsIndices); !callee.empty())
      return "kernel '" + p.kernel->getNameAsString() + "' calls '" + callee +
             "', which reads the thread or block index itself (it would see the persistent "
             "kernel's threads)";
  }
  if (f == Form::Block)
    for (const Phase &p : s.phases)
      if (auto n = constantThreads(ctx, p); n && *n > kMaxBlockThreads)
        return "launch #" + std::to_string(p.id) + " runs " + std::to_string(*n) +
               " threads, more than one block holds (1024)";
  return "";
}

std::vector<Form> legalForms(TransformContext &ctx, const Shape &s) {
  std::vector<Form> out;
  for (Form f : {Form::Owner, Form::Grid, Form::Block})
    if (formProblem(ctx, s, f).empty())
      out.push_back(f);
  return out;
}

std::optional<Form> parseForm(const std::string &v) {
  if (v == "owner")
    return Form::Owner;
  if (v == "grid")
    return Form::Grid;
  if (v == "block")
    return Form::Block;
  return std::nullopt;
}

} // namespace

std::string Persistent::legality(TransformContext &ctx, Target t) const {
  Shape s;
  if (std::string why = shapeOf(ctx, t.loop, s); !why.empty())
    return why;
  std::string owner = formProblem(ctx, s, Form::Owner);
  if (owner.empty())
    return "";
  std::string grid = formProblem(ctx, s, Form::Grid);
  if (grid.empty())
    return "";
  return "form=grid: " + grid + "; form=owner: " + owner;
}

/// Whether every launch of the loop is known to run at most one block's
/// threads. The block form runs a launch's threads on one block in a
/// grid-stride loop: on the H200 it was 6x to 250x slower than the original
/// on loops whose grids are sized at run time (docs/results/
/// issue18-transforms-h200.md), so it is offered only where the launch is
/// known to fit; an explicit plan may still ask for it.
static bool fitsOneBlock(TransformContext &ctx, const Shape &s) {
  return std::all_of(s.phases.begin(), s.phases.end(), [&](const Phase &p) {
    auto n = constantThreads(ctx, p);
    return n && *n <= kMaxBlockThreads;
  });
}

std::vector<ParamSpace> Persistent::space(TransformContext &ctx, Target t) const {
  Shape s;
  if (!shapeOf(ctx, t.loop, s).empty())
    return {};
  ParamSpace form{"form", {}};
  for (Form f : legalForms(ctx, s))
    if (f != Form::Block || fitsOneBlock(ctx, s))
      form.values.push_back(formName(f));
  return {form};
}

std::string Persistent::checkParams(TransformContext &ctx, Target t, const PlanStep &step) const {
  for (const auto &[key, value] : step.params) {
    if (key != "form")
      return "unknown parameter '" + key + "'";
    std::optional<Form> f = parseForm(value);
    if (!f)
      return "parameter form=" + value + " is not one of {owner, grid, block}";
    Shape s;
    if (std::string why = shapeOf(ctx, t.loop, s); !why.empty())
      return why;
    if (std::string why = formProblem(ctx, s, *f); !why.empty())
      return "form=" + value + ": " + why;
  }
  return "";
}

llvm::Error Persistent::apply(TransformContext &ctx, Target t, const PlanStep &step) const {
  ASTContext &ast = ctx.unit.ast();
  Shape s;
  if (std::string why = shapeOf(ctx, t.loop, s); !why.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", why.c_str());
  std::vector<Form> forms = legalForms(ctx, s);
  if (forms.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "no form is legal");
  Form form = forms.front();
  if (std::optional<std::string> v = step.param("form"))
    form = *parseForm(*v);
  std::string name = freshName(ctx, "cudal1Persistent");
  const VarSet &fresh = freshAllocations(ctx, s.host);

  // The kernel's parameters: the host variables the device reads, then the
  // invariant arguments (evaluated once on the host), then the phases'
  // configurations (block and grid forms).
  std::vector<std::string> params, hostArgs;
  for (const VarDecl *v : s.captured) {
    params.push_back(typeText(ast, v->getType()) + " " + v->getNameAsString());
    hostArgs.push_back(v->getNameAsString());
  }
  std::vector<std::vector<std::string>> argText(s.phases.size());
  for (size_t pi = 0; pi < s.phases.size(); ++pi) {
    const Phase &p = s.phases[pi];
    for (unsigned a = 0; a < p.call->getNumArgs(); ++a) {
      const Expr *arg = p.call->getArg(a);
      std::string text = spelled(ast, arg);
      const VarDecl *v = localVar(arg);
      // A variable is passed by its name (it is a parameter of the kernel),
      // an argument that changes is evaluated on the device.
      if (p.varies[a] || v) {
        argText[pi].push_back(text);
        continue;
      }
      std::string pn = "cudal1Arg" + std::to_string(pi) + "_" + std::to_string(a);
      params.push_back(typeText(ast, p.kernel->getParamDecl(a)->getType()) + " " + pn);
      hostArgs.push_back(text);
      argText[pi].push_back(pn);
    }
  }
  // One grid and block per distinct configuration.
  std::vector<std::pair<std::string, std::string>> configs;
  std::vector<unsigned> configOf;
  for (const Phase &p : s.phases) {
    auto it = std::find(configs.begin(), configs.end(), std::make_pair(p.grid, p.block));
    configOf.push_back(unsigned(it - configs.begin()));
    if (it == configs.end())
      configs.push_back({p.grid, p.block});
  }
  std::string hostDecl, extent;
  if (form != Form::Owner)
    for (size_t c = 0; c < configs.size(); ++c) {
      std::string g = "cudal1G" + std::to_string(c), b = "cudal1B" + std::to_string(c);
      params.push_back("dim3 " + g);
      params.push_back("dim3 " + b);
      hostArgs.push_back(g);
      hostArgs.push_back(b);
      hostDecl += (hostDecl.empty() ? "const dim3 " : ", ") + g + " = dim3(" + configs[c].first +
                  "), " + b + " = dim3(" + configs[c].second + ")";
      extent += (extent.empty() ? "" : ", ") + std::string("{") + g + ", " + b + "}";
    }

  // The kernel.
  const std::string in1 = "  ", in2 = "    ", in3 = "      ";
  std::string k = "// cudal1 persistent: " + name + " runs host loop #" + std::to_string(t.loop) +
                  " of " + s.host->getNameAsString() + " on the device (form=" + formName(form) +
                  ")\n__global__ void " + name + "(";
  for (size_t i = 0; i < params.size(); ++i)
    k += (i ? ", " : "") + params[i];
  k += ") {\n";
  std::string barrier;
  if (form == Form::Grid) {
    k += in1 + "cooperative_groups::grid_group cudal1Grid = cooperative_groups::this_grid();\n";
    barrier = "cudal1Grid.sync();";
  } else if (form == Form::Block) {
    barrier = "__syncthreads();";
  }
  if (form == Form::Grid)
    k += in1 +
         "const unsigned long long cudal1Rank = (unsigned long long)blockIdx.x * "
         "blockDim.x + threadIdx.x;\n" +
         in1 +
         "const unsigned long long cudal1Threads = (unsigned long long)gridDim.x * "
         "blockDim.x;\n";
  else if (form == Form::Block)
    k += in1 + "const unsigned long long cudal1Rank = threadIdx.x, cudal1Threads = blockDim.x;\n";
  SourceLocation headerEnd = s.loop->getRParenLoc();
  std::string header = rangeText(
      ast,
      Lexer::makeFileCharRange(CharSourceRange::getTokenRange(s.loop->getBeginLoc(), headerEnd),
                               ast.getSourceManager(), ast.getLangOpts()));
  for (const VarDecl *v : s.locals)
    k += in1 + typeText(ast, v->getType()) + " " + v->getNameAsString() + ";\n";
  k += in1 + header + " {\n";
  std::vector<size_t> region; // phases since the last barrier
  bool hostBetween = false;
  for (size_t i = 0; i < s.stmts.size(); ++i) {
    if (s.kinds[i] == Kind::Replay) {
      const Stmt *st = s.stmts[i];
      if (const CallExpr *sw = swapCall(st)) {
        std::string a = spelled(ast, sw->getArg(0)), b = spelled(ast, sw->getArg(1));
        k += in2 + "{ auto cudal1Swap = " + a + "; " + a + " = " + b + "; " + b +
             " = cudal1Swap; }\n";
      } else {
        k += in2 + stmtText(ast, st) + (isa<DeclStmt>(st) ? "" : ";") + "\n";
      }
      hostBetween = true;
      continue;
    }
    if (s.kinds[i] != Kind::Launch)
      continue;
    size_t pi = size_t(s.phaseOf[i]);
    const Phase &p = s.phases[pi];
    // A barrier before this phase unless each element it shares with the
    // phases since the last one stays with its thread.
    if (form != Form::Owner && !region.empty()) {
      bool share = !hostBetween;
      for (size_t r : region)
        share = share && configOf[r] == configOf[pi] &&
                launchConflict(ctx, s.phases[r].id, p.id, fresh, /*sameThreadOk=*/true).empty();
      if (!share) {
        k += in2 + barrier + "\n";
        region.clear();
      }
    }
    hostBetween = false;
    region.push_back(pi);
    std::string lambdaParams, call;
    for (unsigned a = 0; a < p.kernel->getNumParams(); ++a) {
      lambdaParams += (a ? ", " : "") + declText(ast, p.kernel->getParamDecl(a));
      call += (a ? ", " : "") + argText[pi][a];
    }
    std::string body = stmtText(ast, p.kernel->getBody());
    std::string comment =
        in2 + "// " + p.kernel->getNameAsString() + "<<<" + p.grid + ", " + p.block + ">>>\n";
    if (form == Form::Owner) {
      k += comment + in2 + "[](" + lambdaParams + ") " + body + "(" + call + ");\n";
      continue;
    }
    std::string g = "cudal1G" + std::to_string(configOf[pi]);
    std::string b = "cudal1B" + std::to_string(configOf[pi]);
    k += comment + in2 + "for (unsigned long long cudal1V = cudal1Rank; cudal1V < " +
         "cudal1PersistentCount(" + g + ", " + b + "); cudal1V += cudal1Threads) {\n" + in3 +
         "uint3 cudal1Thread, cudal1Block;\n" + in3 + "cudal1PersistentCoords(cudal1V, " + g +
         ", " + b + ", cudal1Thread, cudal1Block);\n" + in3 +
         "[](uint3 threadIdx, uint3 blockIdx, dim3 blockDim, dim3 gridDim" +
         (lambdaParams.empty() ? "" : ", " + lambdaParams) + ") " + body +
         "(cudal1Thread, cudal1Block, " + b + ", " + g + (call.empty() ? "" : ", " + call) +
         ");\n" + in2 + "}\n";
  }
  if (form != Form::Owner)
    k += in2 + barrier + "\n";
  k += in1 + "}\n}\n\n";
  // The helper first, then the kernel (each once above the host function).
  ctx.insertHelperBefore(s.host, name, k);
  ctx.insertHelperBefore(s.host, "Cudal1Persistent", runtime::persistent);

  // The launch, before the loop; the loop keeps its host arithmetic.
  std::string stream = s.stream.empty() ? "0" : s.stream;
  std::string args;
  for (const std::string &a : hostArgs)
    args += ", " + a;
  std::string indent = indentAt(ast, s.loop->getBeginLoc());
  std::string launch;
  if (form == Form::Owner)
    launch = "cudal1PersistentOwner(" + name + ", " + stream + ", dim3(" + configs[0].first +
             "), dim3(" + configs[0].second + ")" + args + ");";
  else
    launch = std::string(form == Form::Grid ? "cudal1PersistentGrid(" : "cudal1PersistentBlock(") +
             name + ", " + stream + ", {" + extent + "}" + args + ");";
  // Whether it ran (the helper's cost rule may decline): the loop's own
  // launches and syncs run only where it did not.
  std::string flag = freshName(ctx, "cudal1OnDevice");
  std::string text = "bool " + flag + ";\n" + indent +
                     "{ // cudal1 persistent: the launches of loop #" + std::to_string(t.loop) +
                     " run in " + name + "\n";
  if (!hostDecl.empty())
    text += indent + "  " + hostDecl + ";\n";
  text += indent + "  " + flag + " = " + launch + "\n";
  if (s.firstSync)
    text += indent + "  if (" + flag + ")\n" + indent + "    " + stmtText(ast, s.firstSync) + ";\n";
  text += indent + "}\n" + indent;
  ctx.rewriter.InsertTextBefore(s.loop->getBeginLoc(), text);
  for (size_t i = 0; i < s.stmts.size(); ++i)
    if (s.kinds[i] == Kind::Launch || s.kinds[i] == Kind::Sync)
      ctx.rewriter.InsertTextBefore(statementRange(ast, s.stmts[i]).getBegin(),
                                    "if (!" + flag + ") ");
  return llvm::Error::success();
}
