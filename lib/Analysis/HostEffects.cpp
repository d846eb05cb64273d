// What host code does with device memory, as the program-level passes ask
// it: which variables hold device memory, whether a statement touches it or
// only checks errors, which allocations are distinct, what a kernel hides
// from the dependence test. Questions only; the edits are lib/Rewrite's.
#include "cudal1/Analysis/HostEffects.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>

using namespace clang;
using namespace cudal1;

std::string cudal1::calleeName(const CallExpr *ce) {
  if (const FunctionDecl *fd = ce->getDirectCallee())
    if (fd->getDeclName().isIdentifier())
      return fd->getName().str();
  return "";
}

const VarDecl *cudal1::pointerBaseVar(const Expr *e) {
  if (!e)
    return nullptr;
  e = e->IgnoreParenCasts();
  if (auto *dre = dyn_cast<DeclRefExpr>(e))
    return dyn_cast<VarDecl>(dre->getDecl());
  if (auto *bo = dyn_cast<BinaryOperator>(e)) {
    if (bo->isAdditiveOp()) {
      if (bo->getLHS()->getType()->isPointerType())
        return pointerBaseVar(bo->getLHS());
      if (bo->getRHS()->getType()->isPointerType())
        return pointerBaseVar(bo->getRHS());
    }
    return nullptr;
  }
  if (auto *uo = dyn_cast<UnaryOperator>(e); uo && uo->getOpcode() == UO_AddrOf) {
    const Expr *sub = uo->getSubExpr()->IgnoreParenCasts();
    if (auto *ase = dyn_cast<ArraySubscriptExpr>(sub))
      return pointerBaseVar(ase->getBase());
    return pointerBaseVar(sub);
  }
  return nullptr;
}

namespace {

bool refersTo(const Stmt *s, const VarSet &vars) {
  if (!s)
    return false;
  if (auto *dre = dyn_cast<DeclRefExpr>(s))
    if (auto *vd = dyn_cast<VarDecl>(dre->getDecl()); vd && vars.count(vd))
      return true;
  for (const Stmt *c : s->children())
    if (refersTo(c, vars))
      return true;
  return false;
}

class BufferCollector : public RecursiveASTVisitor<BufferCollector> {
public:
  VarSet buffers;
  std::vector<std::pair<const VarDecl *, const Expr *>> assigns; // pointer var ← expr

  bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *kc) {
    for (const Expr *a : kc->arguments())
      if (a->getType()->isPointerType())
        if (const VarDecl *vd = pointerBaseVar(a))
          buffers.insert(vd);
    return true;
  }
  bool VisitCallExpr(CallExpr *ce) {
    llvm::StringRef n = calleeName(ce);
    if ((n.starts_with("cudaMalloc") || n == "cudaHostAlloc") && ce->getNumArgs())
      if (const VarDecl *vd = pointerBaseVar(ce->getArg(0)))
        buffers.insert(vd);
    return true;
  }
  bool VisitVarDecl(VarDecl *vd) {
    if (vd->getType()->isPointerType() && vd->hasInit())
      assigns.push_back({vd, vd->getInit()});
    return true;
  }
  bool VisitBinaryOperator(BinaryOperator *bo) {
    if (bo->getOpcode() == BO_Assign)
      if (auto *dre = dyn_cast<DeclRefExpr>(bo->getLHS()->IgnoreParenImpCasts()))
        if (auto *vd = dyn_cast<VarDecl>(dre->getDecl()); vd && vd->getType()->isPointerType())
          assigns.push_back({vd, bo->getRHS()});
    return true;
  }
};

const llvm::StringSet<> &clockCalls() {
  static const llvm::StringSet<> s = {
      "now",     "clock",         "gettimeofday", "clock_gettime",
      "time",    "omp_get_wtime", "MPI_Wtime",    "QueryPerformanceCounter",
      "__rdtsc", "rdtsc"};
  return s;
}

