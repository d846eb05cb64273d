// vectorize: a guarded element-wise kernel where thread i touches p[i]
// becomes one where each thread handles W consecutive elements: when all
// W are in range and every vectorized pointer is aligned, through one vector
// load per read buffer and one vector store per written buffer (the scalar
// body repeated per lane on the vector's components); otherwise through the
// original body, one element at a time. Every launch's grid shrinks by W.
#include "Vectorize.h"
#include "cudal1/Analysis/AffineIndex.h"
#include "cudal1/Rewrite/GridStrideLoop.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Debug.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "runtime/aligned.inc" // the helper inserted: passes/runtime/aligned.cuh

#define DEBUG_TYPE "vectorize"

using namespace clang;
using namespace cudal1;

namespace {

/// A supported element type: its size and the prefix of its CUDA vector types.
struct Element {
  unsigned size = 0;
  std::string vectorPrefix; ///< float → float2/float4
};

std::optional<Element> elementOf(QualType t) {
  auto *bt = t.getCanonicalType()->getAs<BuiltinType>();
  if (!bt)
    return std::nullopt;
  switch (bt->getKind()) {
  case BuiltinType::Float:
    return Element{4, "float"};
  case BuiltinType::Int:
    return Element{4, "int"};
  case BuiltinType::UInt:
    return Element{4, "uint"};
  case BuiltinType::Double:
    return Element{8, "double"};
  case BuiltinType::LongLong:
    return Element{8, "longlong"};
  case BuiltinType::ULongLong:
    return Element{8, "ulonglong"};
  default:
    return std::nullopt;
  }
}

/// A pointer parameter accessed at p[i].
struct Buffer {
  const ParmVarDecl *param = nullptr;
  Element elem;
  bool read = false, written = false;
  bool definitelyWritten = false; ///< every element's body stores p[i] on every path
};

/// What the rewrite needs, found by the legality check.
struct Shape {
  gridstride::GuardedKernel g;
  std::vector<Buffer> buffers;                        ///< in parameter order
  std::vector<const ArraySubscriptExpr *> laneAccess; ///< p[i] with p in buffers
  std::vector<const DeclRefExpr *> indexUses;         ///< other uses of i per element
  std::vector<const ArraySubscriptExpr *> gathers;    ///< thread-dependent reads elsewhere
  std::vector<const Stmt *> laneStmts;                ///< the per-element statements
  bool laneBraces = false; ///< they declare variables: each lane gets its own scope
  unsigned maxSize = 0;
};

unsigned lineOf(const SourceManager &sm, SourceLocation l) {
  return sm.getPresumedLineNumber(sm.getFileLoc(l));
}

const ParmVarDecl *pointerParam(const Expr *e) {
  auto *dre = dyn_cast<DeclRefExpr>(e->IgnoreParenImpCasts());
  auto *p = dre ? dyn_cast<ParmVarDecl>(dre->getDecl()) : nullptr;
  return p && p->getType()->isPointerType() ? p : nullptr;
}

bool isIndex(const Expr *e, const VarDecl *index) {
  auto *dre = dyn_cast<DeclRefExpr>(e->IgnoreParenImpCasts());
  return dre && dre->getDecl() == index;
}

/// Whether `s` stores p[i] on every path (p's old values are then not needed).
bool definitelyWrites(const Stmt *s, const ParmVarDecl *p, const VarDecl *index) {
  if (!s)
    return false;
  if (auto *e = dyn_cast<Expr>(s)) {
    e = e->IgnoreParens();
    if (auto *bo = dyn_cast<BinaryOperator>(e)) {
      if (bo->getOpcode() == BO_Comma)
        return definitelyWrites(bo->getLHS(), p, index) || definitelyWrites(bo->getRHS(), p, index);
      if (bo->getOpcode() == BO_Assign)
        if (auto *as = dyn_cast<ArraySubscriptExpr>(bo->getLHS()->IgnoreParens()))
          return pointerParam(as->getBase()) == p && isIndex(as->getIdx(), index);
    }
    return false;
  }
  if (auto *cs = dyn_cast<CompoundStmt>(s))
    return std::any_of(cs->body_begin(), cs->body_end(),
                       [&](const Stmt *c) { return definitelyWrites(c, p, index); });
  if (auto *is = dyn_cast<IfStmt>(s))
    return is->getElse() && definitelyWrites(is->getThen(), p, index) &&
           definitelyWrites(is->getElse(), p, index);
  return false;
}

/// Walks the per-element statements in evaluation order (right-hand sides
/// before the stores they feed) and finds the accesses.
class AccessWalk {
public:
  AccessWalk(ASTContext &ast, const VarDecl *index, Shape &shape)
      : ast(ast), sm(ast.getSourceManager()), index(index), shape(shape) {}
  std::string why;

