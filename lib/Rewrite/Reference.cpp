// The double reference of a kernel (docs/Reference.md): the evaluator's
// tolerance rule needs the original computed in double, and writing it by
// hand for every kernel does not scale. The kernel and the device functions
// it calls are copied to the end of the unit with their float types,
// literals, math calls and atomics promoted, token by token; what cannot be
// promoted refuses with its location.
#include "cudal1/Rewrite/Reference.h"
#include "cudal1/Frontend/ParsedUnit.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Debug.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "runtime/reference-program.inc" // lib/Rewrite/runtime/reference-program.cuh

#define DEBUG_TYPE "reference"

using namespace clang;
using namespace cudal1;

namespace {

/// Single-precision functions whose double form is another name (the CUDA
/// math API: the float name is the double one plus `f`; the intrinsics map
/// to the accurate double function or the double intrinsic of the same
/// rounding).
const llvm::StringMap<std::string> &renamed() {
  static const llvm::StringMap<std::string> m = [] {
    llvm::StringMap<std::string> r;
    for (const char *f : {"acos",      "acosh",      "asin",     "asinh",         "atan",
                          "atan2",     "atanh",      "cbrt",     "ceil",          "copysign",
                          "cos",       "cosh",       "cospi",    "cyl_bessel_i0", "cyl_bessel_i1",
                          "erf",       "erfc",       "erfcinv",  "erfcx",         "erfinv",
                          "exp",       "exp10",      "exp2",     "expm1",         "fabs",
                          "fdim",      "floor",      "fma",      "fmax",          "fmin",
                          "fmod",      "frexp",      "hypot",    "ilogb",         "j0",
                          "j1",        "jn",         "ldexp",    "lgamma",        "llrint",
                          "llround",   "log",        "log10",    "log1p",         "log2",
                          "logb",      "lrint",      "lround",   "modf",          "nan",
                          "nearbyint", "nextafter",  "norm",     "norm3d",        "norm4d",
                          "normcdf",   "normcdfinv", "pow",      "rcbrt",         "remainder",
                          "remquo",    "rhypot",     "rint",     "rnorm",         "rnorm3d",
                          "rnorm4d",   "round",      "rsqrt",    "scalbln",       "scalbn",
                          "sin",       "sincos",     "sincospi", "sinh",          "sinpi",
                          "sqrt",      "tan",        "tanh",     "tgamma",        "trunc",
                          "y0",        "y1",         "yn"})
      r[std::string(f) + "f"] = f;
    for (const char *f :
         {"exp", "log", "sin", "cos", "tan", "pow", "exp10", "log2", "log10", "sincos"})
      r[std::string("__") + f + "f"] = f;
    r["__frsqrt_rn"] = "rsqrt";
    for (const char *rnd : {"_rn", "_rz", "_ru", "_rd"}) {
      r[std::string("__fadd") + rnd] = std::string("__dadd") + rnd;
      r[std::string("__fsub") + rnd] = std::string("__dsub") + rnd;
      r[std::string("__fmul") + rnd] = std::string("__dmul") + rnd;
      r[std::string("__fdiv") + rnd] = std::string("__ddiv") + rnd;
      r[std::string("__fmaf") + rnd] = std::string("__fma") + rnd;
      r[std::string("__frcp") + rnd] = std::string("__drcp") + rnd;
      r[std::string("__fsqrt") + rnd] = std::string("__dsqrt") + rnd;
      for (const char *to : {"int", "uint", "ll", "ull"})
        r[std::string("__float2") + to + rnd] = std::string("__double2") + to + rnd;
      for (const char *from : {"int", "uint", "ll", "ull"})
        r[std::string("__") + from + "2float" + rnd] =
            std::string("__") + from +
            (std::string(from) == "int" || std::string(from) == "uint"
                 ? "2double_rn"
                 : "2double" + std::string(rnd));
    }
    r["__fdividef"] = "cudal1_ref_div";
    r["fdividef"] = "cudal1_ref_div";
    r["__saturatef"] = "cudal1_ref_saturate";
    r["make_float1"] = "make_double1";
    r["make_float2"] = "make_double2";
    r["make_float3"] = "make_double3";
    r["make_float4"] = "make_double4_16a";
    return r;
  }();
  return m;
}

/// The helpers a renamed call may need, emitted once before the copies.
const llvm::StringMap<std::string> &helperText() {
  static const llvm::StringMap<std::string> m = {
      {"cudal1_ref_div",
       "static __device__ __forceinline__ double cudal1_ref_div(double a, double b) { return a / "
       "b; }\n"},
      {"cudal1_ref_saturate",
       "static __device__ __forceinline__ double cudal1_ref_saturate(double x) { return fmin(fmax("
       "x, 0.0), 1.0); }\n"},
      {"cudal1_ref_atomicExch",
       "static __device__ __forceinline__ double cudal1_ref_atomicExch(double *p, double v) {\n"
       "  return __longlong_as_double((long long)atomicExch((unsigned long long *)p,\n"
       "                                                  (unsigned long "
       "long)__double_as_longlong(v)));\n"
       "}\n"},
      {"cudal1_ref_load",
       "template <class T> static __device__ __forceinline__ T cudal1_ref_load(const T *p) { "
       "return *p; }\n"},
  };
  return m;
}

/// The CUDA vector types of float and their double counterparts (double4 is
/// deprecated in CUDA 13; double4_16a has its layout).
const llvm::StringMap<std::string> &vectorTypes() {
  static const llvm::StringMap<std::string> m = {{"float1", "double1"},
                                                 {"float2", "double2"},
                                                 {"float3", "double3"},
                                                 {"float4", "double4_16a"}};
  return m;
}

bool isFloat(QualType t) { return t->isSpecificBuiltinType(BuiltinType::Float); }

/// The type under pointers, references and arrays.
const Type *innermost(QualType t) {
  const Type *ty = t.getCanonicalType().getTypePtr();
  for (;;) {
    if (ty->isPointerType() || ty->isReferenceType())
      ty = ty->getPointeeType().getCanonicalType().getTypePtr();
    else if (ty->isArrayType())
      ty = ty->getArrayElementTypeNoTypeQual()->getCanonicalTypeInternal().getTypePtr();
    else
      return ty;
  }
}

const RecordDecl *recordOf(QualType t) { return innermost(t)->getAsRecordDecl(); }

/// `float`, `float4`, pointers, references and arrays of them.
bool involvesFloat(QualType t) {
  if (t.isNull())
    return false;
  const Type *ty = innermost(t);
  if (ty->isSpecificBuiltinType(BuiltinType::Float))
    return true;
  if (const RecordDecl *rd = ty->getAsRecordDecl())
    return vectorTypes().count(rd->getName());
  return false;
}

/// Floats inside a value of this type (an array of float4 counts 4 each).
uint64_t floatsIn(ASTContext &ctx, QualType t) {
  t = t.getCanonicalType();
  if (isFloat(t))
    return 1;
  if (const auto *at = ctx.getAsConstantArrayType(t))
    return at->getSize().getZExtValue() * floatsIn(ctx, at->getElementType());
  if (const RecordDecl *rd = t->getAsRecordDecl()) {
    auto it = vectorTypes().find(rd->getName());
    if (it != vectorTypes().end())
      return rd->getName().back() - '0';
  }
  return 0;
}

bool isHalfName(llvm::StringRef n) {
  return n == "__half" || n == "__half2" || n == "__nv_bfloat16" || n == "__nv_bfloat162" ||
         n == "__half_raw" || n == "__nv_fp8_e4m3" || n == "__nv_fp8_e5m2";
}

struct Refusal {
  SourceLocation loc;
  std::string why;
};

/// Everything learnt about one function of the call tree.
struct FnInfo {
  bool walked = false, walking = false;
  bool needsCopy = false;
  std::string copyName;
};

class Deriver;

/// Walks one function: its edits, refusals, callees and reductions.
class FnVisitor : public RecursiveASTVisitor<FnVisitor> {
  using Base = RecursiveASTVisitor<FnVisitor>;

public:
  FnVisitor(Deriver &d, const FunctionDecl *fd) : d(d), fn(fd) {}
  bool shouldVisitTemplateInstantiations() const { return false; }
  bool shouldVisitImplicitCode() const { return false; }
  bool shouldWalkTypesOfTypeLocs() const { return true; }

  bool TraverseForStmt(ForStmt *s) {
    return inLoop(s, [&] { return Base::TraverseForStmt(s); });
  }
  bool TraverseWhileStmt(WhileStmt *s) {
    return inLoop(s, [&] { return Base::TraverseWhileStmt(s); });
  }
  bool TraverseDoStmt(DoStmt *s) {
    return inLoop(s, [&] { return Base::TraverseDoStmt(s); });
  }
  bool TraverseCXXForRangeStmt(CXXForRangeStmt *s) {
    return inLoop(s, [&] { return Base::TraverseCXXForRangeStmt(s); });
  }
  bool TraverseIfStmt(IfStmt *s) {
    if (!TraverseStmt(s->getInit()) || !TraverseStmt(s->getCond()))
      return false;
    if (s->getConditionVariableDeclStmt() && !TraverseStmt(s->getConditionVariableDeclStmt()))
      return false;
    guards.push_back(s->getCond());
    bool ok = TraverseStmt(s->getThen());
    guards.pop_back();
    return ok && TraverseStmt(s->getElse());
  }