/// Whether argument i binds to a reference parameter (the pointer variable
/// itself is passed, not the memory it points to).
bool passedByReference(const CallExpr *ce, unsigned i) {
  const FunctionDecl *fd = ce->getDirectCallee();
  if (isa<CXXOperatorCallExpr>(ce) && fd && isa<CXXMethodDecl>(fd)) {
    if (i == 0)
      return true; // the object
    --i;
  }
  return fd && i < fd->getNumParams() && fd->getParamDecl(i)->getType()->isReferenceType();
}

bool inSystemHeader(const ASTContext &ctx, const Decl *d) {
  return ctx.getSourceManager().isInSystemHeader(d->getLocation());
}

class AccessFinder : public RecursiveASTVisitor<AccessFinder> {
public:
  AccessFinder(ASTContext &ctx, const VarSet &buffers, unsigned depth,
               std::set<const FunctionDecl *> &active)
      : ctx(ctx), buffers(buffers), depth(depth), active(active) {}
  std::string why;

  bool TraverseLambdaExpr(LambdaExpr *) { return true; } // not run here
  bool VisitUnaryOperator(UnaryOperator *uo) {
    if (uo->getOpcode() == UO_Deref)
      check(uo->getSubExpr());
    return why.empty();
  }
  bool VisitArraySubscriptExpr(ArraySubscriptExpr *ase) {
    check(ase->getBase());
    return why.empty();
  }
  bool VisitMemberExpr(MemberExpr *me) {
    if (me->isArrow())
      check(me->getBase());
    return why.empty();
  }
  bool VisitCallExpr(CallExpr *ce) {
    if (isa<CUDAKernelCallExpr>(ce))
      return true;
    std::string n = calleeName(ce);
    if (clockCalls().count(n)) {
      why = "reads a clock (" + n + ")";
      return false;
    }
    if (n == "cudaEventQuery" || n == "cudaStreamQuery" || n == "cudaEventElapsedTime") {
      why = "queries the device (" + n + ")";
      return false;
    }
    if (n == "cudaMemcpy" || n == "cudaMemcpyAsync" || n == "cudaMemcpy2D" ||
        n == "cudaMemcpy2DAsync" || n.rfind("cudaMemcpyFromSymbol", 0) == 0) {
      // The kind is the last argument but for the Async forms (then the one before).
      unsigned k = ce->getNumArgs() - (llvm::StringRef(n).ends_with("Async") ? 2 : 1);
      Expr::EvalResult r;
      bool toHost = n.rfind("cudaMemcpyFromSymbol", 0) == 0;
      if (k < ce->getNumArgs() && ce->getArg(k)->EvaluateAsInt(r, ctx)) {
        uint64_t kind = r.Val.getInt().getZExtValue();
        toHost |= kind == 2 /* DeviceToHost */ || kind == 4 /* Default */;
      } else {
        toHost = true;
      }
      if (toHost) {
        why = "copies device data to the host (" + n + ")";
        return false;
      }
      return true;
    }
    if (llvm::StringRef(n).starts_with("cuda"))
      return true;
    const FunctionDecl *fd = ce->getDirectCallee();
    const FunctionDecl *def = fd ? fd->getDefinition() : nullptr;
    if (def && def->hasBody() && !inSystemHeader(ctx, def) && depth < 3 && !active.count(def)) {
      // Look into the callee; its pointer parameters may be buffers.
      VarSet inner = deviceBuffers(ctx, def);
      for (const ParmVarDecl *p : def->parameters())
        if (p->getType()->isPointerType())
          inner.insert(p);
      active.insert(def);
      AccessFinder sub(ctx, inner, depth + 1, active);
      sub.TraverseStmt(def->getBody());
      active.erase(def);
      if (!sub.why.empty()) {
        why = "in " + def->getNameAsString() + ": " + sub.why;
        return false;
      }
      return true;
    }
    // A function we cannot see: a buffer passed by value may be read there
    // (a reference to the pointer variable, as std::swap takes, is not).
    for (unsigned i = 0; i < ce->getNumArgs(); ++i) {
      const Expr *a = ce->getArg(i);
      if (!a->getType()->isPointerType() || passedByReference(ce, i))
        continue;
      const VarDecl *vd = pointerBaseVar(a);
      if (!vd || !buffers.count(vd))
        continue;
      why = "passes device buffer '" + vd->getNameAsString() + "' to " +
            (n.empty() ? std::string("a function") : n);
      return false;
    }
    return true;
  }

private:
  ASTContext &ctx;
  const VarSet &buffers;
  unsigned depth;
  std::set<const FunctionDecl *> &active;

