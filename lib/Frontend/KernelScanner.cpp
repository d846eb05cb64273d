// Walks a kernel body: parameters, loops (with affine induction variables),
// global accesses with their normalized indices and guards, shared memory,
// barriers, atomics, device calls and operation counts.
//
// Normalized index text (the analysis parses it, docs/Analysis.md): integer
// constants, + - * / %, parentheses, and names: CUDA builtins (threadIdx.x),
// loop counters ($k0 is the iteration number of loop 0), scalar parameters
// and other thread-invariant names, and opaque values (?name) whose relation
// to the thread index is unknown. Locals assigned once are substituted.
#include "KernelScanner.h"
#include "cudal1/Frontend/Frontend.h"

#include "clang/AST/Attr.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

#include <functional>

using namespace clang;
using namespace cudal1;

namespace cudal1::frontend {

SourcePos position(const SourceManager &sm, SourceLocation loc) {
  SourcePos p;
  if (loc.isInvalid())
    return p;
  SourceLocation fileLoc = sm.getFileLoc(loc);
  PresumedLoc pl = sm.getPresumedLoc(fileLoc);
  if (pl.isInvalid())
    return p;
  p.file = pl.getFilename();
  // Another file than the one parsed (a header) by its absolute path: a
  // parse that loads the headers from a shared precompiled preamble
  // (SharedPreamble.h) knows them only so, and every parse must agree.
  if (sm.getFileID(fileLoc) != sm.getMainFileID() && !p.file.empty())
    p.file = absoluteLexicalPath(p.file);
  p.line = pl.getLine();
  p.col = pl.getColumn();
  return p;
}

std::string sourceText(const ASTContext &ctx, const Stmt *s) {
  if (!s)
    return "";
  const SourceManager &sm = ctx.getSourceManager();
  CharSourceRange r = Lexer::makeFileCharRange(CharSourceRange::getTokenRange(s->getSourceRange()),
                                               sm, ctx.getLangOpts());
  if (r.isValid()) {
    StringRef t = Lexer::getSourceText(r, sm, ctx.getLangOpts());
    if (!t.empty()) {
      // Collapse line breaks so that one expression stays on one line.
      std::string out;
      bool space = false;
      for (char c : t) {
        if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
          space = true;
          continue;
        }
        if (space && !out.empty())
          out += ' ';
        space = false;
        out += c;
      }
      return out;
    }
  }
  std::string out;
  llvm::raw_string_ostream os(out);
  s->printPretty(os, nullptr, PrintingPolicy(ctx.getLangOpts()));
  return os.str();
}

std::optional<std::string> builtinIndexName(const Expr *e) {
  if (!e)
    return std::nullopt;
  e = e->IgnoreParenImpCasts();
  if (auto *po = dyn_cast<PseudoObjectExpr>(e))
    e = po->getSyntacticForm()->IgnoreParenImpCasts();
  const Expr *base = nullptr;
  StringRef member;
  if (auto *mp = dyn_cast<MSPropertyRefExpr>(e)) {
    base = mp->getBaseExpr();
    member = mp->getPropertyDecl()->getName();
  } else if (auto *me = dyn_cast<MemberExpr>(e)) {
    base = me->getBase();
    member = me->getMemberDecl()->getName();
  } else {
    return std::nullopt;
  }
  base = base->IgnoreParenImpCasts();
  if (auto *ove = dyn_cast<OpaqueValueExpr>(base); ove && ove->getSourceExpr())
    base = ove->getSourceExpr()->IgnoreParenImpCasts();
  auto *dre = dyn_cast<DeclRefExpr>(base);
  if (!dre)
    return std::nullopt;
  StringRef name = dre->getDecl()->getName();
  if (name != "threadIdx" && name != "blockIdx" && name != "blockDim" && name != "gridDim")
    return std::nullopt;
  if (member.starts_with("__fetch_builtin_"))
    member = member.drop_front(strlen("__fetch_builtin_"));
  return (name + "." + member).str();
}