  bool VisitBuiltinTypeLoc(BuiltinTypeLoc tl);
  bool VisitTypedefTypeLoc(TypedefTypeLoc tl);
  bool VisitRecordTypeLoc(RecordTypeLoc tl);
  bool VisitFloatingLiteral(FloatingLiteral *fl);
  bool VisitCallExpr(CallExpr *ce);
  bool VisitGCCAsmStmt(GCCAsmStmt *s);
  bool VisitCastExpr(CastExpr *ce);
  bool VisitExpr(Expr *e);
  bool VisitVarDecl(VarDecl *vd);
  bool VisitCompoundAssignOperator(CompoundAssignOperator *op);
  bool VisitBinaryOperator(BinaryOperator *op);

private:
  template <class F> bool inLoop(Stmt *s, F traverse) {
    loops.push_back(s);
    bool ok = traverse();
    loops.pop_back();
    return ok;
  }
  void reduction(const Expr *at, const Expr *lhs, const std::string &what, bool atomic,
                 const Expr *address);
  ReductionFactor tripCount(const Stmt *loop);
  /// 1: reads threadIdx, 2: reads blockIdx, 4: reads memory or an unknown.
  unsigned dependence(const Expr *e, unsigned depth = 0);

  Deriver &d;
  const FunctionDecl *fn;
  std::vector<const Stmt *> loops;
  std::vector<const Expr *> guards;
  std::map<const VarDecl *, size_t> varDepth;
};

class Deriver {
public:
  Deriver(ParsedUnit &u, const FunctionDecl *kernel)
      : u(u), ctx(u.ast()), sm(ctx.getSourceManager()), lo(ctx.getLangOpts()), kernel(kernel) {}

  ParsedUnit &u;
  ASTContext &ctx;
  SourceManager &sm;
  const LangOptions &lo;
  const FunctionDecl *kernel;

  struct Edit {
    unsigned length;
    std::string text;
  };
  std::map<SourceLocation, Edit> edits; ///< file locations
  std::optional<Refusal> refusal;
  std::vector<ReductionSite> reductions;
  std::vector<std::string> notes;
  std::set<std::string> helpers;
  std::map<const FunctionDecl *, FnInfo> fns;
  std::vector<const FunctionDecl *> copyOrder; ///< callees first
  uint64_t sharedBytes = 0;
  /// Edits made while walking the current function, to tell whether it needs a copy.
  unsigned editsMade = 0;

  void refuse(SourceLocation loc, std::string why) {
    if (!refusal)
      refusal = Refusal{loc, std::move(why)};
  }
  std::string posOf(SourceLocation loc) const {
    PresumedLoc p = sm.getPresumedLoc(sm.getExpansionLoc(loc));
    if (p.isInvalid())
      return "<unknown>";
    return std::string(p.getFilename()) + ":" + std::to_string(p.getLine()) + ":" +
           std::to_string(p.getColumn());
  }
  SourcePos sourcePos(SourceLocation loc) const {
    PresumedLoc p = sm.getPresumedLoc(sm.getExpansionLoc(loc));
    SourcePos s;
    if (p.isValid()) {
      s.file = p.getFilename();
      s.line = p.getLine();
      s.col = p.getColumn();
    }
    return s;
  }
  bool inSystemHeader(const Decl *decl) const {
    return sm.isInSystemHeader(sm.getExpansionLoc(decl->getLocation()));
  }

  /// Replaces the token at `loc` with `text`: directly in the file, at the
  /// spelling of a macro argument, or the whole expansion of a macro that
  /// is exactly this token. Anything else refuses with `what`.
  void editToken(SourceLocation loc, const std::string &text, const std::string &what) {
    SourceLocation at;
    unsigned len = 0;
    if (loc.isFileID()) {
      at = loc;
      len = Lexer::MeasureTokenLength(loc, sm, lo);
    } else if (sm.isMacroArgExpansion(loc) && sm.getSpellingLoc(loc).isFileID() &&
               !sm.isWrittenInScratchSpace(sm.getSpellingLoc(loc))) {
      at = sm.getSpellingLoc(loc);
      len = Lexer::MeasureTokenLength(at, sm, lo);
    } else {
      SourceLocation b, e;
      CharSourceRange outer = sm.getImmediateExpansionRange(loc);
      if (Lexer::isAtStartOfMacroExpansion(loc, sm, lo, &b) &&
          Lexer::isAtEndOfMacroExpansion(loc, sm, lo, &e) && outer.getBegin().isFileID() &&
          outer.getEnd().isFileID()) {
        at = outer.getBegin();
        len = sm.getFileOffset(outer.getEnd()) - sm.getFileOffset(at) +
              Lexer::MeasureTokenLength(outer.getEnd(), sm, lo);
      } else {
        StringRef macro = Lexer::getImmediateMacroName(loc, sm, lo);
        refuse(loc, what + " written inside macro '" + macro.str() +
                        "' cannot be promoted (the macro is shared with float code)");
        return;
      }
    }
    auto [it, fresh] = edits.try_emplace(at, Edit{len, text});
    if (fresh)
      ++editsMade;
    else if (it->second.text != text)
      refuse(loc, what + " is promoted two ways (macro argument used as two types)");
  }

  QualType promote(QualType t);
  std::string typeString(QualType t) {
    PrintingPolicy pp(lo);
    pp.SuppressTagKeyword = true;
    return t.getAsString(pp);
  }

  /// A float-carrying type that has no double form in the reference.
  std::string unpromotable(QualType t);
  std::map<const RecordDecl *, bool> floatRecords;
  bool recordHasFloats(const RecordDecl *rd);

