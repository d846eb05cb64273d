// Parsing normalized index text into MLIR affine expressions, and the
// algebra the analyses need on top of MLIR's (coefficients, evaluation).
#include "cudal1/Analysis/AffineIndex.h"

#include "mlir/IR/AffineExprVisitor.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <random>

using namespace cudal1;
using llvm::StringRef;
using mlir::AffineExpr;
using mlir::AffineExprKind;

IndexSpace::IndexSpace(mlir::MLIRContext &ctx) : ctx(ctx) {
  for (const char *n :
       {"threadIdx.x", "threadIdx.y", "threadIdx.z", "blockIdx.x", "blockIdx.y", "blockIdx.z"}) {
    dims[n] = dimNames.size();
    dimNames.push_back(n);
  }
}

std::optional<unsigned> IndexSpace::symbol(StringRef n) const {
  auto it = symbols.find(n);
  if (it == symbols.end())
    return std::nullopt;
  return it->second;
}

AffineExpr IndexSpace::name(StringRef n) {
  if (auto it = dims.find(n); it != dims.end())
    return mlir::getAffineDimExpr(it->second, &ctx);
  if (n.starts_with("$") || n.starts_with("?")) {
    unsigned pos = dimNames.size();
    dims[n.str()] = pos;
    dimNames.push_back(n.str());
    return mlir::getAffineDimExpr(pos, &ctx);
  }
  if (auto it = symbols.find(n); it != symbols.end())
    return mlir::getAffineSymbolExpr(it->second, &ctx);
  unsigned pos = symbolNames.size();
  symbols[n.str()] = pos;
  symbolNames.push_back(n.str());
  return mlir::getAffineSymbolExpr(pos, &ctx);
}

namespace {

/// Recursive descent over: expr := term (('+'|'-') term)*;
/// term := unary (('*'|'/'|'%') unary)*; unary := '-' unary | primary;
/// primary := integer | name | '(' expr ')'.
class Parser {
public:
  Parser(StringRef text, IndexSpace &space, mlir::MLIRContext &ctx,
         const std::function<std::string(StringRef)> &rename,
         std::function<AffineExpr(StringRef)> lookup)
      : text(text), space(space), ctx(ctx), rename(rename), lookup(std::move(lookup)) {}

  std::optional<AffineExpr> parseAll() {
    auto e = expr();
    skipSpace();
    if (!e || pos != text.size())
      return std::nullopt;
    return e;
  }

private:
  StringRef text;
  size_t pos = 0;
  IndexSpace &space;
  mlir::MLIRContext &ctx;
  const std::function<std::string(StringRef)> &rename;
  std::function<AffineExpr(StringRef)> lookup;

  void skipSpace() {
    while (pos < text.size() && isspace((unsigned char)text[pos]))
      ++pos;
  }
  bool eat(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }

  std::optional<AffineExpr> expr() {
    auto lhs = term();
    while (lhs) {
      if (eat('+')) {
        auto rhs = term();
        if (!rhs)
          return std::nullopt;
        lhs = *lhs + *rhs;
      } else if (eat('-')) {
        auto rhs = term();
        if (!rhs)
          return std::nullopt;
        lhs = *lhs - *rhs;
      } else {
        break;
      }
    }
    return lhs;
  }

  std::optional<AffineExpr> term() {
    auto lhs = unary();
    while (lhs) {
      char op = 0;
      if (eat('*'))
        op = '*';
      else if (eat('/'))
        op = '/';
      else if (eat('%'))
        op = '%';
      else
        break;
      auto rhs = unary();
      if (!rhs)
        return std::nullopt;
      if (op == '*') {
        lhs = *lhs * *rhs;
      } else {
        // Division and remainder by zero are not indices.
        if (auto c = llvm::dyn_cast<mlir::AffineConstantExpr>(*rhs); c && c.getValue() <= 0)
          return std::nullopt;
        lhs = op == '/' ? lhs->floorDiv(*rhs) : *lhs % *rhs;
      }
    }
    return lhs;
  }