std::string pointerBase(const ASTContext &ctx, const Expr *e) {
  if (!e)
    return "";
  e = e->IgnoreParenCasts();
  if (auto *dre = dyn_cast<DeclRefExpr>(e))
    return dre->getDecl()->getNameAsString();
  if (auto *bo = dyn_cast<BinaryOperator>(e)) {
    if (bo->isAdditiveOp()) {
      if (bo->getLHS()->getType()->isPointerType())
        return pointerBase(ctx, bo->getLHS());
      if (bo->getRHS()->getType()->isPointerType())
        return pointerBase(ctx, bo->getRHS());
    }
    return "";
  }
  if (auto *uo = dyn_cast<UnaryOperator>(e)) {
    if (uo->getOpcode() == UO_AddrOf) {
      const Expr *sub = uo->getSubExpr()->IgnoreParenCasts();
      if (auto *ase = dyn_cast<ArraySubscriptExpr>(sub))
        return pointerBase(ctx, ase->getBase());
      return pointerBase(ctx, sub);
    }
    return "";
  }
  if (auto *me = dyn_cast<MemberExpr>(e))
    return sourceText(ctx, me);
  return "";
}

std::string normalizedTokens(const ASTContext &ctx, const Decl *d) {
  const SourceManager &sm = ctx.getSourceManager();
  CharSourceRange r = Lexer::makeFileCharRange(CharSourceRange::getTokenRange(d->getSourceRange()),
                                               sm, ctx.getLangOpts());
  if (r.isInvalid())
    return "";
  StringRef text = Lexer::getSourceText(r, sm, ctx.getLangOpts());
  Lexer lex(r.getBegin(), ctx.getLangOpts(), text.begin(), text.begin(), text.end());
  std::string out;
  Token tok;
  while (!lex.LexFromRawLexer(tok)) {
    if (!out.empty())
      out += ' ';
    out += Lexer::getSpelling(tok, sm, ctx.getLangOpts());
  }
  if (tok.isNot(tok::eof) || tok.getLength()) {
    if (!out.empty())
      out += ' ';
    out += Lexer::getSpelling(tok, sm, ctx.getLangOpts());
  }
  return out;
}

namespace {

/// How an lvalue is used. AddrOf: its address escapes into a call (it may be
/// read and written there); NoAccess: only its address is taken (`&a[i]`).
enum class Mode { Read, Write, ReadWrite, AddrOf, Atomic, NoAccess };

bool isBarrierName(StringRef n) {
  return n == "__syncthreads" || n == "__syncthreads_count" || n == "__syncthreads_and" ||
         n == "__syncthreads_or" || n == "__syncwarp" || n == "__threadfence" ||
         n == "__threadfence_block";
}

bool isMathName(StringRef n) {
  static const llvm::StringSet<> names = {
      "expf",   "exp",   "__expf", "logf", "log",   "__logf", "sqrtf",     "sqrt",
      "rsqrtf", "rsqrt", "sinf",   "sin",  "cosf",  "cos",    "__sinf",    "__cosf",
      "tanhf",  "tanh",  "powf",   "pow",  "fabsf", "fabs",   "fmaxf",     "fmax",
      "fminf",  "fmin",  "erff",   "erf",  "exp2f", "log2f",  "fmaf",      "fma",
      "floorf", "ceilf", "floor",  "ceil", "tanf",  "atanf",  "__fdividef"};
  return names.contains(n);
}

class Scanner {
public:
  Scanner(ASTContext &ctx, const FunctionDecl *fd, Kernel &k,
          std::vector<const FunctionDecl *> &callees, std::vector<const Stmt *> *loopStmts,
          std::vector<const Expr *> *accessExprs)
      : ctx(ctx), sm(ctx.getSourceManager()), fd(fd), k(k), callees(callees), loopStmts(loopStmts),
        accessExprs(accessExprs) {}

  void run() {
    for (unsigned i = 0; i < fd->getNumParams(); ++i) {
      const ParmVarDecl *p = fd->getParamDecl(i);
      paramIndex[p] = i;
      KernelParam kp;
      kp.name = p->getNameAsString();
      QualType t = p->getType();
      kp.type = t.getAsString(PrintingPolicy(ctx.getLangOpts()));
      if (t->isPointerType()) {
        kp.isPointer = true;
        kp.pointeeConst = t->getPointeeType().isConstQualified();
        kp.isRestrict = t.isRestrictQualified();
        kp.elementType =
            t->getPointeeType().getUnqualifiedType().getAsString(PrintingPolicy(ctx.getLangOpts()));
      }
      k.params.push_back(kp);
    }
    countMutations(fd->getBody());
    walk(fd->getBody(), Mode::Read);
  }

private:
  ASTContext &ctx;
  const SourceManager &sm;
  const FunctionDecl *fd;
  Kernel &k;
  std::vector<const FunctionDecl *> &callees;
  std::vector<const Stmt *> *loopStmts;
  std::vector<const Expr *> *accessExprs;