  bool hasDoubleOverload(const FunctionDecl *fd);
  void walk(const FunctionDecl *fd);
  std::string uniqueName(const std::string &base) {
    std::string n = base;
    for (unsigned i = 2; ctx.Idents.find(n) != ctx.Idents.end() || taken.count(n); ++i)
      n = base + std::to_string(i);
    taken.insert(n);
    return n;
  }
  std::set<std::string> taken;
};

QualType Deriver::promote(QualType t) {
  Qualifiers q = t.getLocalQualifiers();
  QualType c = t.getCanonicalType();
  q.addQualifiers(c.getLocalQualifiers());
  c = c.getUnqualifiedType();
  QualType r = c;
  if (isFloat(c)) {
    r = ctx.DoubleTy;
  } else if (const auto *pt = c->getAs<PointerType>()) {
    r = ctx.getPointerType(promote(pt->getPointeeType()));
  } else if (const auto *rt = c->getAs<LValueReferenceType>()) {
    r = ctx.getLValueReferenceType(promote(rt->getPointeeType()));
  } else if (const auto *rt = c->getAs<RValueReferenceType>()) {
    r = ctx.getRValueReferenceType(promote(rt->getPointeeType()));
  } else if (const auto *at = ctx.getAsConstantArrayType(c)) {
    r = ctx.getConstantArrayType(promote(at->getElementType()), at->getSize(), nullptr,
                                 ArraySizeModifier::Normal, 0);
  } else if (const RecordDecl *rd = c->getAsRecordDecl()) {
    auto it = vectorTypes().find(rd->getName());
    if (it != vectorTypes().end()) {
      for (NamedDecl *nd : ctx.getTranslationUnitDecl()->lookup(&ctx.Idents.get(it->second)))
        if (auto *td = dyn_cast<TypedefNameDecl>(nd))
          r = ctx.getTypedefType(td);
    }
  }
  return ctx.getQualifiedType(r, q);
}

bool Deriver::recordHasFloats(const RecordDecl *rd) {
  auto it = floatRecords.find(rd);
  if (it != floatRecords.end())
    return it->second;
  floatRecords[rd] = false; // a recursive member is a pointer: no cycle
  bool has = false;
  if (const RecordDecl *def = rd->getDefinition())
    for (const FieldDecl *f : def->fields()) {
      QualType ft = f->getType();
      if (involvesFloat(ft))
        has = true;
      else if (const RecordDecl *inner = recordOf(ft))
        has |=
            !inner->isLambda() && !vectorTypes().count(inner->getName()) && recordHasFloats(inner);
    }
  return floatRecords[rd] = has;
}

std::string Deriver::unpromotable(QualType t) {
  if (t.isNull())
    return "";
  // Sugar first: the texture and surface object types are typedefs of integers.
  for (QualType s = t; !s.isNull();) {
    if (const auto *tt = dyn_cast<TypedefType>(s.getTypePtr())) {
      StringRef n = tt->getDecl()->getName();
      if (n == "cudaTextureObject_t" || n == "cudaSurfaceObject_t")
        return "a texture or surface object (" + n.str() +
               ") reads float data the reference "
               "cannot widen";
    }
    QualType next = s.getSingleStepDesugaredType(ctx);
    if (next != s)
      s = next;
    else if (s->isPointerType() || s->isReferenceType())
      s = s->getPointeeType();
    else
      break;
  }
  const Type *ty = innermost(t);
  if (ty->isHalfType() || ty->isFloat16Type() || ty->isBFloat16Type() ||
      ty->isSpecificBuiltinType(BuiltinType::LongDouble) ||
      ty->isSpecificBuiltinType(BuiltinType::Float128))
    return "the type '" + typeString(t) + "' has no double form here";
  if (const RecordDecl *rd = ty->getAsRecordDecl()) {
    if (isHalfName(rd->getName()))
      return "half-precision type '" + rd->getName().str() +
             "' (the reference promotes float only)";
    if (rd->getName() == "texture" || rd->getName() == "surface")
      return "a texture or surface reference reads float data the reference cannot widen";
    if (!rd->isLambda() && !vectorTypes().count(rd->getName()) &&
        !sm.isInSystemHeader(sm.getExpansionLoc(rd->getLocation())) && recordHasFloats(rd))
      return "the struct '" + rd->getNameAsString() +
             "' has float members (promoting them would change its layout, which the "
             "evaluator's captured bytes do not follow)";
  }
  return "";
}

bool Deriver::hasDoubleOverload(const FunctionDecl *fd) {
  std::vector<QualType> want;
  for (const ParmVarDecl *p : fd->parameters())
    want.push_back(promote(p->getType()).getCanonicalType().getUnqualifiedType());
  const DeclContext *dc = fd->getDeclContext()->getRedeclContext();
  for (NamedDecl *nd : dc->lookup(fd->getDeclName())) {
    nd = nd->getUnderlyingDecl();
    auto *cand = dyn_cast<FunctionDecl>(nd);
    if (!cand || cand == fd || cand->getNumParams() != want.size())
      continue;
    bool same = true;
    for (unsigned i = 0; i < want.size() && same; ++i)
      same = ctx.hasSameUnqualifiedType(cand->getParamDecl(i)->getType(), want[i]);
    if (same)
      return true;
  }
  return false;
}

// --- the visitor ---------------------------------------------------------

bool FnVisitor::VisitBuiltinTypeLoc(BuiltinTypeLoc tl) {
  if (isFloat(tl.getType()))
    d.editToken(tl.getBeginLoc(), "double", "the type 'float'");
  else if (std::string why = d.unpromotable(tl.getType()); !why.empty())
    d.refuse(tl.getBeginLoc(), why);
  return true;
}

bool FnVisitor::VisitTypedefTypeLoc(TypedefTypeLoc tl) {
  const TypedefNameDecl *td = tl.getTypedefNameDecl();
  StringRef name = td->getName();
  if (std::string why = d.unpromotable(tl.getType()); !why.empty()) {
    d.refuse(tl.getBeginLoc(), why);
    return true;
  }
  if (d.inSystemHeader(td)) {
    auto it = vectorTypes().find(name);
    if (it != vectorTypes().end())
      d.editToken(tl.getNameLoc(), it->second, "the type '" + name.str() + "'");
    return true;
  }
  // A user typedef of float (`typedef float real;`): spelled out promoted.
  QualType under = td->getUnderlyingType();
  if (involvesFloat(under))
    d.editToken(tl.getNameLoc(), d.typeString(d.promote(under)), "the type '" + name.str() + "'");
  return true;
}

bool FnVisitor::VisitRecordTypeLoc(RecordTypeLoc tl) {
  if (std::string why = d.unpromotable(tl.getType()); !why.empty())
    d.refuse(tl.getBeginLoc(), why);
  return true;
}

bool FnVisitor::VisitFloatingLiteral(FloatingLiteral *fl) {
  if (!isFloat(fl->getType()))
    return true;
  SourceLocation loc = fl->getLocation();
  SourceLocation spell = d.sm.getSpellingLoc(loc);
  bool invalid = false;
  llvm::SmallString<32> buf;
  std::string text = Lexer::getSpelling(spell, buf, d.sm, d.lo, &invalid).str();
  if (invalid || text.empty())
    return true;
  if (text.back() == 'f' || text.back() == 'F')
    text.pop_back();
  if (loc.isMacroID() && !d.sm.isMacroArgExpansion(loc)) {
    SourceLocation b, e;
    if (!(Lexer::isAtStartOfMacroExpansion(loc, d.sm, d.lo, &b) &&
          Lexer::isAtEndOfMacroExpansion(loc, d.sm, d.lo, &e))) {
      // The value is the float the program means; only its rounding to float stays.
      d.notes.push_back(d.posOf(loc) + ": the float literal " + text + "f inside macro '" +
                        Lexer::getImmediateMacroName(loc, d.sm, d.lo).str() +
                        "' keeps its float value");
      return true;
    }
  }
  d.editToken(loc, text, "the float literal " + text + "f");
  return true;
}

bool FnVisitor::VisitCallExpr(CallExpr *ce) {
  if (isa<CUDAKernelCallExpr>(ce)) {
    d.refuse(ce->getBeginLoc(), "a device-side launch (the launched kernel would need its own "
                                "reference)");
    return true;
  }
  const FunctionDecl *callee = ce->getDirectCallee();
  if (!callee) {
    if (!ce->getCallee()->getType()->isDependentType() && involvesFloat(ce->getType()))
      d.refuse(ce->getBeginLoc(), "a call through a function pointer returning float");
    return true;
  }
  auto *dre = dyn_cast<DeclRefExpr>(ce->getCallee()->IgnoreParenImpCasts());
  SourceLocation nameLoc = dre ? dre->getNameInfo().getLoc() : ce->getBeginLoc();
  std::string name = callee->getNameAsString();
  bool floatParams = false;
  for (const ParmVarDecl *p : callee->parameters())
    floatParams |= involvesFloat(p->getType());
  bool floats = floatParams || involvesFloat(callee->getReturnType());

  if (isa<CXXMethodDecl>(callee) && (callee->isImplicit() || d.inSystemHeader(callee)))
    return true; // a member of the type itself (float4's assignment): the double type has its own
  if (d.inSystemHeader(callee) || callee->getBuiltinID()) {
    StringRef n(name);
    // 1. Reductions into memory: float atomics.
    if ((n == "atomicAdd" || n == "atomicAdd_block" || n == "atomicAdd_system" ||
         n == "atomicSub") &&
        ce->getNumArgs() == 2 && involvesFloat(ce->getArg(0)->getType()))
      reduction(ce, nullptr, n.str() + " on float", true, ce->getArg(0));
    // 2. No double form.
    if (n.starts_with("tex") || n.starts_with("surf"))
      return d.refuse(nameLoc, "the texture/surface call '" + name +
                                   "' reads float data the reference cannot widen"),
             true;
    if (n.contains("_as_") && (n.contains("float") || n.contains("int")) && floats)
      return d.refuse(nameLoc, "'" + name +
                                   "' reinterprets the bits of a float; the double "
                                   "reference cannot"),
             true;
    if (n.contains("half") || n.contains("bfloat") || n.contains("bf16"))
      return d.refuse(nameLoc, "'" + name + "' converts to or from a half-precision type"), true;
    // 3. Renamed, or an overload of the same name takes doubles.
    auto it = renamed().find(n);
    if (it != renamed().end()) {
      if (helperText().count(it->second))
        d.helpers.insert(it->second);
      if (dre)
        d.editToken(nameLoc, it->second, "the call of '" + name + "'");
      else
        d.refuse(nameLoc, "the call of '" + name + "' is not a plain name");
      return true;
    }
    if (!floatParams)
      return true; // a float result (INFINITY is __builtin_inff()) converts exactly
    if (n == "atomicExch" && ce->getNumArgs() == 2) {
      d.helpers.insert("cudal1_ref_atomicExch");
      d.editToken(nameLoc, "cudal1_ref_atomicExch", "the call of 'atomicExch'");
      return true;
    }
    if (d.hasDoubleOverload(callee))
      return true;
    if ((n.starts_with("__ld") || n == "__ldg") && ce->getNumArgs() == 1) {
      // A cache hint: a plain load reads the same values.
      d.helpers.insert("cudal1_ref_load");
      d.editToken(nameLoc, "cudal1_ref_load", "the call of '" + name + "'");
      return true;
    }
    d.refuse(nameLoc, "'" + name + "' has no double form");
    return true;
  }

  // A user function: promoted as a copy when anything in it changes.
  if (const auto *md = dyn_cast<CXXMethodDecl>(callee)) {
    if (md->getParent()->isLambda())
      return true; // its body is walked where it is written
    if (floats)
      d.refuse(nameLoc, "the member function '" + md->getQualifiedNameAsString() +
                            "' takes or returns float (member functions are not copied)");
    return true;
  }
  const FunctionDecl *def = callee->getDefinition();
  if (!def || !def->hasBody()) {
    if (floats)
      d.refuse(nameLoc, "'" + name +
                            "' takes or returns float and is not defined in this "
                            "translation unit");
    return true;
  }
  if (def->getTemplateInstantiationPattern() || def->isFunctionTemplateSpecialization()) {
    // Walked for what it does; a copy is not supported.
    unsigned before = d.editsMade;
    d.walk(def);
    if (d.fns[def].needsCopy || d.editsMade != before)
      d.refuse(nameLoc, "the function template '" + name +
                            "' computes in float (promoted copies of templates are not "
                            "supported yet)");
    return true;
  }
  d.walk(def);
  FnInfo &info = d.fns[def];
  if (!info.needsCopy)
    return true;
  if (isa<CXXOperatorCallExpr>(ce) || callee->isOverloadedOperator()) {
    // An operator keeps its name: the copy overloads it on double types.
    bool paramChanges = false;
    for (const ParmVarDecl *p : callee->parameters())
      paramChanges |= involvesFloat(p->getType());
    if (!paramChanges)
      d.refuse(nameLoc, "the operator '" + name +
                            "' computes in float but takes no float "
                            "operand (its copy could not overload it)");
    return true;
  }
  if (!dre) {
    d.refuse(nameLoc, "the call of '" + name + "' is not a plain name");
    return true;
  }
  d.editToken(nameLoc, info.copyName, "the call of '" + name + "'");
  return true;
}

bool FnVisitor::VisitGCCAsmStmt(GCCAsmStmt *s) {
  for (unsigned i = 0; i < s->getNumOutputs(); ++i)
    if (involvesFloat(s->getOutputExpr(i)->getType()) || s->getOutputConstraint(i).contains('f'))
      return d.refuse(s->getAsmLoc(), "inline PTX (asm) with a float operand cannot be "
                                      "promoted to double"),
             true;
  for (unsigned i = 0; i < s->getNumInputs(); ++i)
    if (involvesFloat(s->getInputExpr(i)->getType()) || s->getInputConstraint(i).contains('f'))
      return d.refuse(s->getAsmLoc(), "inline PTX (asm) with a float operand cannot be "
                                      "promoted to double"),
             true;
  d.notes.push_back(d.posOf(s->getAsmLoc()) + ": inline asm without float operands is kept");
  return true;
}

bool FnVisitor::VisitCastExpr(CastExpr *ce) {
  CastKind k = ce->getCastKind();
  QualType to = ce->getType(), from = ce->getSubExpr()->getType();
  if (k == CK_LValueBitCast || k == CK_LValueToRValueBitCast) {
    if (involvesFloat(to) != involvesFloat(from) ||
        (involvesFloat(to) && !d.ctx.hasSameType(to, from)))
      d.refuse(ce->getBeginLoc(), "a cast reinterprets the bits of a float value");
    return true;
  }
  if (k != CK_BitCast || !to->isPointerType() || !from->isPointerType())
    return true;
  QualType a = to->getPointeeType().getCanonicalType().getUnqualifiedType();
  QualType b = from->getPointeeType().getCanonicalType().getUnqualifiedType();
  auto raw = [](QualType t) { return t->isVoidType() || t->isCharType(); };
  bool fa = involvesFloat(a), fb = involvesFloat(b);
  if (fa == fb || raw(a) || raw(b))
    return true; // float <-> float4, or raw storage (shared memory bytes)
  d.refuse(ce->getBeginLoc(), "a pointer cast between '" + d.typeString(from) + "' and '" +
                                  d.typeString(to) +
                                  "' reinterprets float bits, which the reference cannot");
  return true;
}

bool FnVisitor::VisitExpr(Expr *e) {
  if (!e->getType().isNull() && !e->isTypeDependent())
    if (std::string why = d.unpromotable(e->getType()); !why.empty())
      d.refuse(e->getExprLoc(), why);
  return true;
}

bool FnVisitor::VisitVarDecl(VarDecl *vd) {
  varDepth[vd] = loops.size();
  if (std::string why = d.unpromotable(vd->getType()); !why.empty())
    d.refuse(vd->getLocation(), why);
  if (vd->hasAttr<CUDASharedAttr>() && !vd->hasExternalStorage() &&
      !vd->getType()->isIncompleteType())
    d.sharedBytes +=
        d.ctx.getTypeSizeInChars(vd->getType()).getQuantity() + 4 * floatsIn(d.ctx, vd->getType());
  if (vd->hasGlobalStorage() && !vd->isStaticLocal())
    return true;
  return true;
}

bool FnVisitor::VisitCompoundAssignOperator(CompoundAssignOperator *op) {
  BinaryOperatorKind k = op->getOpcode();
  if ((k == BO_AddAssign || k == BO_SubAssign) && op->getLHS()->getType()->isRealFloatingType())
    reduction(op, op->getLHS(), std::string(k == BO_AddAssign ? "+=" : "-="), false, nullptr);
  return true;
}

bool FnVisitor::VisitBinaryOperator(BinaryOperator *op) {
  if (op->getOpcode() != BO_Assign || !op->getLHS()->getType()->isRealFloatingType())
    return true;
  auto *lhs = dyn_cast<DeclRefExpr>(op->getLHS()->IgnoreParenImpCasts());
  if (!lhs)
    return true;
  // `acc = acc + x`, `acc = fmaf(a, b, acc)`: the right side reads the accumulator.
  bool reads = false;
  const Expr *rhs = op->getRHS()->IgnoreParenImpCasts();
  if (isa<BinaryOperator>(rhs) || isa<CallExpr>(rhs))
    forEachStmt(rhs, [&](const Stmt *s) {
      if (auto *r = dyn_cast<DeclRefExpr>(s); r && r->getDecl() == lhs->getDecl())
        reads = true;
    });
  if (reads)
    reduction(op, op->getLHS(), "= ... " + lhs->getDecl()->getNameAsString() + " ...", false,
              nullptr);
  return true;
}

unsigned FnVisitor::dependence(const Expr *e, unsigned depth) {
  if (!e || depth > 8)
    return 4;
  unsigned dep = 0;
  e = e->IgnoreParenImpCasts();
  // The address of an element: what its index depends on.
  if (auto *uo = dyn_cast<UnaryOperator>(e); uo && uo->getOpcode() == UO_AddrOf)
    if (auto *as = dyn_cast<ArraySubscriptExpr>(uo->getSubExpr()->IgnoreParenImpCasts()))
      return dependence(as->getBase(), depth + 1) | dependence(as->getIdx(), depth + 1);
  forEachStmt(e, [&](const Stmt *s) {
    bool builtinRead = false; // threadIdx.x is a call of __fetch_builtin_x
    if (auto *call = dyn_cast<CallExpr>(s))
      if (const FunctionDecl *callee = call->getDirectCallee())
        builtinRead = callee->getName().starts_with("__fetch_builtin");
    if (isa<ArraySubscriptExpr>(s) ||
        (isa<CallExpr>(s) && !isa<CXXOperatorCallExpr>(s) && !builtinRead) ||
        (isa<UnaryOperator>(s) && cast<UnaryOperator>(s)->getOpcode() == UO_Deref))
      dep |= 4;
    if (auto *r = dyn_cast<DeclRefExpr>(s)) {
      StringRef b = r->getDecl()->getName();
      if (b == "threadIdx")
        dep |= 1;
      else if (b == "blockIdx")
        dep |= 2;
      if (auto *vd = dyn_cast<VarDecl>(r->getDecl())) {
        if (isa<ParmVarDecl>(vd)) {
          if (fn != d.kernel)
            dep |= 4; // a callee's parameter: unknown here
        } else if (vd->hasLocalStorage()) {
          if (vd->getInit() && vd->getType().isConstQualified())
            dep |= dependence(vd->getInit(), depth + 1);
          else if (vd->getInit())
            dep |= dependence(vd->getInit(), depth + 1) | 8; // may be reassigned
          else
            dep |= 4;
        }
      }
    }
  });
  return dep & 7;
}

ReductionFactor FnVisitor::tripCount(const Stmt *loop) {
  ReductionFactor f;
  f.text = "loop at line " + std::to_string(d.sourcePos(loop->getBeginLoc()).line);
  const auto *fs = dyn_cast<ForStmt>(loop);
  if (!fs || !fs->getCond() || !fs->getInc())
    return f;
  // The induction variable and its start.
  const VarDecl *var = nullptr;
  const Expr *init = nullptr;
  if (auto *ds = dyn_cast_or_null<DeclStmt>(fs->getInit()); ds && ds->isSingleDecl()) {
    var = dyn_cast<VarDecl>(ds->getSingleDecl());
    init = var ? var->getInit() : nullptr;
  } else if (auto *bo = dyn_cast_or_null<BinaryOperator>(fs->getInit());
             bo && bo->getOpcode() == BO_Assign) {
    if (auto *r = dyn_cast<DeclRefExpr>(bo->getLHS()->IgnoreParenImpCasts()))
      var = dyn_cast<VarDecl>(r->getDecl());
    init = bo->getRHS();
  }
  if (!var || !init)
    return f;
  auto isVar = [&](const Expr *e) {
    auto *r = dyn_cast<DeclRefExpr>(e->IgnoreParenImpCasts());
    return r && r->getDecl() == var;
  };
  auto constant = [&](const Expr *e) -> std::optional<int64_t> {
    Expr::EvalResult r;
    if (e && !e->isValueDependent() && e->EvaluateAsInt(r, d.ctx))
      return r.Val.getInt().getExtValue();
    return std::nullopt;
  };
  auto mentions = [&](const Expr *e, StringRef builtin) {
    bool found = false;
    forEachStmt(e, [&](const Stmt *s) {
      if (auto *r = dyn_cast<DeclRefExpr>(s); r && r->getDecl()->getName() == builtin)
        found = true;
    });
    return found;
  };
  auto paramIndex = [&](const Expr *e) -> int {
    auto *r = dyn_cast<DeclRefExpr>(e->IgnoreParenImpCasts());
    auto *p = r ? dyn_cast<ParmVarDecl>(r->getDecl()) : nullptr;
    if (!p || fn != d.kernel || !p->getType()->isIntegerType())
      return -1;
    return int(p->getFunctionScopeIndex());
  };
  // The bound: `var < B`, `var <= B`, `var != B`, `B > var`; or `var > 0` (trees).
  const auto *cond = dyn_cast<BinaryOperator>(fs->getCond()->IgnoreParenImpCasts());
  if (!cond || !cond->isComparisonOp())
    return f;
  const Expr *bound = nullptr;
  BinaryOperatorKind op = cond->getOpcode();
  if (isVar(cond->getLHS()))
    bound = cond->getRHS();
  else if (isVar(cond->getRHS())) {
    bound = cond->getLHS();
    op = BinaryOperator::reverseComparisonOp(op);
  }
  if (!bound)
    return f;
  f.text = var->getNameAsString() + " " + BinaryOperator::getOpcodeStr(op).str() + " " +
           spelled(d.ctx, bound);
  // The step.
  const Expr *inc = fs->getInc()->IgnoreParenImpCasts();
  const Expr *step = nullptr;
  enum { Add, Halve, Double } shape = Add;
  if (auto *uo = dyn_cast<UnaryOperator>(inc);
      uo && isVar(uo->getSubExpr()) && uo->isIncrementOp()) {
    step = nullptr; // 1
  } else if (auto *bo = dyn_cast<BinaryOperator>(inc); bo && isVar(bo->getLHS())) {
    std::optional<int64_t> rhs = constant(bo->getRHS());
    switch (bo->getOpcode()) {
    case BO_AddAssign:
      step = bo->getRHS();
      break;
    case BO_ShrAssign:
      if (rhs != 1)
        return f;
      shape = Halve;
      break;
    case BO_DivAssign:
      if (rhs != 2)
        return f;
      shape = Halve;
      break;
    case BO_ShlAssign:
      if (rhs != 1)
        return f;
      shape = Double;
      break;
    case BO_MulAssign:
      if (rhs != 2)
        return f;
      shape = Double;
      break;
    case BO_Assign:
      if (auto *add = dyn_cast<BinaryOperator>(bo->getRHS()->IgnoreParenImpCasts());
          add && add->getOpcode() == BO_Add && isVar(add->getLHS())) {
        step = add->getRHS();
        break;
      }
      return f;
    default:
      return f;
    }
  } else {
    return f;
  }
  std::optional<int64_t> i0 = constant(init), b = constant(bound);
  if (shape == Halve) {
    // `for (s = N/2; s > 0; s >>= 1)` combines 2 * (N/2) terms.
    if (i0) {
      f.kind = ReductionFactor::Constant;
      f.value = std::max<int64_t>(1, 2 * *i0);
    } else if (mentions(init, "blockDim")) {
      f.kind = ReductionFactor::BlockThreads;
    } else if (int p = paramIndex(init); p >= 0) {
      f.kind = ReductionFactor::Param;
      f.param = p;
    }
    return f;
  }
  if (shape == Double) {
    if (b) {
      f.kind = ReductionFactor::Constant;
      f.value = std::max<int64_t>(1, *b);
    } else if (mentions(bound, "blockDim")) {
      f.kind = ReductionFactor::BlockThreads;
    } else if (int p = paramIndex(bound); p >= 0) {
      f.kind = ReductionFactor::Param;
      f.param = p;
    }
    return f;
  }
  int64_t s = 1;
  ReductionFactor::Kind per = ReductionFactor::Constant;
  if (step) {
    if (std::optional<int64_t> c = constant(step); c && *c > 0)
      s = *c;
    else if (mentions(step, "gridDim"))
      per = ReductionFactor::GridThreads;
    else if (mentions(step, "blockDim"))
      per = ReductionFactor::BlockThreads;
    else
      return f;
  }
  int64_t extra = op == BO_LE ? 1 : 0;
  if (op != BO_LT && op != BO_LE && op != BO_NE)
    return f;
  int64_t start = i0.value_or(0);
  if (!i0 && per == ReductionFactor::Constant)
    return f; // a start that depends on the thread: not a count
  if (b && per == ReductionFactor::Constant) {
    f.kind = ReductionFactor::Constant;
    f.value = std::max<int64_t>(0, (*b + extra - start + s - 1) / s);
    return f;
  }
  int p = paramIndex(bound);
  if (p < 0 && !b && per == ReductionFactor::Constant && start == 0 && s == 1 &&
      mentions(bound, "blockDim")) {
    f.kind = ReductionFactor::BlockThreads; // one thread walks the block's values
    return f;
  }
  if (p < 0) {
    if (b) {
      f.kind = ReductionFactor::Constant; // a grid- or block-stride loop over a constant
      f.value = *b;
      f.per = per;
    }
    return f;
  }
  f.kind = ReductionFactor::Param;
  f.param = p;
  f.offset = per == ReductionFactor::Constant ? start - extra : -extra;
  f.stride = s;
  f.per = per;
  return f;
}

void FnVisitor::reduction(const Expr *at, const Expr *lhs, const std::string &what, bool atomic,
                          const Expr *address) {
  ReductionSite r;
  r.pos = d.sourcePos(at->getExprLoc());
  r.what = what;
  size_t from = 0;
  if (lhs)
    if (auto *ref = dyn_cast<DeclRefExpr>(lhs->IgnoreParenImpCasts()))
      if (auto *vd = dyn_cast<VarDecl>(ref->getDecl()); vd && vd->hasLocalStorage()) {
        auto it = varDepth.find(vd);
        from = it == varDepth.end() ? 0 : it->second;
      }
  for (size_t i = from; i < loops.size(); ++i)
    r.factors.push_back(tripCount(loops[i]));
  if (atomic) {
    // The threads that add into the same address.
    ReductionFactor f;
    unsigned dep = dependence(address);
    bool oncePerBlock = false, oncePerWarp = false;
    for (const Expr *g : guards) {
      auto *bo = dyn_cast<BinaryOperator>(g->IgnoreParenImpCasts());
      if (!bo || bo->getOpcode() != BO_EQ)
        continue;
      std::string text = spelled(d.ctx, bo);
      unsigned l = dependence(bo->getLHS()), rr = dependence(bo->getRHS());
      if ((l == 1 && rr == 0) || (l == 0 && rr == 1)) {
        if (text.find("& 31") != std::string::npos || text.find("% 32") != std::string::npos ||
            text.find("warpSize") != std::string::npos || text.find("&31") != std::string::npos ||
            text.find("%32") != std::string::npos)
          oncePerWarp = true;
        else
          oncePerBlock = true;
      }
    }
    if (dep == 0) {
      f.kind = oncePerBlock ? ReductionFactor::GridBlocks : ReductionFactor::GridThreads;
      f.text = oncePerBlock ? "one atomic per block into one address"
                            : "every thread's atomic into one address";
      if (oncePerWarp && !oncePerBlock) {
        f.divisor = 32;
        f.text = "one atomic per warp into one address";
      }
    } else if (dep == 2) {
      f.kind = oncePerBlock ? ReductionFactor::Constant : ReductionFactor::BlockThreads;
      f.text = "the threads of a block into one address";
      if (oncePerWarp && !oncePerBlock)
        f.divisor = 32;
    } else if (dep == 1 && !oncePerBlock) {
      f.kind = ReductionFactor::GridBlocks;
      f.text = "one atomic per block into each address";
    } else {
      f.text = "atomic into a data-dependent address";
    }
    r.factors.push_back(f);
  }
  // A plain `+=` outside any loop sums one term.
  if (r.factors.empty())
    return;
  d.reductions.push_back(std::move(r));
}

void Deriver::walk(const FunctionDecl *fd) {
  FnInfo &info = fns[fd];
  if (info.walked)
    return;
  if (info.walking) {
    refuse(fd->getLocation(), "'" + fd->getNameAsString() + "' is recursive");
    return;
  }
  info.walking = true;
  unsigned before = editsMade;
  size_t copiesBefore = copyOrder.size();
  FnVisitor v(*this, fd);
  v.TraverseDecl(const_cast<FunctionDecl *>(fd));
  bool calleeCopies = copyOrder.size() != copiesBefore;
  FnInfo &again = fns[fd]; // the map may have grown
  again.walking = false;
  again.walked = true;
  again.needsCopy = editsMade != before || calleeCopies;
  if (again.needsCopy && fd != kernel) {
    again.copyName = uniqueName(fd->getNameAsString() + "_ref");
    copyOrder.push_back(fd);
  }
}

llvm::Error refusalError(const std::string &kernel, const std::string &text) {
  return llvm::createStringError(std::make_error_code(std::errc::operation_not_supported),
                                 "no double reference for kernel '%s': %s", kernel.c_str(),
                                 text.c_str());
}

std::string bundleTypeOf(ASTContext &ctx, QualType t) {
  t = t.getCanonicalType().getUnqualifiedType();
  auto scalar = [&](QualType s) -> std::string {
    s = s.getCanonicalType().getUnqualifiedType();
    if (involvesFloat(s))
      return "f32";
    if (s->isSpecificBuiltinType(BuiltinType::Double))
      return "f64";
    if (const RecordDecl *rd = s->getAsRecordDecl())
      if (rd->getName().starts_with("double") && rd->getName().size() <= 11)
        return "f64";
    if (const auto *et = s->getAs<EnumType>())
      s = et->getDecl()->getIntegerType();
    if (s->isIntegerType() && !s->isBooleanType()) {
      uint64_t bits = ctx.getTypeSize(s);
      return (s->isSignedIntegerType() ? "i" : "u") + std::to_string(bits);
    }
    return "";
  };
  if (const auto *pt = t->getAs<PointerType>()) {
    std::string e = scalar(pt->getPointeeType());
    return (e.empty() ? "u8" : e) + "*";
  }
  std::string s = scalar(t);
  if (!s.empty())
    return s;
  return "b" + std::to_string(ctx.getTypeSizeInChars(t).getQuantity());
}

/// The start of a declaration as written: before leading attributes and
/// macros such as `__global__`.
SourceLocation declStart(const SourceManager &sm, const Decl *decl) {
  SourceLocation b = sm.getExpansionLoc(decl->getBeginLoc());
  for (const Attr *a : decl->attrs()) {
    if (a->isImplicit() || a->getLocation().isInvalid())
      continue;
    SourceLocation l = sm.getExpansionLoc(a->getRange().getBegin());
    if (sm.isBeforeInTranslationUnit(l, b) && sm.getFileID(l) == sm.getFileID(b))
      b = l;
  }
  return b;
}

} // namespace