  void check(const Expr *base) {
    if (!why.empty())
      return;
    const VarDecl *vd = pointerBaseVar(base);
    if (vd && buffers.count(vd) && vd->getType()->isPointerType())
      why = "reads or writes device buffer '" + vd->getNameAsString() + "' on the host";
  }
};

const llvm::StringSet<> &errorCheckCalls() {
  static const llvm::StringSet<> s = {"cudaGetLastError",
                                      "cudaPeekAtLastError",
                                      "cudaGetErrorString",
                                      "cudaGetErrorName",
                                      "fprintf",
                                      "printf",
                                      "fputs",
                                      "puts",
                                      "exit",
                                      "abort",
                                      "_exit",
                                      "quick_exit",
                                      "__assert_fail",
                                      "__assert_rtn",
                                      "_assert",
                                      "fflush"};
  return s;
}

class ErrorCheckScan : public RecursiveASTVisitor<ErrorCheckScan> {
public:
  ErrorCheckScan(const SourceManager &sm, SourceRange within, const Stmt *wrapped)
      : sm(sm), within(within), wrapped(wrapped) {}
  bool ok = true;

  bool TraverseStmt(Stmt *s) {
    if (s && s == wrapped)
      return true;
    return RecursiveASTVisitor::TraverseStmt(s);
  }
  bool VisitCallExpr(CallExpr *ce) {
    if (isa<CUDAKernelCallExpr>(ce) || !errorCheckCalls().count(calleeName(ce)))
      ok = false;
    return ok;
  }
  bool VisitCXXConstructExpr(CXXConstructExpr *) {
    ok = false;
    return false;
  }
  bool VisitBinaryOperator(BinaryOperator *bo) {
    if (bo->isAssignmentOp())
      outer(bo->getLHS());
    return ok;
  }
  bool VisitUnaryOperator(UnaryOperator *uo) {
    if (uo->isIncrementDecrementOp())
      outer(uo->getSubExpr());
    return ok;
  }

private:
  const SourceManager &sm;
  SourceRange within;
  const Stmt *wrapped;

  /// Writing a variable declared outside the statement is more than a check.
  void outer(const Expr *lhs) {
    auto *dre = dyn_cast<DeclRefExpr>(lhs->IgnoreParenImpCasts());
    if (!dre) {
      ok = false;
      return;
    }
    SourceLocation d = sm.getExpansionLoc(dre->getDecl()->getLocation());
    SourceLocation b = sm.getExpansionLoc(within.getBegin());
    SourceLocation e = sm.getExpansionLoc(within.getEnd());
    if (sm.isBeforeInTranslationUnit(d, b) || sm.isBeforeInTranslationUnit(e, d))
      ok = false;
  }
};

} // namespace

VarSet cudal1::deviceBuffers(ASTContext &ctx, const FunctionDecl *fd) {
  BufferCollector c;
  if (!fd || !fd->getBody())
    return {};
  c.TraverseStmt(fd->getBody());
  // Aliases: pointers taken from a buffer are buffers too.
  for (bool grew = true; grew;) {
    grew = false;
    for (auto &[vd, e] : c.assigns)
      if (!c.buffers.count(vd) && refersTo(e, c.buffers)) {
        c.buffers.insert(vd);
        grew = true;
      }
  }
  return c.buffers;
}

std::string cudal1::hostAccessOfDeviceData(ASTContext &ctx, const Stmt *s, const VarSet &buffers) {
  std::set<const FunctionDecl *> active;
  AccessFinder f(ctx, buffers, 0, active);
  f.TraverseStmt(const_cast<Stmt *>(s));
  return f.why;
}