  llvm::DenseMap<const ParmVarDecl *, unsigned> paramIndex;
  llvm::DenseMap<const VarDecl *, unsigned> mutations;
  /// Affine loop induction variables: var → loop id.
  llvm::DenseMap<const VarDecl *, unsigned> inductionLoop;
  /// Local pointers that alias a parameter: var → (param, offset text).
  llvm::DenseMap<const VarDecl *, std::pair<const ParmVarDecl *, std::string>> aliases;
  std::vector<unsigned> loopStack;
  std::vector<Guard> guardStack;
  unsigned substDepth = 0;

  // --- variables ----------------------------------------------------------
  void countMutations(const Stmt *s) {
    if (!s)
      return;
    auto note = [&](const Expr *e) {
      if (auto *dre = dyn_cast<DeclRefExpr>(e->IgnoreParenImpCasts()))
        if (auto *vd = dyn_cast<VarDecl>(dre->getDecl()))
          ++mutations[vd];
    };
    if (auto *bo = dyn_cast<BinaryOperator>(s)) {
      if (bo->isAssignmentOp())
        note(bo->getLHS());
    } else if (auto *uo = dyn_cast<UnaryOperator>(s)) {
      if (uo->isIncrementDecrementOp())
        note(uo->getSubExpr());
      if (uo->getOpcode() == UO_AddrOf)
        note(uo->getSubExpr()); // may be written through the pointer
    }
    for (const Stmt *c : s->children())
      countMutations(c);
  }

  const VarDecl *varOf(const Expr *e) const {
    if (auto *dre = dyn_cast_or_null<DeclRefExpr>(e ? e->IgnoreParenImpCasts() : nullptr))
      return dyn_cast<VarDecl>(dre->getDecl());
    return nullptr;
  }

  std::optional<long long> evalInt(const Expr *e) const {
    if (!e || e->isValueDependent() || e->isTypeDependent())
      return std::nullopt;
    Expr::EvalResult r;
    if (e->EvaluateAsInt(r, ctx))
      return r.Val.getInt().getSExtValue();
    return std::nullopt;
  }

  // --- normalization ------------------------------------------------------
  /// The normalized text of an integer-valued expression (see the file comment).
  std::string norm(const Expr *e) {
    if (!e)
      return "?";
    e = e->IgnoreParens();
    if (auto v = evalInt(e))
      return *v < 0 ? "(" + std::to_string(*v) + ")" : std::to_string(*v);
    if (auto b = builtinIndexName(e))
      return *b;
    if (auto *ce = dyn_cast<CastExpr>(e))
      return norm(ce->getSubExpr());
    if (auto *fc = dyn_cast<CXXFunctionalCastExpr>(e))
      return norm(fc->getSubExpr());
    if (auto *bo = dyn_cast<BinaryOperator>(e)) {
      std::string l = norm(bo->getLHS()), r = norm(bo->getRHS());
      switch (bo->getOpcode()) {
      case BO_Add:
        return "(" + l + " + " + r + ")";
      case BO_Sub:
        return "(" + l + " - " + r + ")";
      case BO_Mul:
        return "(" + l + " * " + r + ")";
      case BO_Div:
        return "(" + l + " / " + r + ")";
      case BO_Rem:
        return "(" + l + " % " + r + ")";
      case BO_Shl:
        if (auto c = evalInt(bo->getRHS()); c && *c >= 0 && *c < 62)
          return "(" + l + " * " + std::to_string(1LL << *c) + ")";
        break;
      case BO_Shr:
        if (auto c = evalInt(bo->getRHS()); c && *c >= 0 && *c < 62)
          return "(" + l + " / " + std::to_string(1LL << *c) + ")";
        break;
      case BO_And:
        if (auto c = evalInt(bo->getRHS()); c && *c > 0 && ((*c + 1) & *c) == 0)
          return "(" + l + " % " + std::to_string(*c + 1) + ")";
        break;
      case BO_Comma:
        return r;
      default:
        break;
      }
      return "?expr";
    }
    if (auto *uo = dyn_cast<UnaryOperator>(e)) {
      if (uo->getOpcode() == UO_Minus)
        return "(0 - " + norm(uo->getSubExpr()) + ")";
      if (uo->getOpcode() == UO_Plus)
        return norm(uo->getSubExpr());
      return "?expr";
    }
    if (auto *dre = dyn_cast<DeclRefExpr>(e)) {
      const ValueDecl *d = dre->getDecl();
      if (auto *p = dyn_cast<ParmVarDecl>(d))
        return mutations.lookup(p) ? "?" + p->getNameAsString() : p->getNameAsString();
      if (auto *vd = dyn_cast<VarDecl>(d)) {
        if (vd->getName() == "warpSize")
          return "32";
        auto il = inductionLoop.find(vd);
        if (il != inductionLoop.end()) {
          const KernelLoop &lp = k.loops[il->second];
          return "(" + lp.init + " + $k" + std::to_string(lp.id) + " * " + lp.step + ")";
        }
        if (vd->hasLocalStorage()) {
          if (!mutations.lookup(vd) && vd->hasInit() && substDepth < 16) {
            ++substDepth;
            std::string s = norm(vd->getInit());
            --substDepth;
            return "(" + s + ")";
          }
          return "?" + vd->getNameAsString();
        }
        return vd->getNameAsString(); // a global: thread-invariant
      }
      return "?" + d->getNameAsString();
    }
    if (isa<ArraySubscriptExpr>(e))
      return "?load";
    if (isa<CallExpr>(e))
      return "?call";
    return "?expr";
  }