  std::optional<AffineExpr> unary() {
    if (eat('-')) {
      auto e = unary();
      if (!e)
        return std::nullopt;
      return -*e;
    }
    return primary();
  }

  std::optional<AffineExpr> primary() {
    skipSpace();
    if (pos >= text.size())
      return std::nullopt;
    if (eat('(')) {
      auto e = expr();
      if (!e || !eat(')'))
        return std::nullopt;
      return e;
    }
    char c = text[pos];
    if (isdigit((unsigned char)c)) {
      size_t start = pos;
      while (pos < text.size() && isdigit((unsigned char)text[pos]))
        ++pos;
      long long v;
      if (text.substr(start, pos - start).getAsInteger(10, v))
        return std::nullopt;
      // Integer suffixes (u, l) from the source.
      while (pos < text.size() && strchr("uUlL", text[pos]))
        ++pos;
      return mlir::getAffineConstantExpr(v, &ctx);
    }
    if (isalpha((unsigned char)c) || c == '_' || c == '$' || c == '?') {
      size_t start = pos++;
      while (pos < text.size() && (isalnum((unsigned char)text[pos]) || text[pos] == '_' ||
                                   text[pos] == '.' || text[pos] == ':'))
        ++pos;
      StringRef n = text.substr(start, pos - start);
      if (rename) {
        std::string r = rename(n);
        return lookup(r);
      }
      return lookup(n);
    }
    return std::nullopt;
  }
};

bool dependsOn(AffineExpr e, unsigned dim) { return e.isFunctionOfDim(dim); }

} // namespace

std::optional<AffineExpr> IndexSpace::parse(StringRef text,
                                            const std::function<std::string(StringRef)> &rename) {
  Parser p(text, *this, ctx, rename, [this](StringRef n) { return name(n); });
  return p.parseAll();
}

std::string IndexSpace::print(AffineExpr e) const {
  // Precedence: 0 sum, 1 product; parenthesize a sum inside a product.
  std::function<std::string(AffineExpr, int)> go = [&](AffineExpr x, int prec) -> std::string {
    switch (x.getKind()) {
    case AffineExprKind::Constant: {
      int64_t v = llvm::cast<mlir::AffineConstantExpr>(x).getValue();
      return v < 0 && prec > 0 ? "(" + std::to_string(v) + ")" : std::to_string(v);
    }
    case AffineExprKind::DimId:
      return dimNames[llvm::cast<mlir::AffineDimExpr>(x).getPosition()];
    case AffineExprKind::SymbolId:
      return symbolNames[llvm::cast<mlir::AffineSymbolExpr>(x).getPosition()];
    case AffineExprKind::Add: {
      auto b = llvm::cast<mlir::AffineBinaryOpExpr>(x);
      std::string l = go(b.getLHS(), 0);
      AffineExpr r = b.getRHS();
      std::string s;
      // x + y * -c prints as x - y * c.
      if (auto c = llvm::dyn_cast<mlir::AffineConstantExpr>(r); c && c.getValue() < 0)
        s = l + " - " + std::to_string(-c.getValue());
      else if (auto m = llvm::dyn_cast<mlir::AffineBinaryOpExpr>(r);
               m && m.getKind() == AffineExprKind::Mul &&
               llvm::isa<mlir::AffineConstantExpr>(m.getRHS()) &&
               llvm::cast<mlir::AffineConstantExpr>(m.getRHS()).getValue() < 0) {
        int64_t c = -llvm::cast<mlir::AffineConstantExpr>(m.getRHS()).getValue();
        s = l + " - " +
            (c == 1 ? go(m.getLHS(), 1) : go(m.getLHS(), 1) + " * " + std::to_string(c));
      } else {
        s = l + " + " + go(r, 0);
      }
      return prec > 0 ? "(" + s + ")" : s;
    }
    case AffineExprKind::Mul: {
      auto b = llvm::cast<mlir::AffineBinaryOpExpr>(x);
      if (auto c = llvm::dyn_cast<mlir::AffineConstantExpr>(b.getRHS()); c && c.getValue() == -1)
        return "-" + go(b.getLHS(), 1);
      return go(b.getLHS(), 1) + " * " + go(b.getRHS(), 1);
    }
    case AffineExprKind::FloorDiv:
    case AffineExprKind::CeilDiv:
    case AffineExprKind::Mod: {
      auto b = llvm::cast<mlir::AffineBinaryOpExpr>(x);
      const char *op = x.getKind() == AffineExprKind::Mod        ? " % "
                       : x.getKind() == AffineExprKind::FloorDiv ? " / "
                                                                 : " ceildiv ";
      std::string s = go(b.getLHS(), 1) + op + go(b.getRHS(), 2);
      return prec > 1 ? "(" + s + ")" : s;
    }
    }
    return "?";
  };
  return go(e, 0);
}