bool cudal1::isErrorCheck(ASTContext &ctx, const Stmt *s, const Stmt *wrapped) {
  if (isa<DeclStmt>(s))
    return false;
  ErrorCheckScan scan(ctx.getSourceManager(), s->getSourceRange(), wrapped);
  scan.TraverseStmt(const_cast<Stmt *>(s));
  return scan.ok;
}

const Stmt *cudal1::parentStmt(ASTContext &ctx, const Stmt *s) {
  auto parents = ctx.getParents(*s);
  // Through declarations: `T v = call();` has the call under a VarDecl.
  while (!parents.empty()) {
    if (const Stmt *p = parents[0].get<Stmt>())
      return p;
    const Decl *d = parents[0].get<Decl>();
    if (!d || isa<FunctionDecl>(d))
      return nullptr;
    parents = ctx.getParents(*d);
  }
  return nullptr;
}

bool cudal1::isDefaultStream(const std::string &text) {
  llvm::StringRef t = llvm::StringRef(text).trim();
  return t.empty() || t == "0" || t == "NULL" || t == "nullptr" || t == "cudaStreamLegacy" ||
         t == "cudaStreamPerThread" || t == "(cudaStream_t)0";
}

namespace {

/// Local pointer variables of `fd` that only ever hold fresh allocations:
/// initialised by nothing, null, `new` or a call whose callee's name contains
/// "alloc", assigned only such values, their address given only to
/// cudaMalloc*/cudaHostAlloc, and swapped (std::swap) only with each other.
class FreshVars : public RecursiveASTVisitor<FreshVars> {
public:
  FreshVars(ASTContext &ctx) : ctx(ctx) {}
  VarSet candidates;
  std::vector<std::pair<const VarDecl *, const VarDecl *>> swaps;

  static bool allocCall(ASTContext &ctx, const Expr *e) {
    e = e->IgnoreParenCasts();
    if (isa<CXXNewExpr>(e) || isa<CXXNullPtrLiteralExpr>(e) ||
        e->isNullPointerConstant(ctx, Expr::NPC_ValueDependentIsNotNull))
      return true;
    if (auto *ce = dyn_cast<CallExpr>(e))
      return llvm::StringRef(calleeName(ce)).contains_insensitive("alloc");
    return false;
  }
  void collect(const FunctionDecl *fd) {
    TraverseStmt(fd->getBody());
    // Swaps keep two fresh variables fresh; with anything else, neither is.
    for (bool changed = true; changed;) {
      changed = false;
      for (auto [a, b] : swaps)
        if (candidates.count(a) != candidates.count(b)) {
          candidates.erase(a);
          candidates.erase(b);
          changed = true;
        }
    }
    for (const VarDecl *vd : bad)
      candidates.erase(vd);
  }