  void walk(const Stmt *s) {
    if (!s || !why.empty())
      return;
    if (auto *ove = dyn_cast<OpaqueValueExpr>(s))
      return walk(ove->getSourceExpr());
    if (auto *ds = dyn_cast<DeclStmt>(s))
      for (const Decl *d : ds->decls())
        if (auto *vd = dyn_cast<VarDecl>(d))
          bodyLocals.insert(vd);
    if (auto *bo = dyn_cast<BinaryOperator>(s); bo && bo->isAssignmentOp()) {
      if (auto *as = dyn_cast<ArraySubscriptExpr>(bo->getLHS()->IgnoreParens());
          as && pointerParam(as->getBase())) {
        if (bo->isCompoundAssignmentOp())
          access(as, /*isWrite=*/false);
        walk(bo->getRHS());
        access(as, /*isWrite=*/true);
        return;
      }
    }
    if (auto *uo = dyn_cast<UnaryOperator>(s)) {
      if (auto *as = dyn_cast<ArraySubscriptExpr>(uo->getSubExpr()->IgnoreParens());
          as && pointerParam(as->getBase())) {
        if (uo->getOpcode() == UO_AddrOf) {
          why = "the address of " + spelled(ast, as) + " is taken at line " +
                std::to_string(lineOf(sm, as->getBeginLoc()));
          return;
        }
        if (uo->isIncrementDecrementOp()) {
          access(as, false);
          access(as, true);
          return;
        }
      }
    }
    if (auto *as = dyn_cast<ArraySubscriptExpr>(s); as && pointerParam(as->getBase()))
      return access(as, false);
    if (auto *dre = dyn_cast<DeclRefExpr>(s)) {
      if (dre->getDecl() == index) {
        if (dre->getLocation().isMacroID())
          why = "the index '" + index->getNameAsString() + "' is used inside a macro at line " +
                std::to_string(lineOf(sm, dre->getLocation()));
        shape.indexUses.push_back(dre);
      } else if (auto *p = dyn_cast<ParmVarDecl>(dre->getDecl());
                 p && p->getType()->isPointerType()) {
        why = "the pointer " + p->getNameAsString() + " is used other than as " +
              p->getNameAsString() + "[" + index->getNameAsString() +
              "] or at a uniform index (line " + std::to_string(lineOf(sm, dre->getLocation())) +
              ")";
      }
      return;
    }
    for (const Stmt *c : s->children())
      walk(c);
  }

private:
  ASTContext &ast;
  const SourceManager &sm;
  const VarDecl *index;
  Shape &shape;
  std::set<const VarDecl *> bodyLocals;
  std::vector<const ParmVarDecl *> writtenSoFar;

  /// Whether `e` may differ between threads: it uses the index, a thread
  /// builtin or a variable declared per element.
  bool threadDependent(const Expr *e) {
    bool dep = false;
    forEachStmt(e, [&](const Stmt *c) {
      if (auto *dre = dyn_cast<DeclRefExpr>(c)) {
        auto *vd = dyn_cast<VarDecl>(dre->getDecl());
        if (vd && (vd == index || bodyLocals.count(vd) ||
                   (!vd->hasLocalStorage() &&
                    (vd->getName() == "threadIdx" || vd->getName() == "blockIdx"))))
          dep = true;
      } else if (isa<CallExpr>(c)) {
        dep |= gridstride::usesThreadIdentity(c);
      }
    });
    return dep;
  }

