// The dimensions of a launch's configuration argument, shared by the passes
// that need a launch's constant grid or block shape (tile-shared's and
// stage-shared's 1-D forms).
#ifndef CUDAL1_PASSES_CONFIGDIMS_H
#define CUDAL1_PASSES_CONFIGDIMS_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace cudal1 {

/// An integer, or a dim3 (possibly through a variable's initializer): its
/// dimensions as spelled, each a constant or nullopt. False when `e` is
/// neither.
inline bool configDims(const clang::Expr *e, clang::ASTContext &ast,
                       std::vector<std::optional<uint64_t>> &out) {
  using namespace clang;
  const Expr *s = e->IgnoreUnlessSpelledInSource();
  if (auto *dre = dyn_cast<DeclRefExpr>(s))
    if (auto *vd = dyn_cast<VarDecl>(dre->getDecl());
        vd && vd->hasInit() && !vd->getType()->isIntegerType())
      s = vd->getInit()->IgnoreUnlessSpelledInSource();
  auto value = [&](const Expr *a) -> std::optional<uint64_t> {
    Expr::EvalResult r;
    if (a->EvaluateAsInt(r, ast))
      return r.Val.getInt().getZExtValue();
    return std::nullopt;
  };
  if (s->getType()->isIntegerType()) {
    out = {value(s)};
    return true;
  }
  auto *ce = dyn_cast<CXXConstructExpr>(s);
  if (!ce)
    return false;
  for (const Expr *a : ce->arguments())
    if (!isa<CXXDefaultArgExpr>(a))
      out.push_back(value(a));
  return !out.empty();
}

} // namespace cudal1

#endif