  static GuardOp guardOp(BinaryOperatorKind op) {
    switch (op) {
    case BO_LT:
      return GuardOp::LT;
    case BO_LE:
      return GuardOp::LE;
    case BO_GT:
      return GuardOp::GT;
    case BO_GE:
      return GuardOp::GE;
    case BO_EQ:
      return GuardOp::EQ;
    default: // BO_NE (conditionGuards passes comparisons only)
      return GuardOp::NE;
    }
  }

  /// Splits a condition into normalized comparisons that hold when it is
  /// true (`negate`: when it is false).
  void conditionGuards(const Expr *c, bool negate, std::vector<Guard> &out) {
    c = c->IgnoreParenImpCasts();
    if (auto *uo = dyn_cast<UnaryOperator>(c); uo && uo->getOpcode() == UO_LNot)
      return conditionGuards(uo->getSubExpr(), !negate, out);
    auto *bo = dyn_cast<BinaryOperator>(c);
    if (!bo)
      return;
    if ((bo->getOpcode() == BO_LAnd && !negate) || (bo->getOpcode() == BO_LOr && negate)) {
      conditionGuards(bo->getLHS(), negate, out);
      conditionGuards(bo->getRHS(), negate, out);
      return;
    }
    // (a <=> b is no condition by itself: it is not convertible to bool.)
    if (!bo->isComparisonOp() || bo->getOpcode() == BO_Cmp)
      return;
    BinaryOperatorKind op = bo->getOpcode();
    if (negate)
      op = BinaryOperator::negateComparisonOp(op);
    out.push_back(Guard{norm(bo->getLHS()), guardOp(op), norm(bo->getRHS())});
  }