  /// A read after another buffer's store could alias it; the vector loads
  /// all happen first and would read the old value.
  void aliasCheck(const ParmVarDecl *p, const std::string &line) {
    if (p->getType().isRestrictQualified())
      return;
    for (const ParmVarDecl *w : writtenSoFar)
      if (w != p && !w->getType().isRestrictQualified()) {
        why = "the body reads " + p->getNameAsString() + " after storing to " +
              w->getNameAsString() + " (line " + line +
              "); if they alias, vector loads made first would read old values (mark them "
              "__restrict__)";
        return;
      }
  }

  Buffer &buffer(const ParmVarDecl *p) {
    for (Buffer &b : shape.buffers)
      if (b.param == p)
        return b;
    shape.buffers.push_back({p, {}, false, false, false});
    return shape.buffers.back();
  }

  void access(const ArraySubscriptExpr *as, bool isWrite) {
    if (!why.empty())
      return;
    const ParmVarDecl *p = pointerParam(as->getBase());
    std::string name = p->getNameAsString(), line = std::to_string(lineOf(sm, as->getBeginLoc()));
    if (!isIndex(as->getIdx(), index)) {
      bool dependent = threadDependent(as->getIdx());
      if (dependent && isWrite)
        why = "the store to " + spelled(ast, as) + " at line " + line +
              " is not at the element index: vectorize needs every thread-dependent store "
              "written " +
              name + "[" + index->getNameAsString() + "] (mixed index expressions)";
      else if (isWrite)
        why = "the store to " + spelled(ast, as) + " at line " + line +
              " writes the same element in every thread";
      if (!why.empty())
        return;
      // A read elsewhere stays a scalar load per element (checked in analyze).
      if (dependent)
        shape.gathers.push_back(as);
      aliasCheck(p, line);
      walk(as->getIdx());
      return;
    }
    if (as->getBeginLoc().isMacroID() || as->getEndLoc().isMacroID()) {
      why = "the access " + name + "[" + index->getNameAsString() + "] at line " + line +
            " is written inside a macro";
      return;
    }
    if (!isWrite)
      aliasCheck(p, line);
    if (!why.empty())
      return;
    Buffer &b = buffer(p);
    (isWrite ? b.written : b.read) = true;
    if (isWrite)
      writtenSoFar.push_back(p);
    if (std::find(shape.laneAccess.begin(), shape.laneAccess.end(), as) == shape.laneAccess.end())
      shape.laneAccess.push_back(as);
  }
};

/// The legality of one kernel; fills `shape` for the rewrite.
std::string analyze(TransformContext &ctx, unsigned kernel, Shape &shape) {
  const Kernel &k = ctx.model().kernels[kernel];
  const FunctionDecl *fd = ctx.unit.kernelDecl(kernel);
  ASTContext &ast = ctx.unit.ast();
  const SourceManager &sm = ast.getSourceManager();
  // 1. Kernel-wide properties.
  if (fd->isTemplateInstantiation() || fd->isTemplated())
    return "template kernels are not vectorized (the element type may depend on a template "
           "parameter)";
  if (!k.atomics.empty())
    return "the kernel uses atomics (" + k.atomics[0].callee + " at line " +
           std::to_string(k.atomics[0].pos.line) + ")";
  if (!k.barriers.empty())
    return "the kernel uses barriers (" + k.barriers[0].callee + " at line " +
           std::to_string(k.barriers[0].pos.line) + ")";
  if (!k.shared.empty())
    return "the kernel uses shared memory (" + k.shared[0].name + ")";
  if (usesWarpIntrinsics(fd))
    return "the kernel uses warp-level intrinsics";
  if (ctx.analysis(kernel).gridStride)
    return "grid-stride kernels are not vectorized (only the guarded form `if (i < n)`)";
  // 2. Every global access is at the global thread id or uniform.
  // Reads of a buffer the kernel never writes may stay scalar gathers, as
  // long as that buffer is not also vectorized (checked after step 4).
  IndexSpace space(ctx.mlir);
  auto gid = space.parse("blockIdx.x * blockDim.x + threadIdx.x");
  std::set<std::string> writtenParams;
  for (const MemAccess &a : k.accesses)
    if (a.kind == AccessKind::Write)
      writtenParams.insert(a.param);
  std::map<std::string, std::string> gatherWhy; ///< read-only buffer → first problem
  for (const MemAccess &a : k.accesses) {
    std::string where = a.param + "[" + a.index + "] at line " + std::to_string(a.pos.line);
    std::string why;
    auto e = space.parse(a.normalized);
    bool uniform = e && !usesOpaque(*e, space);
    for (unsigned d = 0; uniform && d < IndexSpace::NumBuiltinDims; ++d)
      uniform = !e->isFunctionOfDim(d);
    if (uniform)
      continue;
    Stride s = e && !usesOpaque(*e, space) ? strideAlong(*e, IndexSpace::ThreadX, space) : Stride();
    if (s.kind == Stride::Kind::Unknown)
      why = "the index of " + where + " is not affine in the thread index";
    else if (s.kind == Stride::Kind::Symbolic)
      why = where + " has stride " + s.text + " along threadIdx.x (vectorize needs 1)";
    else if (s.value != 1)
      why = where + " has stride " + std::to_string(s.value) +
            " along threadIdx.x (vectorize needs 1)";
    else if (!sameFunction(*e, *gid, space))
      why = where + " is not at the global thread id: vectorize needs every thread-dependent "
                    "access of a buffer at the same index (mixed index expressions)";
    if (why.empty())
      continue;
    if (writtenParams.count(a.param))
      return why;
    gatherWhy.emplace(a.param, why);
  }
  // 3. The guarded element-wise shape (shared with grid-stride).
  if (std::string why = gridstride::legality(ctx, kernel); !why.empty())
    return why;
  auto g = gridstride::matchGuarded(ast, fd);
  if (!g)
    return "the kernel is not a guarded element-wise kernel";
  shape.g = *g;
  const VarDecl *index = g->index;
  // 4. The accesses of each element, in evaluation order.
  if (g->perElement.size() == 1)
    if (auto *cs = dyn_cast<CompoundStmt>(g->perElement[0])) {
      shape.laneStmts.assign(cs->body_begin(), cs->body_end());
      if (cs->getLBracLoc().isMacroID() || cs->getRBracLoc().isMacroID())
        return "the guarded block is written inside a macro";
    }
  if (shape.laneStmts.empty())
    shape.laneStmts = g->perElement;
  AccessWalk w(ast, index, shape);
  for (const Stmt *s : g->perElement)
    w.walk(s);
  if (!w.why.empty())
    return w.why;
  for (const Stmt *s : shape.laneStmts) {
    shape.laneBraces |= isa<DeclStmt>(s);
    for (SourceLocation l : {s->getBeginLoc(), s->getEndLoc()})
      if (l.isMacroID())
        return "the statement at line " + std::to_string(lineOf(sm, l)) +
               " is written inside a macro";
  }
  std::sort(shape.buffers.begin(), shape.buffers.end(), [](const Buffer &a, const Buffer &b) {
    return a.param->getFunctionScopeIndex() < b.param->getFunctionScopeIndex();
  });
  if (shape.buffers.empty())
    return "no global access at [" + index->getNameAsString() + "] to vectorize";
  for (const Buffer &b : shape.buffers)
    if (auto it = gatherWhy.find(b.param->getNameAsString()); it != gatherWhy.end())
      return it->second;
  for (const ArraySubscriptExpr *as : shape.gathers) {
    std::string p = pointerParam(as->getBase())->getNameAsString();
    bool vectorized = std::any_of(shape.buffers.begin(), shape.buffers.end(), [&](const Buffer &b) {
      return b.param == pointerParam(as->getBase());
    });
    if (vectorized || writtenParams.count(p))
      return "the access " + spelled(ast, as) + " at line " +
             std::to_string(lineOf(sm, as->getBeginLoc())) + " is not at the element index '" +
             index->getNameAsString() + "', and " + p +
             " is also vectorized or written (mixed index expressions)";
  }
  // 5. Element types, and pointers that stay put.
  for (Buffer &b : shape.buffers) {
    QualType pt = b.param->getType()->getPointeeType();
    std::string name = b.param->getNameAsString();
    if (pt.isVolatileQualified())
      return "the pointer " + name + " is volatile";
    auto e = elementOf(pt);
    if (!e)
      return "the element type of " + name + " is '" + pt.getUnqualifiedType().getAsString() +
             "' (vectorize needs float, int, unsigned, double, long long or unsigned long long)";
    b.elem = *e;
    shape.maxSize = std::max(shape.maxSize, e->size);
    b.definitelyWritten =
        std::any_of(g->perElement.begin(), g->perElement.end(),
                    [&](const Stmt *s) { return definitelyWrites(s, b.param, index); });
  }
  std::string modified;
  forEachStmt(fd->getBody(), [&](const Stmt *s) {
    const Expr *target = nullptr;
    if (auto *bo = dyn_cast<BinaryOperator>(s); bo && bo->isAssignmentOp())
      target = bo->getLHS();
    else if (auto *uo = dyn_cast<UnaryOperator>(s); uo && uo->isIncrementDecrementOp())
      target = uo->getSubExpr();
    if (const ParmVarDecl *p = target ? pointerParam(target) : nullptr)
      for (const Buffer &b : shape.buffers)
        if (b.param == p)
          modified = p->getNameAsString();
  });
  if (!modified.empty())
    return "the pointer " + modified + " is modified in the kernel";
  return "";
}

std::string launchProblem(TransformContext &ctx, unsigned kernel) {
  for (unsigned id : distinctLaunches(ctx, kernel)) {
    const Expr *e = launchConfigArg(ctx, id, 0);
    if (e)
      e = e->IgnoreUnlessSpelledInSource();
    std::string launch = "the grid of launch #" + std::to_string(id);
    if (!e || e->HasSideEffects(ctx.unit.ast(), /*IncludePossibleEffects=*/false))
      return launch + " has side effects";
    if (std::string why; configRange(ctx, id, 0, &why).isInvalid())
      return why;
    if (spelled(ctx.unit.ast(), e).empty())
      return launch + " has no source text";
  }
  return "";
}

std::vector<std::string> widths(const Shape &s) {
  if (s.maxSize == 4)
    return {"8", "16"};
  return {"16"};
}

/// Source text with replacements, from the original file.
class TextBuilder {
public:
  TextBuilder(ASTContext &ast) : ast(ast), sm(ast.getSourceManager()) {
    buf = sm.getBufferData(sm.getMainFileID());
  }
  unsigned begin(SourceLocation l) const { return sm.getFileOffset(sm.getFileLoc(l)); }
  unsigned end(SourceLocation l) const {
    return begin(Lexer::getLocForEndOfToken(sm.getFileLoc(l), 0, sm, ast.getLangOpts()));
  }
  /// The end of a statement, including its `;`.
  unsigned stmtEnd(const Stmt *s) const {
    unsigned e = end(s->getEndLoc());
    if (isa<CompoundStmt>(s))
      return e;
    unsigned p = e;
    while (p < buf.size() && (buf[p] == ' ' || buf[p] == '\t'))
      ++p;
    return p < buf.size() && buf[p] == ';' ? p + 1 : e;
  }
  /// The indentation of the line holding `offset`.
  std::string indentAt(unsigned offset) const {
    unsigned ls = offset;
    while (ls > 0 && buf[ls - 1] != '\n')
      --ls;
    unsigned e = ls;
    while (e < buf.size() && (buf[e] == ' ' || buf[e] == '\t'))
      ++e;
    return buf.substr(ls, e - ls).str();
  }
  struct Edit {
    unsigned from, to;
    std::string text;
  };
  /// buf[from, to) with the edits inside it applied.
  std::string render(unsigned from, unsigned to, std::vector<Edit> edits) const {
    std::sort(edits.begin(), edits.end(),
              [](const Edit &a, const Edit &b) { return a.from < b.from; });
    std::string out;
    unsigned at = from;
    for (const Edit &e : edits) {
      if (e.from < at || e.to > to)
        continue;
      out += buf.substr(at, e.from - at).str() + e.text;
      at = e.to;
    }
    return out + buf.substr(at, to - at).str();
  }
  /// Moves the continuation lines of `text` (which started at indentation
  /// `from`) to indentation `to`.
  static std::string reindent(const std::string &text, const std::string &from,
                              const std::string &to) {
    std::string out;
    size_t pos = 0;
    bool first = true;
    while (pos <= text.size()) {
      size_t nl = text.find('\n', pos);
      std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      if (!first && !line.empty()) {
        if (llvm::StringRef(line).starts_with(from))
          line = to + line.substr(from.size());
        else
          line = to + llvm::StringRef(line).ltrim(" \t").str();
      }
      out += line;
      first = false;
      if (nl == std::string::npos)
        break;
      out += "\n";
      pos = nl + 1;
    }
    return out;
  }
  llvm::StringRef buf;

private:
  ASTContext &ast;
  const SourceManager &sm;
};

/// A name not used in the kernel's text.
std::string freshName(const std::string &text, std::vector<std::string> candidates) {
  llvm::StringSet<> words;
  std::string w;
  for (char c : text + " ") {
    if (isalnum(static_cast<unsigned char>(c)) || c == '_') {
      w += c;
    } else if (!w.empty()) {
      words.insert(w);
      w.clear();
    }
  }
  for (const std::string &c : candidates)
    if (!words.count(c))
      return c;
  std::string c = candidates.back();
  while (words.count(c))
    c += "_";
  return c;
}

} // namespace