std::string ReferenceKernel::bundleArgs() const {
  std::string s;
  for (const ReferenceParam &p : params)
    s += (s.empty() ? "" : " ") + p.bundleType;
  return s;
}

std::string ReferenceKernel::reductionsText() const {
  std::string s;
  for (const ReductionSite &r : reductions) {
    std::string f;
    for (const ReductionFactor &x : r.factors) {
      std::string t;
      switch (x.kind) {
      case ReductionFactor::Constant:
        t = std::to_string(x.value);
        break;
      case ReductionFactor::Param: {
        t = x.param >= 0 && size_t(x.param) < params.size() ? params[x.param].name : "?";
        if (x.offset)
          t = "(" + t + (x.offset > 0 ? " - " : " + ") + std::to_string(std::abs(x.offset)) + ")";
        if (x.stride != 1)
          t += " / " + std::to_string(x.stride);
        break;
      }
      case ReductionFactor::BlockThreads:
        t = "block threads";
        break;
      case ReductionFactor::GridThreads:
        t = "grid threads";
        break;
      case ReductionFactor::GridBlocks:
        t = "grid blocks";
        break;
      case ReductionFactor::Unknown:
        t = "?(" + x.text + ")";
        break;
      }
      if (x.per == ReductionFactor::BlockThreads)
        t += " / block threads";
      else if (x.per == ReductionFactor::GridThreads)
        t += " / grid threads";
      if (x.divisor != 1)
        t += " / " + std::to_string(x.divisor);
      f += (f.empty() ? "" : " * ") + t;
    }
    s += (s.empty() ? "" : "; ") + std::string("line ") + std::to_string(r.pos.line) + ": " + f;
  }
  for (size_t at; (at = s.find("*/")) != std::string::npos;)
    s.replace(at, 2, "* /");
  return s.empty() ? "none" : s;
}