  // --- loops --------------------------------------------------------------
  void recognizeFor(const ForStmt *fs, KernelLoop &lp) {
    const VarDecl *var = nullptr;
    const Expr *init = nullptr;
    unsigned expectedMutations = 0;
    if (auto *ds = dyn_cast_or_null<DeclStmt>(fs->getInit())) {
      if (ds->isSingleDecl())
        if (auto *vd = dyn_cast<VarDecl>(ds->getSingleDecl()); vd && vd->hasInit()) {
          var = vd;
          init = vd->getInit();
        }
    } else if (auto *bo = dyn_cast_or_null<BinaryOperator>(fs->getInit())) {
      if (bo->getOpcode() == BO_Assign) {
        var = varOf(bo->getLHS());
        init = bo->getRHS();
        expectedMutations = 1;
      }
    }
    if (!var)
      return;
    lp.var = var->getNameAsString();
    lp.init = norm(init);
    if (auto *cond = dyn_cast_or_null<BinaryOperator>(
            fs->getCond() ? fs->getCond()->IgnoreParenImpCasts() : nullptr)) {
      if (cond->isComparisonOp()) {
        if (varOf(cond->getLHS()) == var)
          lp.bound = sourceText(ctx, cond->getRHS());
        else if (varOf(cond->getRHS()) == var)
          lp.bound = sourceText(ctx, cond->getLHS());
      }
    }
    // The step: ++i, i++, --i, i--, i += s, i -= s, i = i + s.
    const Expr *inc = fs->getInc() ? fs->getInc()->IgnoreParenImpCasts() : nullptr;
    std::string step;
    if (auto *uo = dyn_cast_or_null<UnaryOperator>(inc); uo && varOf(uo->getSubExpr()) == var) {
      step = uo->isIncrementOp() ? "1" : "(0 - 1)";
    } else if (auto *bo = dyn_cast_or_null<BinaryOperator>(inc); bo && varOf(bo->getLHS()) == var) {
      if (bo->getOpcode() == BO_AddAssign)
        step = norm(bo->getRHS());
      else if (bo->getOpcode() == BO_SubAssign)
        step = "(0 - " + norm(bo->getRHS()) + ")";
      else if (bo->getOpcode() == BO_Assign)
        if (auto *add = dyn_cast<BinaryOperator>(bo->getRHS()->IgnoreParenImpCasts());
            add && add->getOpcode() == BO_Add && varOf(add->getLHS()) == var)
          step = norm(add->getRHS());
    }
    if (step.empty())
      return;
    ++expectedMutations;
    lp.step = step;
    if (mutations.lookup(var) == expectedMutations && lp.init.find('?') == std::string::npos &&
        lp.step.find('?') == std::string::npos) {
      lp.affine = true;
      inductionLoop[var] = lp.id;
    }
    lp.gridStride = lp.init.find("threadIdx") != std::string::npos &&
                    lp.step.find("gridDim") != std::string::npos;
  }

  void walkLoop(const Stmt *s, const char *kind, const Stmt *body, const Expr *cond) {
    KernelLoop lp;
    lp.id = k.loops.size();
    lp.parent = loopStack.empty() ? -1 : int(loopStack.back());
    lp.depth = loopStack.size();
    lp.kind = kind;
    lp.pos = position(sm, s->getBeginLoc());
    if (cond)
      lp.cond = sourceText(ctx, cond);
    k.loops.push_back(lp);
    if (loopStmts)
      loopStmts->push_back(s);
    auto *fs = dyn_cast<ForStmt>(s);
    if (fs) {
      walk(fs->getInit(), Mode::Read);
      recognizeFor(fs, k.loops[lp.id]);
    }
    loopStack.push_back(lp.id);
    size_t guards = guardStack.size();
    if (cond)
      conditionGuards(cond, false, guardStack);
    walk(cond, Mode::Read);
    walk(body, Mode::Read);
    if (fs)
      walk(fs->getInc(), Mode::Read);
    guardStack.resize(guards);
    loopStack.pop_back();
  }

  // --- accesses -----------------------------------------------------------
  void record(const ParmVarDecl *p, const std::string &offset, const std::string &offNorm,
              const Expr *idx, const Expr *whole, Mode mode) {
    auto add = [&](AccessKind kind, bool atomic) {
      MemAccess a;
      a.param = p->getNameAsString();
      // A parameter of something else (a lambda inside the kernel) is no
      // parameter of the kernel: -1, not the map's default 0.
      auto it = paramIndex.find(p);
      a.paramIndex = it == paramIndex.end() ? -1 : int(it->second);
      a.kind = kind;
      a.atomic = atomic;
      std::string idxText = idx ? sourceText(ctx, idx) : "";
      std::string idxNorm = idx ? norm(idx) : "0";
      if (!offset.empty()) {
        idxText = idxText.empty() ? offset : offset + " + " + idxText;
        idxNorm = "(" + offNorm + " + " + idxNorm + ")";
      }
      a.index = idxText.empty() ? "0" : idxText;
      a.normalized = idxNorm;
      a.loops = loopStack;
      a.guards = guardStack;
      a.pos = position(sm, whole->getBeginLoc());
      k.accesses.push_back(std::move(a));
      if (accessExprs)
        accessExprs->push_back(whole);
    };
    switch (mode) {
    case Mode::Read:
      add(AccessKind::Read, false);
      break;
    case Mode::Write:
      add(AccessKind::Write, false);
      break;
    case Mode::ReadWrite:
      add(AccessKind::Read, false);
      add(AccessKind::Write, false);
      break;
    case Mode::Atomic:
      add(AccessKind::Read, true);
      add(AccessKind::Write, true);
      break;
    case Mode::AddrOf: // address escapes (e.g. into a device function): assume both
      add(AccessKind::Read, false);
      add(AccessKind::Write, false);
      break;
    case Mode::NoAccess:
      break;
    }
  }