std::string Vectorize::legality(TransformContext &ctx, Target t) const {
  Shape s;
  if (std::string why = analyze(ctx, t.kernel, s); !why.empty())
    return why;
  return launchProblem(ctx, t.kernel);
}

std::vector<ParamSpace> Vectorize::space(TransformContext &ctx, Target t) const {
  Shape s;
  if (!analyze(ctx, t.kernel, s).empty())
    return {{"width", {"8", "16"}}};
  return {{"width", widths(s)}};
}

std::string Vectorize::checkParams(TransformContext &ctx, Target t, const PlanStep &step) const {
  Shape s;
  analyze(ctx, t.kernel, s);
  if (auto w = step.param("width"); w && *w == "8" && s.maxSize == 8)
    return "width=8 holds a single 8-byte element: use width=16";
  return Transform::checkParams(ctx, t, step);
}

std::string Vectorize::remapLaunchFor(const PlanStep &step,
                                      const std::vector<unsigned> &pointerElementBytes,
                                      std::optional<LaunchRemapStep> &out) const {
  // What apply writes into each launch: ceil(grid.x / W), W = width / the
  // vectorized buffers' element size. Which buffers it vectorizes is the
  // analysis'; from the arguments alone the size is certain only when every
  // typed pointer has the same one. Without this remap a replay ran the
  // variant with W times the threads it needs (correct, slower).
  std::set<unsigned> sizes;
  for (unsigned b : pointerElementBytes)
    if (b > 0)
      sizes.insert(b);
  if (sizes.size() != 1)
    return "vectorize's lanes depend on which of its buffers (of " + std::to_string(sizes.size()) +
           " element sizes) it vectorizes";
  unsigned bytes = step.param("width") ? step.uintParam("width", 8, 16).value_or(16) : 16;
  unsigned lanes = bytes / *sizes.begin();
  out = lanes > 1 ? std::optional<LaunchRemapStep>(LaunchRemapStep::divideX(lanes)) : std::nullopt;
  return "";
}

