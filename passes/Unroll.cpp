// unroll: inserts _Pragma("unroll N") in front of a for loop. The operator
// form sits on the loop's own line, so line numbers do not move.
#include "Unroll.h"

#include "clang/AST/Attr.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Rewrite/Core/Rewriter.h"

#define DEBUG_TYPE "unroll"

using namespace clang;
using namespace cudal1;

namespace {

/// For loops of the kernel without an unroll hint, by loop id.
std::vector<unsigned> candidateLoops(TransformContext &ctx, unsigned kernel) {
  std::vector<unsigned> out;
  const Kernel &k = ctx.model().kernels[kernel];
  for (const KernelLoop &l : k.loops) {
    const Stmt *s = ctx.unit.loopStmt(kernel, l.id);
    if (!isa<ForStmt>(s) || s->getBeginLoc().isMacroID())
      continue;
    // An existing hint shows as an AttributedStmt parent.
    bool hinted = false;
    for (const DynTypedNode &p : ctx.unit.ast().getParents(*s))
      if (const auto *as = p.get<AttributedStmt>())
        for (const Attr *a : as->getAttrs())
          hinted |= isa<LoopHintAttr>(a);
    if (!hinted)
      out.push_back(l.id);
  }
  return out;
}

} // namespace

std::string Unroll::legality(TransformContext &ctx, Target t) const {
  if (candidateLoops(ctx, t.kernel).empty())
    return ctx.model().kernels[t.kernel].loops.empty()
               ? "the kernel has no loop"
               : "every for loop already carries an unroll hint (or is inside a macro)";
  return "";
}

std::vector<ParamSpace> Unroll::space(TransformContext &ctx, Target t) const {
  ParamSpace loops{"loop", {}};
  for (unsigned id : candidateLoops(ctx, t.kernel))
    loops.values.push_back(std::to_string(id));
  return {loops, {"factor", {"2", "4", "8"}}};
}

std::string Unroll::checkParams(TransformContext &ctx, Target t, const PlanStep &step) const {
  if (!step.param("loop"))
    return "missing parameter loop=ID (see --list-transforms)";
  if (!step.param("factor"))
    return "missing parameter factor=N";
  unsigned factor = 0;
  if (llvm::StringRef(*step.param("factor")).getAsInteger(10, factor) || factor < 1 || factor > 64)
    return "factor must be an integer from 1 to 64";
  ParamSpace loops = space(ctx, t)[0];
  if (std::find(loops.values.begin(), loops.values.end(), *step.param("loop")) ==
      loops.values.end())
    return "loop " + *step.param("loop") + " is not a for loop without an unroll hint";
  for (const auto &[k, v] : step.params)
    if (k != "loop" && k != "factor")
      return "unknown parameter '" + k + "'";
  return "";
}

llvm::Error Unroll::apply(TransformContext &ctx, Target t, const PlanStep &step) const {
  std::optional<unsigned> loop = step.uintParam("loop");
  if (!loop) // checkParams took it from the space: cannot happen
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "unroll: bad loop=");
  const Stmt *s = ctx.unit.loopStmt(t.kernel, *loop);
  ctx.rewriter.InsertTextBefore(s->getBeginLoc(),
                                "_Pragma(\"unroll " + *step.param("factor") + "\") ");
  return llvm::Error::success();
}