  /// The parameter a pointer expression designates, with the element offset
  /// (source text and normalized) of aliases like `float *row = A + r * n`.
  const ParmVarDecl *pointerParam(const Expr *base, std::string &offset, std::string &offNorm) {
    base = base->IgnoreParenImpCasts();
    if (auto *dre = dyn_cast<DeclRefExpr>(base)) {
      if (auto *p = dyn_cast<ParmVarDecl>(dre->getDecl()); p && p->getType()->isPointerType())
        return p;
      if (auto *vd = dyn_cast<VarDecl>(dre->getDecl())) {
        auto it = aliases.find(vd);
        if (it != aliases.end()) {
          offset = it->second.second;
          offNorm = aliasNorms[vd];
          return it->second.first;
        }
      }
    }
    if (auto *bo = dyn_cast<BinaryOperator>(base);
        bo && bo->isAdditiveOp() && bo->getLHS()->getType()->isPointerType()) {
      std::string inner, innerNorm;
      if (const ParmVarDecl *p = pointerParam(bo->getLHS(), inner, innerNorm)) {
        std::string sign = bo->getOpcode() == BO_Add ? " + " : " - ";
        offset = (inner.empty() ? "" : inner + sign) + sourceText(ctx, bo->getRHS());
        offNorm = "(" + (innerNorm.empty() ? "0" : innerNorm) + sign + norm(bo->getRHS()) + ")";
        return p;
      }
    }
    return nullptr;
  }
  llvm::DenseMap<const VarDecl *, std::string> aliasNorms;

  bool tryAccess(const Expr *e, Mode mode) {
    if (auto *ase = dyn_cast<ArraySubscriptExpr>(e)) {
      std::string off, offNorm;
      if (const ParmVarDecl *p = pointerParam(ase->getBase(), off, offNorm)) {
        record(p, off, offNorm, ase->getIdx(), ase, mode);
        walk(ase->getIdx(), Mode::Read);
        return true;
      }
    }
    if (auto *uo = dyn_cast<UnaryOperator>(e); uo && uo->getOpcode() == UO_Deref) {
      const Expr *sub = uo->getSubExpr()->IgnoreParenImpCasts();
      std::string off, offNorm;
      if (const ParmVarDecl *p = pointerParam(sub, off, offNorm)) {
        // *(p + i): the offset is the index.
        record(p, off, offNorm, nullptr, uo, mode);
        walk(sub, Mode::Read);
        return true;
      }
    }
    return false;
  }

