// Parsing normalized index text into MLIR affine expressions, and the
// algebra the analyses need on top of MLIR's (coefficients, evaluation).
#include "cudal1/Analysis/AffineIndex.h"

#include "mlir/IR/AffineExprVisitor.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"

#include <cctype>
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