uint64_t cudal1::reductionLength(const ReferenceKernel &ref, const LaunchShape &launch) {
  uint64_t blockThreads = launch.block[0] * launch.block[1] * launch.block[2];
  uint64_t blocks = launch.grid[0] * launch.grid[1] * launch.grid[2];
  uint64_t gridThreads = blocks * blockThreads;
  auto perKind = [&](ReductionFactor::Kind k) -> uint64_t {
    switch (k) {
    case ReductionFactor::BlockThreads:
      return blockThreads;
    case ReductionFactor::GridThreads:
      return gridThreads;
    case ReductionFactor::GridBlocks:
      return blocks;
    default:
      return 1;
    }
  };
  uint64_t best = 1;
  for (const ReductionSite &r : ref.reductions) {
    double len = 1;
    for (const ReductionFactor &f : r.factors) {
      double v = 1;
      switch (f.kind) {
      case ReductionFactor::Constant:
        v = double(f.value);
        break;
      case ReductionFactor::Param: {
        std::optional<int64_t> p = launch.scalar ? launch.scalar(unsigned(f.param)) : std::nullopt;
        v = p ? std::max<double>(0, double(*p - f.offset) / double(f.stride)) : 1;
        break;
      }
      case ReductionFactor::Unknown:
        v = 1;
        break;
      default:
        v = double(perKind(f.kind));
      }
      if (f.per != ReductionFactor::Constant)
        v = v / double(std::max<uint64_t>(1, perKind(f.per)));
      v /= double(std::max<int64_t>(1, f.divisor));
      len *= std::max(1.0, std::ceil(v));
    }
    best = std::max<uint64_t>(best, uint64_t(std::min(len, 1e18)));
  }
  return best;
}