  // --- the walk -----------------------------------------------------------
  void walk(const Stmt *s, Mode mode) {
    if (!s)
      return;
    if (auto *e = dyn_cast<Expr>(s)) {
      if (tryAccess(e->IgnoreParens(), mode))
        return;
    }
    switch (s->getStmtClass()) {
    case Stmt::ForStmtClass: {
      auto *fs = cast<ForStmt>(s);
      walkLoop(fs, "for", fs->getBody(), fs->getCond());
      return;
    }
    case Stmt::WhileStmtClass: {
      auto *ws = cast<WhileStmt>(s);
      walkLoop(ws, "while", ws->getBody(), ws->getCond());
      return;
    }
    case Stmt::DoStmtClass: {
      auto *ds = cast<DoStmt>(s);
      walkLoop(ds, "do", ds->getBody(), ds->getCond());
      return;
    }
    case Stmt::IfStmtClass: {
      auto *is = cast<IfStmt>(s);
      ++k.branches;
      walk(is->getCond(), Mode::Read);
      size_t g = guardStack.size();
      conditionGuards(is->getCond(), false, guardStack);
      walk(is->getThen(), Mode::Read);
      guardStack.resize(g);
      conditionGuards(is->getCond(), true, guardStack);
      walk(is->getElse(), Mode::Read);
      guardStack.resize(g);
      return;
    }
    case Stmt::CompoundStmtClass: {
      size_t g = guardStack.size();
      for (const Stmt *c : cast<CompoundStmt>(s)->body()) {
        walk(c, Mode::Read);
        // `if (cond) return;` guards the rest of the block with !cond.
        if (auto *is = dyn_cast<IfStmt>(c); is && !is->getElse()) {
          const Stmt *then = is->getThen();
          if (auto *cs = dyn_cast<CompoundStmt>(then); cs && cs->size() == 1)
            then = cs->body_front();
          if (isa<ReturnStmt>(then))
            conditionGuards(is->getCond(), true, guardStack);
        }
      }
      guardStack.resize(g);
      return;
    }
    case Stmt::DeclStmtClass: {
      for (const Decl *d : cast<DeclStmt>(s)->decls()) {
        auto *vd = dyn_cast<VarDecl>(d);
        if (!vd)
          continue;
        if (vd->hasAttr<CUDASharedAttr>()) {
          SharedDecl sd;
          sd.name = vd->getNameAsString();
          sd.type = vd->getType().getAsString(PrintingPolicy(ctx.getLangOpts()));
          sd.dynamic = vd->hasExternalStorage() || vd->getType()->isIncompleteArrayType();
          if (!sd.dynamic && vd->getType()->isConstantSizeType())
            sd.bytes = ctx.getTypeSizeInChars(vd->getType()).getQuantity();
          sd.pos = position(sm, vd->getLocation());
          k.shared.push_back(sd);
        }
        if (vd->getType()->isPointerType() && vd->hasInit() && !mutations.lookup(vd)) {
          std::string off, offNorm;
          const Expr *init = vd->getInit()->IgnoreParenImpCasts();
          const ParmVarDecl *p = nullptr;
          if (auto *uo = dyn_cast<UnaryOperator>(init); uo && uo->getOpcode() == UO_AddrOf) {
            if (auto *ase = dyn_cast<ArraySubscriptExpr>(uo->getSubExpr()->IgnoreParens())) {
              std::string o2, n2;
              if ((p = pointerParam(ase->getBase(), o2, n2))) {
                off = (o2.empty() ? "" : o2 + " + ") + sourceText(ctx, ase->getIdx());
                offNorm = "(" + (n2.empty() ? "0" : n2) + " + " + norm(ase->getIdx()) + ")";
              }
            }
          } else {
            p = pointerParam(init, off, offNorm);
          }
          if (p) {
            aliases[vd] = {p, off};
            aliasNorms[vd] = offNorm.empty() ? "0" : offNorm;
          }
        }
        walk(vd->getInit(), Mode::Read);
      }
      return;
    }
    case Stmt::BinaryOperatorClass:
    case Stmt::CompoundAssignOperatorClass: {
      auto *bo = cast<BinaryOperator>(s);
      if (bo->isAssignmentOp()) {
        walk(bo->getLHS(), bo->isCompoundAssignmentOp() ? Mode::ReadWrite : Mode::Write);
        walk(bo->getRHS(), Mode::Read);
        if (bo->isCompoundAssignmentOp())
          countOp(bo->getLHS()->getType());
        return;
      }
      if (bo->isMultiplicativeOp() || bo->isAdditiveOp())
        countOp(bo->getType());
      walk(bo->getLHS(), Mode::Read);
      walk(bo->getRHS(), Mode::Read);
      return;
    }
    case Stmt::UnaryOperatorClass: {
      auto *uo = cast<UnaryOperator>(s);
      if (uo->isIncrementDecrementOp())
        return walk(uo->getSubExpr(), Mode::ReadWrite);
      if (uo->getOpcode() == UO_AddrOf)
        return walk(uo->getSubExpr(),
                    mode == Mode::Atomic || mode == Mode::AddrOf ? mode : Mode::NoAccess);
      return walk(uo->getSubExpr(), Mode::Read);
    }
    case Stmt::ConditionalOperatorClass:
      ++k.branches;
      break;
    // Keep the access mode through (a[i]) = v and a[i].x = v; a load reads.
    case Stmt::ImplicitCastExprClass: {
      auto *ic = cast<ImplicitCastExpr>(s);
      return walk(ic->getSubExpr(), ic->getCastKind() == CK_LValueToRValue ? Mode::Read : mode);
    }
    case Stmt::ParenExprClass:
      return walk(cast<ParenExpr>(s)->getSubExpr(), mode);
    case Stmt::MemberExprClass:
      return walk(cast<MemberExpr>(s)->getBase(), mode);
    case Stmt::CallExprClass:
    case Stmt::CXXOperatorCallExprClass:
    case Stmt::CXXMemberCallExprClass: {
      auto *ce = cast<CallExpr>(s);
      walkCall(ce);
      return;
    }
    default:
      break;
    }
    for (const Stmt *c : s->children())
      walk(c, Mode::Read);
  }