  bool VisitVarDecl(VarDecl *vd) {
    if (!vd->hasLocalStorage() || isa<ParmVarDecl>(vd) || !vd->getType()->isPointerType())
      return true;
    if (!vd->hasInit() || allocCall(ctx, vd->getInit()))
      candidates.insert(vd);
    return true;
  }
  bool VisitBinaryOperator(BinaryOperator *bo) {
    if (bo->isAssignmentOp())
      if (const VarDecl *vd = var(bo->getLHS()))
        if (bo->getOpcode() != BO_Assign || !allocCall(ctx, bo->getRHS()))
          bad.insert(vd);
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator *uo) {
    if (uo->isIncrementDecrementOp())
      if (const VarDecl *vd = var(uo->getSubExpr()))
        bad.insert(vd);
    if (uo->getOpcode() != UO_AddrOf)
      return true;
    const VarDecl *vd = var(uo->getSubExpr());
    if (!vd)
      return true;
    // Its address may only go to an allocation call.
    const Stmt *p = parentStmt(ctx, uo);
    while (p && (isa<CastExpr>(p) || isa<ParenExpr>(p)))
      p = parentStmt(ctx, p);
    auto *ce = dyn_cast_or_null<CallExpr>(p);
    llvm::StringRef n = ce ? llvm::StringRef(calleeName(ce)) : "";
    if (!(n.starts_with("cudaMalloc") || n == "cudaHostAlloc"))
      bad.insert(vd);
    return true;
  }
  bool VisitCallExpr(CallExpr *ce) {
    const FunctionDecl *fd = ce->getDirectCallee();
    if (!fd)
      return true;
    std::vector<const VarDecl *> byRef;
    for (unsigned i = 0; i < ce->getNumArgs() && i < fd->getNumParams(); ++i)
      if (fd->getParamDecl(i)->getType()->isReferenceType() &&
          !fd->getParamDecl(i)->getType().getNonReferenceType().isConstQualified())
        if (const VarDecl *vd = var(ce->getArg(i)))
          byRef.push_back(vd);
    if (calleeName(ce) == "swap" && byRef.size() == 2) {
      swaps.push_back({byRef[0], byRef[1]});
      return true;
    }
    for (const VarDecl *vd : byRef)
      bad.insert(vd); // may be reassigned there
    return true;
  }

private:
  ASTContext &ctx;
  VarSet bad;
  static const VarDecl *var(const Expr *e) {
    if (auto *dre = dyn_cast<DeclRefExpr>(e->IgnoreParenImpCasts()))
      return dyn_cast<VarDecl>(dre->getDecl());
    return nullptr;
  }
};

} // namespace

std::string cudal1::hiddenEffects(const FunctionDecl *k) {
  if (!k)
    return "the kernel is not a named function";
  if (const FunctionDecl *def = k->getDefinition())
    k = def;
  if (!k->hasBody())
    return "the kernel's body is not in this file";
  for (const ParmVarDecl *p : k->parameters()) {
    QualType t = p->getType();
    if (!t->isPointerType() && !t->isScalarType())
      return "parameter '" + p->getNameAsString() +
             "' is passed by value as a struct (it may hold pointers)";
  }
  struct Globals : RecursiveASTVisitor<Globals> {
    std::string name;
    bool VisitDeclRefExpr(DeclRefExpr *dre) {
      if (auto *vd = dyn_cast<VarDecl>(dre->getDecl()))
        if (vd->hasGlobalStorage() && !vd->isStaticLocal() && !vd->getType().isConstQualified() &&
            !vd->hasAttr<CUDAConstantAttr>())
          name = vd->getNameAsString();
      return name.empty();
    }
  } g;
  g.TraverseStmt(k->getBody());
  if (!g.name.empty())
    return "the kernel uses global variable '" + g.name + "'";
  return "";
}

VarSet cudal1::freshAllocations(ASTContext &ctx, const FunctionDecl *fd) {
  FreshVars f(ctx);
  f.collect(fd);
  return f.candidates;
}

std::vector<const CallExpr *> cudal1::hostCopies(ASTContext &ctx) {
  struct Finder : RecursiveASTVisitor<Finder> {
    ASTContext &ctx;
    std::vector<const CallExpr *> found;
    explicit Finder(ASTContext &c) : ctx(c) {}
    bool shouldVisitTemplateInstantiations() const { return false; }
    bool VisitCallExpr(CallExpr *ce) {
      const SourceManager &sm = ctx.getSourceManager();
      if (calleeName(ce) == "cudaMemcpy" && sm.isInMainFile(sm.getFileLoc(ce->getBeginLoc())))
        found.push_back(ce);
      return true;
    }
  } f(ctx);
  for (Decl *d : ctx.getTranslationUnitDecl()->decls()) {
    const SourceManager &sm = ctx.getSourceManager();
    if (d->getLocation().isValid() && sm.isInMainFile(sm.getFileLoc(d->getLocation())))
      f.TraverseDecl(d);
  }
  const SourceManager &sm = ctx.getSourceManager();
  std::stable_sort(f.found.begin(), f.found.end(), [&](const CallExpr *a, const CallExpr *b) {
    return sm.isBeforeInTranslationUnit(sm.getFileLoc(a->getBeginLoc()),
                                        sm.getFileLoc(b->getBeginLoc()));
  });
  return f.found;
}