bool cudal1::usesOpaque(AffineExpr e, const IndexSpace &space) {
  for (unsigned d = IndexSpace::NumBuiltinDims; d < space.numDims(); ++d)
    if (space.isOpaqueDim(d) && e.isFunctionOfDim(d))
      return true;
  return false;
}

std::optional<AffineExpr> cudal1::coefficientOf(AffineExpr e, unsigned dim,
                                                const IndexSpace &space) {
  if (usesOpaque(e, space))
    return std::nullopt;
  mlir::MLIRContext *ctx = e.getContext();
  std::function<std::optional<AffineExpr>(AffineExpr)> go =
      [&](AffineExpr x) -> std::optional<AffineExpr> {
    if (!dependsOn(x, dim))
      return mlir::getAffineConstantExpr(0, ctx);
    switch (x.getKind()) {
    case AffineExprKind::DimId:
      return mlir::getAffineConstantExpr(1, ctx);
    case AffineExprKind::Add: {
      auto b = llvm::cast<mlir::AffineBinaryOpExpr>(x);
      auto l = go(b.getLHS()), r = go(b.getRHS());
      if (!l || !r)
        return std::nullopt;
      return *l + *r;
    }
    case AffineExprKind::Mul: {
      auto b = llvm::cast<mlir::AffineBinaryOpExpr>(x);
      bool dl = dependsOn(b.getLHS(), dim), dr = dependsOn(b.getRHS(), dim);
      if (dl && dr)
        return std::nullopt; // quadratic in dim
      if (dl) {
        auto l = go(b.getLHS());
        return l ? std::optional<AffineExpr>(*l * b.getRHS()) : std::nullopt;
      }
      auto r = go(b.getRHS());
      return r ? std::optional<AffineExpr>(b.getLHS() * *r) : std::nullopt;
    }
    default:
      return std::nullopt; // a division or remainder involving dim
    }
  };
  return go(e);
}

AffineExpr cudal1::dropDims(AffineExpr e, const IndexSpace &space) {
  llvm::SmallVector<AffineExpr> zeros(space.numDims(),
                                      mlir::getAffineConstantExpr(0, e.getContext()));
  return e.replaceDims(zeros);
}

std::optional<int64_t> cudal1::evaluate(AffineExpr e, llvm::ArrayRef<int64_t> dimValues,
                                        llvm::ArrayRef<int64_t> symbolValues) {
  mlir::MLIRContext *ctx = e.getContext();
  // Enough replacements for any position the expression uses.
  unsigned nd = 0, ns = 0;
  e.walk([&](AffineExpr x) {
    if (auto d = llvm::dyn_cast<mlir::AffineDimExpr>(x))
      nd = std::max(nd, d.getPosition() + 1);
    if (auto s = llvm::dyn_cast<mlir::AffineSymbolExpr>(x))
      ns = std::max(ns, s.getPosition() + 1);
  });
  llvm::SmallVector<AffineExpr> dv, sv;
  for (unsigned i = 0; i < nd; ++i)
    dv.push_back(mlir::getAffineConstantExpr(i < dimValues.size() ? dimValues[i] : 0, ctx));
  for (unsigned i = 0; i < ns; ++i)
    sv.push_back(mlir::getAffineConstantExpr(i < symbolValues.size() ? symbolValues[i] : 0, ctx));
  AffineExpr r = e.replaceDimsAndSymbols(dv, sv);
  if (auto c = llvm::dyn_cast<mlir::AffineConstantExpr>(r))
    return c.getValue();
  return std::nullopt;
}