llvm::Error Vectorize::apply(TransformContext &ctx, Target t, const PlanStep &step) const {
  Shape s;
  if (std::string why = analyze(ctx, t.kernel, s); !why.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), why.c_str());
  ASTContext &ast = ctx.unit.ast();
  const FunctionDecl *fd = ctx.unit.kernelDecl(t.kernel);
  const gridstride::GuardedKernel &g = s.g;
  TextBuilder tb(ast);
  auto widthParam = step.param("width");
  // checkParams took the width from the space {8, 16}.
  unsigned bytes = widthParam ? step.uintParam("width", 8, 16).value_or(16) : 16;
  unsigned lanes = bytes / s.maxSize;
  std::string W = std::to_string(lanes), last = std::to_string(lanes - 1);
  const char *comp[] = {".x", ".y", ".z", ".w"};

  // 1. Names: the first element of a thread's group, one vector per buffer.
  std::string kernelText = tb.render(tb.begin(fd->getBeginLoc()), tb.end(fd->getEndLoc()), {});
  std::string iname = g.index->getNameAsString();
  std::string base = freshName(kernelText, {iname + "0", iname + "Base"});
  std::map<const ParmVarDecl *, std::string> vecName, vecType;
  for (const Buffer &b : s.buffers) {
    std::string p = b.param->getNameAsString();
    vecName[b.param] = freshName(kernelText + " " + base, {p + W, p + "Vec"});
    kernelText += " " + vecName[b.param];
    vecType[b.param] = b.elem.vectorPrefix + std::to_string(lanes);
  }

  // 2. The index declaration: `int i = G;` becomes `int i0 = (G) * W;`.
  unsigned declBegin = tb.begin(g.indexDecl->getBeginLoc());
  std::string typeText = tb.render(declBegin, tb.begin(g.index->getLocation()), {});
  const Expr *init = g.index->getInit();
  std::string initText = tb.render(tb.begin(init->getBeginLoc()), tb.end(init->getEndLoc()), {});
  ctx.rewriter.ReplaceText(
      CharSourceRange::getCharRange(g.indexDecl->getBeginLoc(),
                                    g.indexDecl->getEndLoc().getLocWithOffset(1)),
      typeText + base + " = (" + initText + ") * " + W + ";");

  // 3. Everything from the guard to the end of the kernel.
  unsigned from = tb.begin(g.guard->getBeginLoc());
  unsigned to = tb.begin(g.body->getRBracLoc());
  while (to > from && isspace(static_cast<unsigned char>(tb.buf[to - 1])))
    --to;
  std::string ind = tb.indentAt(from), in1 = ind + "  ", in2 = in1 + "  ";

  // 3a. All W elements in range: the guard's condition at the last one.
  std::vector<TextBuilder::Edit> lastLane;
  for (const Expr *side : {g.bound->getLHS(), g.bound->getRHS()})
    if (isIndex(side, g.index))
      lastLane.push_back(
          {tb.begin(side->getBeginLoc()), tb.end(side->getEndLoc()), base + " + " + last});
  const Expr *cond = g.guard->getCond();
  std::string inRange;
  if (!g.earlyReturn) {
    inRange = tb.render(tb.begin(cond->getBeginLoc()), tb.end(cond->getEndLoc()), lastLane);
  } else if (g.otherConds.empty()) {
    const BinaryOperator *bo = g.bound;
    auto side = [&](const Expr *e) {
      return tb.render(tb.begin(e->getBeginLoc()), tb.end(e->getEndLoc()), lastLane);
    };
    inRange =
        side(bo->getLHS()) + " " +
        BinaryOperator::getOpcodeStr(BinaryOperator::negateComparisonOp(bo->getOpcode())).str() +
        " " + side(bo->getRHS());
  } else {
    inRange =
        "!(" + tb.render(tb.begin(cond->getBeginLoc()), tb.end(cond->getEndLoc()), lastLane) + ")";
  }
  std::string out = "if (" + inRange;
  for (const Buffer &b : s.buffers)
    out += " && cudal1Aligned(" + b.param->getNameAsString() + ", " +
           std::to_string(lanes * b.elem.size) + ")";
  out += ") {\n";

  // 3b. The vector path: loads, the body once per lane, stores.
  out += in1 + "// " + W + " elements per thread, as vectors\n";
  for (const Buffer &b : s.buffers) {
    const std::string &v = vecName[b.param], &vt = vecType[b.param];
    std::string p = b.param->getNameAsString();
    std::string load = "*reinterpret_cast<const " + vt + " *>(" + p + " + " + base + ")";
    if (!b.written)
      out += in1 + "const " + vt + " " + v + " = " + load + ";\n";
    else if (b.read || !b.definitelyWritten)
      out += in1 + vt + " " + v + " = " + load + ";\n";
    else
      out += in1 + vt + " " + v + ";\n";
  }
  for (unsigned lane = 0; lane < lanes; ++lane) {
    std::vector<TextBuilder::Edit> edits;
    for (const ArraySubscriptExpr *as : s.laneAccess)
      edits.push_back({tb.begin(as->getBeginLoc()), tb.end(as->getEndLoc()),
                       vecName[pointerParam(as->getBase())] + comp[lane]});
    for (const DeclRefExpr *d : s.indexUses)
      edits.push_back({tb.begin(d->getLocation()), tb.end(d->getLocation()),
                       lane == 0 ? base : "(" + base + " + " + std::to_string(lane) + ")"});
    std::string li = s.laneBraces ? in2 : in1;
    if (s.laneBraces)
      out += in1 + "{\n";
    for (const Stmt *st : s.laneStmts) {
      unsigned sb = tb.begin(st->getBeginLoc());
      out += li + TextBuilder::reindent(tb.render(sb, tb.stmtEnd(st), edits), tb.indentAt(sb), li) +
             "\n";
    }
    if (s.laneBraces)
      out += in1 + "}\n";
  }
  for (const Buffer &b : s.buffers)
    if (b.written)
      out += in1 + "*reinterpret_cast<" + vecType[b.param] + " *>(" + b.param->getNameAsString() +
             " + " + base + ") = " + vecName[b.param] + ";\n";

  // 3c. The scalar path (unaligned pointers or the last, partial group): the
  // original code once per element; an early return becomes a break, as
  // the elements after the first out-of-range one are out of range too.
  out += ind + "} else {\n";
  std::string loopVar = typeText + iname;
  out += in1 + "for (" + loopVar + " = " + base + "; " + iname + " < " + base + " + " + W + "; ++" +
         iname + ")";
  std::vector<TextBuilder::Edit> scalarEdits;
  if (g.earlyReturn) {
    const Stmt *ret = g.guard->getThen();
    if (auto *cs = dyn_cast<CompoundStmt>(ret))
      ret = cs->body_front();
    scalarEdits.push_back({tb.begin(ret->getBeginLoc()), tb.end(ret->getEndLoc()), "break"});
    out += " {\n";
  } else {
    out += "\n";
  }
  out += in2 + TextBuilder::reindent(tb.render(from, to, scalarEdits), ind, in2) + "\n";
  if (g.earlyReturn)
    out += in1 + "}\n";
  out += ind + "}";
  ctx.rewriter.ReplaceText(
      CharSourceRange::getCharRange(g.guard->getBeginLoc(),
                                    g.guard->getBeginLoc().getLocWithOffset(to - from)),
      out);
  // One helper per file: an earlier step may have put it above this kernel.
  size_t helperAt = tb.buf.find("\n#define CUDAL1_ALIGNED\n");
  if (helperAt == llvm::StringRef::npos || helperAt > tb.begin(fd->getBeginLoc()))
    ctx.insertHelperBefore(t.kernel, "cudal1Aligned", runtime::aligned);

  // 4. The launches: ceil(grid.x / W).
  for (unsigned id : distinctLaunches(ctx, t.kernel)) {
    const Expr *gr = launchConfigArg(ctx, id, 0)->IgnoreUnlessSpelledInSource();
    ctx.rewriter.ReplaceText(configRange(ctx, id, 0), gridstride::shrunkGrid(ast, gr, lanes));
  }
  LLVM_DEBUG(llvm::dbgs() << "vectorize: " << lanes << " lanes\n");
  return llvm::Error::success();
}