namespace {
llvm::Expected<ReferenceKernel> deriveIn(ParsedUnit &u, const RewriteInput &in, unsigned index);
} // namespace

namespace {
/// The kernel of a parsed unit by name, name<args>, key or mangled name.
llvm::Expected<unsigned> findKernel(const ProgramModel &m, llvm::StringRef kernelName,
                                    const std::string &file) {
  std::vector<unsigned> hits;
  for (unsigned i = 0; i < m.kernels.size(); ++i) {
    const Kernel &k = m.kernels[i];
    if (k.name + k.templateArgs == kernelName || k.key == kernelName ||
        k.mangledName == kernelName || (k.templateArgs.empty() && k.name == kernelName))
      hits.push_back(i);
  }
  if (hits.empty())
    for (unsigned i = 0; i < m.kernels.size(); ++i)
      if (m.kernels[i].name == kernelName)
        hits.push_back(i);
  if (hits.size() != 1) {
    std::string names;
    for (const Kernel &k : m.kernels)
      names += (names.empty() ? "" : ", ") + k.name + k.templateArgs;
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "%s kernel '%s' in '%s' (kernels: %s)",
                                   hits.empty() ? "no" : "more than one", kernelName.str().c_str(),
                                   file.c_str(), names.empty() ? "none" : names.c_str());
  }
  return hits[0];
}
} // namespace

llvm::Expected<ReferenceKernel> cudal1::deriveReference(const RewriteInput &in,
                                                        llvm::StringRef kernelName) {
  auto parsed = ParsedUnit::parse(in.file, in.code, in.args);
  if (!parsed)
    return parsed.takeError();
  ParsedUnit &u = **parsed;
  llvm::Expected<unsigned> index = findKernel(u.model(), kernelName, in.file);
  if (!index)
    return index.takeError();
  return deriveIn(u, in, *index);
}

std::vector<llvm::Expected<ReferenceKernel>>
cudal1::deriveReferences(const RewriteInput &in, const std::vector<std::string> &kernels) {
  std::vector<llvm::Expected<ReferenceKernel>> out;
  auto parsed = ParsedUnit::parse(in.file, in.code, in.args);
  if (!parsed) {
    // Each kernel's answer is the parse's error, as deriveReference gives it.
    std::string why = llvm::toString(parsed.takeError());
    for (size_t i = 0; i < kernels.size(); ++i)
      out.push_back(llvm::createStringError(llvm::inconvertibleErrorCode(), why));
    return out;
  }
  ParsedUnit &u = **parsed;
  for (const std::string &name : kernels) {
    llvm::Expected<unsigned> index = findKernel(u.model(), name, in.file);
    if (!index)
      out.push_back(index.takeError());
    else
      out.push_back(deriveIn(u, in, *index));
  }
  return out;
}