bool cudal1::sameFunction(AffineExpr a, AffineExpr b, const IndexSpace &space) {
  if (a == b)
    return true;
  std::mt19937_64 rng(0x5eed);
  std::uniform_int_distribution<int64_t> dist(1, 997);
  for (int trial = 0; trial < 4; ++trial) {
    std::vector<int64_t> dv(space.numDims()), sv(space.numSymbols());
    for (auto &v : dv)
      v = dist(rng);
    for (auto &v : sv)
      v = dist(rng);
    auto x = evaluate(a, dv, sv), y = evaluate(b, dv, sv);
    if (!x || !y || *x != *y)
      return false;
  }
  return true;
}

Stride cudal1::strideAlong(AffineExpr e, unsigned dim, const IndexSpace &space) {
  Stride s;
  auto c = coefficientOf(e, dim, space);
  if (!c)
    return s;
  AffineExpr simplified = mlir::simplifyAffineExpr(*c, space.numDims(), space.numSymbols());
  if (auto k = llvm::dyn_cast<mlir::AffineConstantExpr>(simplified)) {
    s.kind = Stride::Kind::Constant;
    s.value = k.getValue();
    s.text = std::to_string(s.value);
    return s;
  }
  s.kind = Stride::Kind::Symbolic;
  s.text = space.print(simplified);
  return s;
}

std::optional<int64_t> cudal1::globalCoefficient(AffineExpr e, unsigned d, IndexSpace &space) {
  auto ct = coefficientOf(e, IndexSpace::ThreadX + d, space);
  auto cb = coefficientOf(e, IndexSpace::BlockX + d, space);
  if (!ct || !cb)
    return std::nullopt;
  AffineExpr t = mlir::simplifyAffineExpr(*ct, space.numDims(), space.numSymbols());
  auto c = llvm::dyn_cast<mlir::AffineConstantExpr>(t);
  if (!c)
    return std::nullopt;
  static const char *blockDim[] = {"blockDim.x", "blockDim.y", "blockDim.z"};
  AffineExpr expected = *space.parse(blockDim[d]) * c.getValue();
  if (!sameFunction(*cb, expected, space))
    return std::nullopt;
  return c.getValue();
}

bool cudal1::dependsOnGlobalIdsOnly(AffineExpr e, IndexSpace &space) {
  static const char *blockDim[] = {"blockDim.x", "blockDim.y", "blockDim.z"};
  unsigned bdPos[3];
  for (unsigned d = 0; d < 3; ++d) {
    auto bd = space.parse(blockDim[d]); // registers the symbol if it is new
    bdPos[d] = llvm::cast<mlir::AffineSymbolExpr>(*bd).getPosition();
  }
  std::mt19937_64 rng(0xb10c);
  std::uniform_int_distribution<int64_t> small(1, 64), any(1, 997);
  for (int trial = 0; trial < 8; ++trial) {
    std::vector<int64_t> dv(space.numDims()), sv(space.numSymbols());
    for (auto &v : dv)
      v = any(rng);
    for (auto &v : sv)
      v = any(rng);
    std::vector<int64_t> dv2 = dv, sv2 = sv;
    for (unsigned d = 0; d < 3; ++d) {
      int64_t bd = small(rng), b = small(rng) - 1, t = small(rng) % bd;
      int64_t g = b * bd + t;
      int64_t bd2 = small(rng);
      if (bd2 == bd)
        bd2 = bd + 1;
      dv[IndexSpace::ThreadX + d] = t;
      dv[IndexSpace::BlockX + d] = b;
      sv[bdPos[d]] = bd;
      dv2[IndexSpace::ThreadX + d] = g % bd2;
      dv2[IndexSpace::BlockX + d] = g / bd2;
      sv2[bdPos[d]] = bd2;
    }
    auto x = evaluate(e, dv, sv), y = evaluate(e, dv2, sv2);
    if (!x || !y || *x != *y)
      return false;
  }
  return true;
}