  void countOp(QualType t) {
    if (t->isRealFloatingType())
      ++k.flops;
    else if (t->isIntegerType())
      ++k.intOps;
  }

  void walkCall(const CallExpr *ce) {
    const FunctionDecl *callee = ce->getDirectCallee();
    std::string name = callee ? callee->getNameAsString() : "";
    SourcePos pos = position(sm, ce->getBeginLoc());
    if (isBarrierName(name)) {
      k.barriers.push_back({name, "", pos});
    } else if (StringRef(name).starts_with("atomic") && ce->getNumArgs() > 0) {
      std::string off, offNorm;
      const Expr *target = ce->getArg(0)->IgnoreParenImpCasts();
      std::string targetName;
      if (auto *uo = dyn_cast<UnaryOperator>(target); uo && uo->getOpcode() == UO_AddrOf) {
        if (auto *ase = dyn_cast<ArraySubscriptExpr>(uo->getSubExpr()->IgnoreParens())) {
          if (const ParmVarDecl *p = pointerParam(ase->getBase(), off, offNorm))
            targetName = p->getNameAsString();
          else if (auto *dre = dyn_cast<DeclRefExpr>(ase->getBase()->IgnoreParenImpCasts()))
            targetName = dre->getDecl()->getNameAsString(); // shared or global memory
        } else if (auto *dre = dyn_cast<DeclRefExpr>(uo->getSubExpr()->IgnoreParenImpCasts())) {
          targetName = dre->getDecl()->getNameAsString();
        }
      } else if (const ParmVarDecl *p = pointerParam(target, off, offNorm)) {
        targetName = p->getNameAsString();
      } else if (auto *dre = dyn_cast<DeclRefExpr>(target->IgnoreParenCasts())) {
        targetName = dre->getDecl()->getNameAsString();
      }
      k.atomics.push_back({name, targetName, pos});
      if (auto *uo = dyn_cast<UnaryOperator>(target); uo && uo->getOpcode() == UO_AddrOf)
        walk(uo->getSubExpr(), Mode::Atomic);
      else if (!tryAccessPointer(target, Mode::Atomic, ce))
        walk(ce->getArg(0), Mode::Read);
      for (unsigned i = 1; i < ce->getNumArgs(); ++i)
        walk(ce->getArg(i), Mode::Read);
      return;
    } else if (isMathName(name)) {
      ++k.mathCalls;
      ++k.flops;
    } else if (callee && callee->hasAttr<CUDADeviceAttr>() &&
               !sm.isInSystemHeader(callee->getLocation()) && callee->hasBody()) {
      k.calls.push_back({name, "", pos});
      const FunctionDecl *def = nullptr;
      callee->hasBody(def);
      if (def && std::find(callees.begin(), callees.end(), def) == callees.end())
        callees.push_back(def);
    }
    walk(ce->getCallee(), Mode::Read);
    for (const Expr *arg : ce->arguments()) {
      // A pointer into a parameter passed to a device function may be read and written.
      const Expr *a = arg->IgnoreParenImpCasts();
      if (auto *uo = dyn_cast<UnaryOperator>(a); uo && uo->getOpcode() == UO_AddrOf) {
        walk(uo->getSubExpr(), Mode::AddrOf);
        continue;
      }
      walk(arg, Mode::Read);
    }
  }

  /// atomicAdd(p + i, v): the pointer itself designates the element.
  bool tryAccessPointer(const Expr *target, Mode mode, const Expr *whole) {
    std::string off, offNorm;
    if (const ParmVarDecl *p = pointerParam(target, off, offNorm)) {
      record(p, off, offNorm, nullptr, whole, mode);
      return true;
    }
    return false;
  }
};

} // namespace

void scanKernel(ASTContext &ctx, const FunctionDecl *fd, Kernel &k,
                std::vector<const FunctionDecl *> &deviceCallees,
                std::vector<const Stmt *> *loopStmts, std::vector<const Expr *> *accessExprs) {
  Scanner(ctx, fd, k, deviceCallees, loopStmts, accessExprs).run();
}

} // namespace cudal1::frontend