namespace {
/// The reference of kernel `index` of a parsed unit.
llvm::Expected<ReferenceKernel> deriveIn(ParsedUnit &u, const RewriteInput &in, unsigned index) {
  const Kernel &k = u.model().kernels[index];
  std::string display = k.name + k.templateArgs;
  const FunctionDecl *kfd = u.kernelDecl(index);
  if (const FunctionDecl *def = kfd->getDefinition())
    kfd = def;
  Deriver d(u, kfd);

  // 2. Walk the kernel and its callees.
  d.walk(kfd);
  if (d.refusal)
    return refusalError(display, d.posOf(d.refusal->loc) + ": " + d.refusal->why);
  if (d.sharedBytes > 48 * 1024)
    return refusalError(display, d.posOf(kfd->getLocation()) +
                                     ": the promoted static shared memory (" +
                                     std::to_string(d.sharedBytes) +
                                     " bytes) exceeds the 48 KiB of a static allocation");

  ReferenceKernel ref;
  ref.kernel = display;
  ref.key = k.key;
  ref.originalEntry = k.mangledName.empty() ? k.name : k.mangledName;
  ref.reductions = d.reductions;
  ref.notes = d.notes;
  for (const ParmVarDecl *p : kfd->parameters()) {
    ReferenceParam rp;
    rp.name = p->getNameAsString();
    rp.type = d.typeString(p->getType());
    rp.referenceType = d.typeString(d.promote(p->getType()));
    rp.bundleType = bundleTypeOf(d.ctx, p->getType());
    ref.params.push_back(rp);
  }
  bool isTemplate = kfd->getTemplateInstantiationPattern() != nullptr;
  if (isTemplate) {
    bool floatArgs = false;
    if (const TemplateArgumentList *args = kfd->getTemplateSpecializationArgs())
      for (const TemplateArgument &a : args->asArray())
        floatArgs |= a.getKind() == TemplateArgument::Type && involvesFloat(a.getAsType());
    for (const ParmVarDecl *p : kfd->parameters())
      floatArgs |= involvesFloat(p->getType());
    if (d.editsMade || !d.copyOrder.empty() || floatArgs)
      return refusalError(display, d.posOf(kfd->getLocation()) +
                                       ": a kernel template that computes in float (promoted "
                                       "copies of templates are not supported yet)");
    // Nothing to promote: the instantiation is its own reference.
    ref.entry = k.mangledName;
    ref.promotesNothing = true;
    ref.notes.push_back("nothing to promote: the reference is the kernel itself");
    ref.source = "/* cudal1 reference of '" + display + "': entry " + ref.entry + "; args " +
                 ref.bundleArgs() + "; reductions " + ref.reductionsText() + " */ " + in.code;
    return ref;
  }
  if (!d.editsMade && d.copyOrder.empty())
    ref.notes.push_back("nothing to promote: the reference computes what the kernel does");

  // 3. Kernel-only edits: the entry's name, C linkage, a bound that keeps
  // any block size launchable in double (more registers).
  ref.entry = d.uniqueName(kfd->getNameAsString() + "_ref");
  std::string nameText = ref.entry;
  if (!kfd->hasAttr<CUDALaunchBoundsAttr>())
    nameText = "__launch_bounds__(1024) " + nameText;
  SourceLocation nameLoc = kfd->getLocation();
  if (nameLoc.isMacroID())
    return refusalError(display, d.posOf(nameLoc) + ": the kernel's name is written in a macro");
  d.edits[nameLoc] = Deriver::Edit{Lexer::MeasureTokenLength(nameLoc, d.sm, d.lo), nameText};
  SourceLocation start = declStart(d.sm, kfd);
  if (kfd->getStorageClass() == SC_Static) {
    // `extern "C" static` does not exist: drop `static` from the copy.
    StringRef head(d.sm.getCharacterData(start),
                   d.sm.getFileOffset(nameLoc) - d.sm.getFileOffset(start));
    size_t at = head.find("static");
    if (at != StringRef::npos)
      d.edits[start.getLocWithOffset(at)] = Deriver::Edit{6, ""};
  }

  // 4. The copies, callees first, each in its named namespaces.
  Rewriter rw(d.sm, d.lo);
  for (const auto &[loc, e] : d.edits)
    rw.ReplaceText(loc, e.length, e.text);
  auto copyOf = [&](const FunctionDecl *fd, bool isKernel) -> llvm::Expected<std::string> {
    SourceLocation b = declStart(d.sm, fd);
    SourceLocation e = d.sm.getExpansionLoc(fd->getBodyRBrace());
    if (d.sm.getFileID(b) != d.sm.getFileID(e) || !fd->hasBody())
      return refusalError(display, d.posOf(fd->getLocation()) + ": '" + fd->getNameAsString() +
                                       "' is not written in one file");
    std::string text = rw.getRewrittenText(CharSourceRange::getTokenRange(b, e));
    if (!isKernel && fd->isOverloadedOperator())
      ; // keeps its name: an overload on double types
    else if (!isKernel) {
      // The name was not an edit of a call: rename the declaration itself.
      std::string head = rw.getRewrittenText(CharSourceRange::getCharRange(b, fd->getLocation()));
      std::string name = fd->getNameAsString();
      if (fd->getLocation().isMacroID() || text.compare(head.size(), name.size(), name) != 0)
        return refusalError(display, d.posOf(fd->getLocation()) + ": the name of '" + name +
                                         "' is written in a macro");
      text = head + d.fns[fd].copyName + text.substr(head.size() + name.size());
    }
    std::string open, close;
    for (const DeclContext *dc = fd->getDeclContext(); dc; dc = dc->getParent()) {
      if (const auto *ns = dyn_cast<NamespaceDecl>(dc)) {
        if (ns->isAnonymousNamespace())
          continue; // its names are visible in the enclosing scope
        open = "namespace " + ns->getNameAsString() + " { " + open;
        close += "}";
      } else if (isa<RecordDecl>(dc)) {
        return refusalError(display, d.posOf(fd->getLocation()) + ": '" + fd->getNameAsString() +
                                         "' is a class member");
      }
    }
    return open + (isKernel ? "extern \"C\" " : "") + text + (close.empty() ? "" : " " + close) +
           "\n";
  };
  std::string tail = "\n// --- cudal1: the double reference of '" + display +
                     "' (cudal1-opt --reference): float promoted to double\n";
  for (const std::string &h : d.helpers) {
    tail += helperText().lookup(h);
    ref.parts.push_back({h, helperText().lookup(h)});
  }
  for (const FunctionDecl *fd : d.copyOrder) {
    auto t = copyOf(fd, false);
    if (!t)
      return t.takeError();
    tail += *t;
    ref.promotedCallees.push_back(d.fns[fd].copyName);
    // Operators keep their names: told apart by their text.
    ref.parts.push_back({fd->isOverloadedOperator() ? *t : d.fns[fd].copyName, *t});
  }
  auto t = copyOf(kfd, true);
  if (!t)
    return t.takeError();
  tail += *t;
  ref.parts.push_back({ref.entry, *t});
  ref.promotesNothing = !d.editsMade && d.copyOrder.empty();
  std::string code = in.code;
  if (!code.empty() && code.back() != '\n')
    code += "\n";
  ref.source = "/* cudal1 reference of '" + display + "': entry " + ref.entry + "; args " +
               ref.bundleArgs() + "; reductions " + ref.reductionsText() + " */ " + code + tail;
  LLVM_DEBUG(llvm::dbgs() << "reference of " << display << ": " << d.edits.size() << " edits, "
                          << d.copyOrder.size() << " callee copies\n");
  return ref;
}
} // namespace

// --- the reference program ------------------------------------------------