llvm::SmallVector<AffineExpr> cudal1::gridStrideFold(AffineExpr e, IndexSpace &space,
                                                     bool &folded) {
  mlir::MLIRContext *ctx = e.getContext();
  llvm::SmallVector<AffineExpr> fold;
  for (unsigned d = 0; d < space.numDims(); ++d)
    fold.push_back(mlir::getAffineDimExpr(d, ctx));
  folded = false;
  static const char *gridSize[] = {"blockDim.x * gridDim.x", "blockDim.y * gridDim.y",
                                   "blockDim.z * gridDim.z"};
  for (unsigned d = IndexSpace::NumBuiltinDims; d < space.numDims(); ++d) {
    auto c = coefficientOf(e, d, space);
    if (!c || !e.isFunctionOfDim(d) || llvm::isa<mlir::AffineConstantExpr>(*c))
      continue;
    for (unsigned x = 0; x < 3; ++x) {
      auto ct = coefficientOf(e, IndexSpace::ThreadX + x, space);
      if (ct && sameFunction(*c, *ct * *space.parse(gridSize[x]), space)) {
        fold[d] = mlir::getAffineConstantExpr(0, ctx);
        folded = true;
      }
    }
  }
  return fold;
}

// --- affine forms ----------------------------------------------------------

namespace {

/// A polynomial over names: each monomial is its sorted factor names
/// (variables and symbols) with an integer coefficient.
using Poly = std::map<std::vector<std::string>, int64_t>;

bool isVariable(llvm::StringRef n) {
  return n.starts_with("threadIdx.") || n.starts_with("blockIdx.") || n.starts_with("$") ||
         n.starts_with("#");
}

bool isLaunchShape(llvm::StringRef n) {
  return n.starts_with("blockDim.") || n.starts_with("gridDim.");
}

/// Variable order: threadIdx, blockIdx, loop counters by number, atoms.
int64_t variableRank(llvm::StringRef n) {
  static const char *builtins[] = {"threadIdx.x", "threadIdx.y", "threadIdx.z",
                                   "blockIdx.x",  "blockIdx.y",  "blockIdx.z"};
  for (int i = 0; i < 6; ++i)
    if (n == builtins[i])
      return i;
  int64_t v = 0;
  if (n.starts_with("$k") && !n.drop_front(2).getAsInteger(10, v))
    return 100 + v;
  if (n.starts_with("#") && !n.drop_front(1).getAsInteger(10, v))
    return 1000000 + v;
  return 2000000;
}

bool addTo(Poly &p, const std::vector<std::string> &key, int64_t c) {
  int64_t &slot = p[key];
  if (__builtin_add_overflow(slot, c, &slot))
    return false;
  if (slot == 0)
    p.erase(key);
  return true;
}

std::optional<Poly> plus(const Poly &a, const Poly &b, int64_t sign) {
  Poly r = a;
  for (const auto &[k, c] : b) {
    int64_t v;
    if (__builtin_mul_overflow(c, sign, &v) || !addTo(r, k, v))
      return std::nullopt;
  }
  return r;
}

std::optional<Poly> times(const Poly &a, const Poly &b) {
  Poly r;
  for (const auto &[ka, ca] : a)
    for (const auto &[kb, cb] : b) {
      std::vector<std::string> k = ka;
      k.insert(k.end(), kb.begin(), kb.end());
      std::sort(k.begin(), k.end());
      int64_t c;
      if (__builtin_mul_overflow(ca, cb, &c) || !addTo(r, k, c))
        return std::nullopt;
    }
  return r;
}

SymbolicValue symbolicOf(const Poly &p) {
  SymbolicValue v;
  for (const auto &[k, c] : p)
    v.terms.push_back(Monomial{c, k});
  return v;
}

/// The linear part of `p`, or the reason it is not linear.
std::optional<LinearPart> linearOf(const Poly &p, std::string &why) {
  std::map<std::string, Poly> byVar;
  Poly constant;
  for (const auto &[k, c] : p) {
    std::vector<std::string> rest;
    std::string var;
    for (const std::string &f : k) {
      if (!isVariable(f)) {
        rest.push_back(f);
        continue;
      }
      if (!var.empty()) {
        why = "the index multiplies " + var + " by " + f;
        return std::nullopt;
      }
      var = f;
    }
    if (!addTo(var.empty() ? constant : byVar[var], rest, c))
      return std::nullopt;
  }
  LinearPart l;
  for (const auto &[var, coeff] : byVar)
    if (!coeff.empty())
      l.terms.push_back(AffineTerm{var, symbolicOf(coeff)});
  std::stable_sort(l.terms.begin(), l.terms.end(), [](const AffineTerm &a, const AffineTerm &b) {
    return variableRank(a.var) < variableRank(b.var);
  });
  l.constant = symbolicOf(constant);
  return l;
}

class FormBuilder {
public:
  FormBuilder(IndexSpace &space, AffineForm &form) : space(space), form(form) {}

  std::optional<Poly> go(AffineExpr e) {
    switch (e.getKind()) {
    case AffineExprKind::Constant: {
      Poly p;
      if (int64_t v = llvm::cast<mlir::AffineConstantExpr>(e).getValue())
        p[{}] = v;
      return p;
    }
    case AffineExprKind::DimId: {
      const std::string &n = space.dimName(llvm::cast<mlir::AffineDimExpr>(e).getPosition());
      if (n[0] == '?') {
        form.whyNot = n == "?load"   ? "the index reads memory"
                      : n == "?call" ? "the index calls a function"
                      : n == "?expr" ? "the index has an operation outside + - * / %"
                                     : "the index depends on '" + n.substr(1) +
                                           "', whose relation to the thread index is unknown";
        return std::nullopt;
      }
      return Poly{{{n}, 1}};
    }
    case AffineExprKind::SymbolId:
      return Poly{{{space.symbolName(llvm::cast<mlir::AffineSymbolExpr>(e).getPosition())}, 1}};
    case AffineExprKind::Add:
    case AffineExprKind::Mul: {
      auto b = llvm::cast<mlir::AffineBinaryOpExpr>(e);
      auto l = go(b.getLHS());
      auto r = l ? go(b.getRHS()) : std::nullopt;
      if (!r)
        return std::nullopt;
      auto out = e.getKind() == AffineExprKind::Add ? plus(*l, *r, 1) : times(*l, *r);
      if (!out)
        form.whyNot = "a coefficient overflows";
      return out;
    }
    case AffineExprKind::FloorDiv:
    case AffineExprKind::Mod:
    case AffineExprKind::CeilDiv:
      return divide(llvm::cast<mlir::AffineBinaryOpExpr>(e));
    }
    return std::nullopt;
  }

private:
  IndexSpace &space;
  AffineForm &form;

  static bool invariant(const Poly &p) {
    for (const auto &[k, c] : p)
      for (const std::string &f : k)
        if (isVariable(f))
          return false;
    return true;
  }