namespace {

/// The host side of a reference program, appended once: double shadows of
/// float allocations, kept across launches and re-read where the float
/// values changed, and the wrappers' launch protocol. Nothing is printed
/// unless the run cannot go on (the program's output is what is compared);
/// notes go to $CUDAL1_REFERENCE_NOTES when it is set.
const char *const kProgramRuntime = runtime::referenceProgram;

/// The named namespaces around a declaration, outermost first; false for an
/// anonymous one or a class.
bool enclosingNamespaces(const Decl *d, std::vector<std::string> &out) {
  for (const DeclContext *dc = d->getDeclContext(); dc; dc = dc->getParent()) {
    if (const auto *ns = dyn_cast<NamespaceDecl>(dc)) {
      if (ns->isAnonymousNamespace())
        return false;
      out.insert(out.begin(), ns->getNameAsString());
    } else if (isa<RecordDecl>(dc) || isa<FunctionDecl>(dc)) {
      return false;
    }
  }
  return true;
}

std::string quoted(const std::string &s) {
  std::string out = "\"";
  for (char c : s)
    out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

} // namespace

unsigned ReferenceProgram::promoted() const {
  unsigned n = 0;
  for (const ReferenceProgramKernel &k : kernels)
    n += k.promoted;
  return n;
}

std::string ReferenceProgram::summary() const {
  std::string s =
      std::to_string(promoted()) + " of " + std::to_string(kernels.size()) + " kernel(s) promoted";
  std::string kept;
  for (const ReferenceProgramKernel &k : kernels) {
    if (!k.promoted)
      kept += (kept.empty() ? "" : "; ") + std::string("'") + k.kernel + "' (" + k.why + ")";
    else if (k.leftAlone)
      kept += (kept.empty() ? "" : "; ") + std::string("'") + k.kernel + "' at " +
              std::to_string(k.leftAlone) + " launch site(s) in macros or templates";
  }
  return kept.empty() ? s : s + "; kept in float: " + kept;
}

llvm::Expected<ReferenceProgram> cudal1::deriveReferenceProgram(const RewriteInput &in) {
  auto parsed = ParsedUnit::parse(in.file, in.code, in.args);
  if (!parsed)
    return parsed.takeError();
  ParsedUnit &u = **parsed;
  const ProgramModel &m = u.model();
  ASTContext &ast = u.ast();
  SourceManager &sm = ast.getSourceManager();
  const LangOptions &lo = ast.getLangOpts();
  ReferenceProgram prog;

  // 1. Each kernel's reference; their pieces merged, one copy per name.
  std::vector<std::pair<std::string, std::string>> merged;
  std::map<std::string, std::string> byName;
  std::vector<ReferenceKernel> refs(m.kernels.size());
  std::vector<std::vector<std::string>> spaces(m.kernels.size());
  std::vector<SourceLocation> declEnd(m.kernels.size());
  for (unsigned i = 0; i < m.kernels.size(); ++i) {
    const Kernel &k = m.kernels[i];
    ReferenceProgramKernel pk;
    pk.kernel = k.name + k.templateArgs;
    pk.key = k.key;
    auto keep = [&](std::string why) {
      pk.why = std::move(why);
      prog.kernels.push_back(pk);
    };
    const FunctionDecl *first = u.kernelDecl(i)->getFirstDecl();
    if (k.fromHeader ||
        sm.getFileID(sm.getExpansionLoc(first->getLocation())) != sm.getMainFileID()) {
      keep("declared in a header");
      continue;
    }
    llvm::Expected<ReferenceKernel> ref = deriveIn(u, in, i);
    if (!ref) {
      std::string why = llvm::toString(ref.takeError());
      size_t colon = why.find("': ");
      keep(colon == std::string::npos ? why : why.substr(colon + 3));
      continue;
    }
    if (ref->promotesNothing) {
      keep("nothing to promote");
      continue;
    }
    std::string bad;
    for (const ReferenceParam &p : ref->params)
      if (p.type.find('&') != std::string::npos ||
          (p.type != p.referenceType && std::count(p.type.begin(), p.type.end(), '*') > 1))
        bad = "parameter '" + p.name + "' (" + p.type +
              ") holds float pointers the reference program cannot shadow";
    if (!bad.empty()) {
      keep(bad);
      continue;
    }
    for (const ReferenceParam &p : ref->params)
      if (p.type.find('(') != std::string::npos)
        bad = "parameter '" + p.name + "' has a type the wrapper cannot spell (" + p.type + ")";
    if (!bad.empty()) {
      keep(bad);
      continue;
    }
    if (!enclosingNamespaces(first, spaces[i])) {
      keep("declared in an anonymous namespace or a class");
      continue;
    }
    // Where the wrapper's declaration goes: after the kernel's first
    // declaration, whose parameter types are visible there.
    SourceLocation after;
    if (first->doesThisDeclarationHaveABody())
      after = Lexer::getLocForEndOfToken(sm.getExpansionLoc(first->getBodyRBrace()), 0, sm, lo);
    else
      after = Lexer::findLocationAfterToken(sm.getExpansionLoc(first->getEndLoc()), tok::semi, sm,
                                            lo, false);
    if (after.isInvalid() || !after.isFileID()) {
      keep("the end of its first declaration is not found");
      continue;
    }
    declEnd[i] = after;
    for (const auto &[name, text] : ref->parts) {
      auto it = byName.find(name);
      if (it != byName.end() && it->second != text)
        bad = "its promoted copy '" + name + "' differs from another kernel's of that name";
    }
    if (!bad.empty()) {
      keep(bad);
      continue;
    }
    for (const auto &[name, text] : ref->parts)
      if (byName.emplace(name, text).second)
        merged.push_back({name, text});
    pk.entry = ref->entry;
    pk.promoted = true;
    refs[i] = std::move(*ref);
    prog.kernels.push_back(pk);
  }
  auto entryOf = [&](int kernel) -> ReferenceProgramKernel * {
    if (kernel < 0)
      return nullptr;
    for (ReferenceProgramKernel &pk : prog.kernels)
      if (pk.key == m.kernels[kernel].key && pk.promoted)
        return &pk;
    return nullptr;
  };

  // 2. Host edits: a wrapper's declaration after each promoted kernel's
  // first declaration, and each launch of it calling the wrapper. Lines
  // are kept: edits add no line breaks before the end of the file.
  Rewriter rw(sm, lo);
  auto wrapperName = [&](unsigned i) { return "cudal1_refcall_" + refs[i].entry; };
  auto qualified = [&](unsigned i) {
    std::string q = "::";
    for (const std::string &n : spaces[i])
      q += n + "::";
    return q + wrapperName(i);
  };
  auto signature = [&](unsigned i) {
    std::string s = "static void " + wrapperName(i) +
                    "(dim3 cudal1_grid, dim3 cudal1_block, size_t cudal1_shmem, "
                    "cudaStream_t cudal1_stream";
    for (size_t p = 0; p < refs[i].params.size(); ++p)
      s += ", " + refs[i].params[p].type + " cudal1_p" + std::to_string(p);
    return s + ")";
  };
  std::map<std::string, unsigned> perLocation;
  for (const LaunchSite &l : m.launches)
    ++perLocation[l.pos.str()];
  for (const LaunchSite &l : m.launches) {
    ReferenceProgramKernel *pk = entryOf(l.kernelIndex);
    if (!pk || l.pos.file != m.mainFile)
      continue;
    const CUDAKernelCallExpr *kc = u.launchExpr(l.id);
    bool defaulted = false;
    for (unsigned a = 0; a < kc->getNumArgs(); ++a)
      defaulted |= isa<CXXDefaultArgExpr>(kc->getArg(a));
    if (perLocation[l.pos.str()] > 1 || kc->getBeginLoc().isMacroID() ||
        kc->getEndLoc().isMacroID() || defaulted ||
        kc->getNumArgs() != refs[l.kernelIndex].params.size()) {
      ++pk->leftAlone;
      continue;
    }
    const CallExpr *cfg = kc->getConfig();
    auto cfgText = [&](unsigned i, const char *dflt) -> std::string {
      if (!cfg || i >= cfg->getNumArgs() || isa<CXXDefaultArgExpr>(cfg->getArg(i)))
        return dflt;
      return "(" + spelled(ast, cfg->getArg(i)->IgnoreUnlessSpelledInSource()) + ")";
    };
    std::string call = qualified(unsigned(l.kernelIndex)) + "(" + cfgText(0, "1") + ", " +
                       cfgText(1, "1") + ", " + cfgText(2, "0") + ", " + cfgText(3, "0");
    for (unsigned a = 0; a < kc->getNumArgs(); ++a)
      call += ", " + spelled(ast, kc->getArg(a));
    call += ")";
    CharSourceRange range = CharSourceRange::getTokenRange(kc->getSourceRange());
    StringRef old = Lexer::getSourceText(range, sm, lo);
    call += std::string(std::count(old.begin(), old.end(), '\n'), '\n');
    rw.ReplaceText(range, call);
    ++pk->launches;
  }
  std::string wrappers;
  for (unsigned i = 0; i < m.kernels.size(); ++i) {
    ReferenceProgramKernel *pk = entryOf(int(i));
    if (!pk || !pk->launches)
      continue;
    rw.InsertTextAfter(declEnd[i], " extern \"C++\" { " + signature(i) + "; }");
    // The wrapper: shadows, the reference, the rounded results; the float
    // kernel where the shadows cannot be made.
    const ReferenceKernel &r = refs[i];
    std::string open, close;
    for (const std::string &n : spaces[i]) {
      open += "namespace " + n + " { ";
      close += "} ";
    }
    std::string w = open + "extern \"C++\" { " + signature(i) + " {\n";
    w += "  cudal1_refprog::Launch cudal1_l(" + quoted(pk->kernel) + ", cudal1_stream);\n";
    std::string refArgs, origArgs;
    for (size_t p = 0; p < r.params.size(); ++p) {
      const ReferenceParam &rp = r.params[p];
      std::string a = "cudal1_p" + std::to_string(p);
      origArgs += (p ? ", " : "") + a;
      std::string v = a;
      if (rp.type != rp.referenceType && rp.type.find('*') != std::string::npos) {
        v = "cudal1_r" + std::to_string(p);
        w += "  " + rp.referenceType + " " + v + " = (" + rp.referenceType + ")cudal1_l.shadow(" +
             a + ");\n";
      } else if (rp.type != rp.referenceType) {
        v = "cudal1_refprog::widen(" + a + ")";
      }
      refArgs += (p ? ", " : "") + v;
    }
    w += "  if (cudal1_l.enter()) {\n";
    w += "    if (2 * cudal1_shmem > 48 * 1024)\n";
    w += "      cudaFuncSetAttribute(" + r.entry +
         ", cudaFuncAttributeMaxDynamicSharedMemorySize, int(2 * cudal1_shmem));\n";
    w += "    " + r.entry + "<<<cudal1_grid, cudal1_block, 2 * cudal1_shmem, cudal1_stream>>>(" +
         refArgs + ");\n";
    w += "    if (cudal1_l.leave(cudaGetLastError()))\n      return;\n  }\n";
    w += "  " + u.kernelDecl(i)->getNameAsString() +
         "<<<cudal1_grid, cudal1_block, cudal1_shmem, cudal1_stream>>>(" + origArgs + ");\n";
    w += "} } " + close + "\n";
    wrappers += w;
  }
  bool any = false;
  for (ReferenceProgramKernel &pk : prog.kernels) {
    if (pk.promoted && !pk.launches) {
      pk.promoted = false;
      pk.why = pk.leftAlone ? "its launches are in macros or templates" : "it is never launched";
    }
    any |= pk.promoted;
  }
  if (!any)
    return prog;

  // 3. The file: the header comment, the edited original, the runtime, the
  // promoted copies, the wrappers.
  std::string text = in.code;
  if (const RewriteBuffer *buf = rw.getRewriteBufferFor(sm.getMainFileID()))
    text = std::string(buf->begin(), buf->end());
  if (!text.empty() && text.back() != '\n')
    text += "\n";
  std::string summary = prog.summary();
  for (size_t at; (at = summary.find("*/")) != std::string::npos;)
    summary.replace(at, 2, "* /");
  std::string head = "/* cudal1 reference program: " + summary + " */ ";
  std::string tail = kProgramRuntime;
  tail += "// --- cudal1: the double references (cudal1-opt --reference)\n";
  for (const auto &[name, body] : merged)
    tail += body;
  tail += "// --- cudal1: the launches of the promoted kernels\n" + wrappers;
  prog.source = head + text + tail;
  return prog;
}