  std::optional<Poly> divide(mlir::AffineBinaryOpExpr b) {
    auto num = go(b.getLHS());
    auto den = num ? go(b.getRHS()) : std::nullopt;
    if (!den)
      return std::nullopt;
    if (!invariant(*den) || den->empty()) {
      form.whyNot = "the index divides by a thread- or loop-dependent value";
      return std::nullopt;
    }
    // An invariant quotient is one more invariant name.
    if (invariant(*num))
      return Poly{{{"(" + space.print(b) + ")"}, 1}};
    if (b.getKind() == AffineExprKind::CeilDiv) {
      form.whyNot = "the index has a ceiling division";
      return std::nullopt;
    }
    std::string why;
    auto lin = linearOf(*num, why);
    if (!lin) {
      form.whyNot = why;
      return std::nullopt;
    }
    IndexAtom atom;
    atom.op = b.getKind() == AffineExprKind::Mod ? IndexAtom::Op::Mod : IndexAtom::Op::FloorDiv;
    atom.numerator = *lin;
    atom.divisor = symbolicOf(*den);
    size_t i = 0;
    while (i < form.atoms.size() && !(form.atoms[i] == atom))
      ++i;
    if (i == form.atoms.size())
      form.atoms.push_back(atom);
    return Poly{{{"#" + std::to_string(i)}, 1}};
  }
};

} // namespace

AffineForm cudal1::affineFormOf(StringRef normalized, IndexSpace &space) {
  AffineForm form;
  auto e = space.parse(normalized);
  if (!e) {
    form.whyNot = "the index is outside the grammar of normalized indices";
    return form;
  }
  FormBuilder b(space, form);
  std::optional<Poly> p = b.go(*e);
  if (!p) {
    if (form.whyNot.empty())
      form.whyNot = "the index is not affine";
    return form;
  }
  auto lin = linearOf(*p, form.whyNot);
  if (!lin)
    return form;
  form.linear = *lin;
  // The decomposition: monomials grouped by their factors that are neither
  // variables nor launch dimensions (the parameters that scale a dimension).
  std::map<std::vector<std::string>, Poly> groups;
  for (const auto &[k, c] : *p) {
    std::vector<std::string> scale, rest;
    for (const std::string &f : k)
      (isVariable(f) || isLaunchShape(f) ? rest : scale).push_back(f);
    addTo(groups[scale], rest, c);
  }
  for (const auto &[scale, poly] : groups) {
    if (poly.empty())
      continue;
    LogicalDim d;
    d.stride.terms.push_back(Monomial{1, scale});
    std::string why;
    d.index = *linearOf(poly, why); // a subset of a linear polynomial's monomials
    form.dims.push_back(std::move(d));
  }
  std::stable_sort(form.dims.begin(), form.dims.end(),
                   [](const LogicalDim &a, const LogicalDim &b) {
                     return a.stride.terms[0].symbols.size() > b.stride.terms[0].symbols.size();
                   });
  form.affine = true;
  return form;
}

bool cudal1::isGlobalId(const LinearPart &p, unsigned d) {
  static const char *names[][3] = {{"threadIdx.x", "blockIdx.x", "blockDim.x"},
                                   {"threadIdx.y", "blockIdx.y", "blockDim.y"},
                                   {"threadIdx.z", "blockIdx.z", "blockDim.z"}};
  if (d > 2 || !p.constant.isZero() || p.terms.size() != 2)
    return false;
  SymbolicValue one{{Monomial{1, {}}}}, shape{{Monomial{1, {names[d][2]}}}};
  return p.terms[0] == AffineTerm{names[d][0], one} && p.terms[1] == AffineTerm{names[d][1], shape};
}

std::optional<unsigned> cudal1::loopCounterOf(const LinearPart &p) {
  if (!p.constant.isZero() || p.terms.size() != 1 || p.terms[0].coeff.constant() != 1 ||
      !StringRef(p.terms[0].var).starts_with("$k"))
    return std::nullopt;
  unsigned n;
  if (StringRef(p.terms[0].var).drop_front(2).getAsInteger(10, n))
    return std::nullopt;
  return n;
}
