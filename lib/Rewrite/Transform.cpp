// TransformContext and the registry lookup.
#include "cudal1/Rewrite/Transform.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Rewrite/Core/Rewriter.h"

#include <algorithm>

using namespace cudal1;

Transform::~Transform() = default;

std::optional<LaunchRemapStep> Transform::remapLaunch(const PlanStep &) const {
  return std::nullopt;
}

std::string Transform::checkParams(TransformContext &ctx, Target t, const PlanStep &step) const {
  // By default every parameter must be one the space offers.
  std::vector<ParamSpace> sp = space(ctx, t);
  for (const auto &[key, value] : step.params) {
    auto it =
        std::find_if(sp.begin(), sp.end(), [&](const ParamSpace &p) { return p.name == key; });
    if (it == sp.end())
      return "unknown parameter '" + key + "'";
    if (std::find(it->values.begin(), it->values.end(), value) == it->values.end()) {
      std::string allowed;
      for (const std::string &v : it->values)
        allowed += (allowed.empty() ? "" : ", ") + v;
      return "parameter " + key + "=" + value + " is not one of {" + allowed + "}";
    }
  }
  return "";
}

TransformContext::TransformContext(ParsedUnit &unit, clang::Rewriter &rewriter,
                                   mlir::MLIRContext &mlir)
    : unit(unit), rewriter(rewriter), mlir(mlir) {
  analyses.resize(unit.model().kernels.size());
}

const KernelAnalysis &TransformContext::analysis(unsigned kernel) {
  if (!analyses[kernel])
    analyses[kernel] =
        std::make_unique<KernelAnalysis>(analyzeKernel(model().kernels[kernel], mlir));
  return *analyses[kernel];
}

const std::vector<unsigned> &TransformContext::launchesOf(unsigned kernel) const {
  if (!launchesByKernel) {
    launchesByKernel.emplace(model().kernels.size());
    for (const LaunchSite &l : model().launches)
      if (l.kernelIndex >= 0 && size_t(l.kernelIndex) < launchesByKernel->size())
        (*launchesByKernel)[l.kernelIndex].push_back(l.id);
  }
  static const std::vector<unsigned> none;
  return kernel < launchesByKernel->size() ? (*launchesByKernel)[kernel] : none;
}

void TransformContext::insertHelperBefore(unsigned kernel, const std::string &key,
                                          const std::string &text) {
  if (std::find(helpersInserted.begin(), helpersInserted.end(), key) != helpersInserted.end())
    return;
  helpersInserted.push_back(key);
  const clang::FunctionDecl *fd = unit.kernelDecl(kernel);
  if (const clang::FunctionDecl *p = fd->getTemplateInstantiationPattern())
    fd = p;
  clang::SourceLocation at = fd->getSourceRange().getBegin();
  if (const auto *ft = fd->getDescribedFunctionTemplate())
    at = ft->getSourceRange().getBegin();
  insertAtLineStart(at, text);
}

void TransformContext::insertHelperBefore(const clang::FunctionDecl *fd, const std::string &key,
                                          const std::string &text) {
  if (std::find(helpersInserted.begin(), helpersInserted.end(), key) != helpersInserted.end())
    return;
  helpersInserted.push_back(key);
  if (const clang::FunctionDecl *p = fd->getTemplateInstantiationPattern())
    fd = p;
  // The outermost declaration around fd (a class or namespace) at file scope.
  const clang::Decl *top = fd;
  if (const auto *ft = fd->getDescribedFunctionTemplate())
    top = ft;
  while (top->getLexicalDeclContext() && !top->getLexicalDeclContext()->isTranslationUnit())
    top = llvm::cast<clang::Decl>(top->getLexicalDeclContext());
  clang::SourceLocation at = top->getSourceRange().getBegin();
  // An earlier plan step may have inserted it already (its first line is
  // its include guard): once above this function is enough.
  const clang::SourceManager &sm = unit.ast().getSourceManager();
  std::string guard = text.substr(0, text.find('\n'));
  size_t found = unit.code().find(guard);
  if (found != std::string::npos && found < sm.getFileOffset(sm.getFileLoc(at)))
    return;
  insertAtLineStart(at, text);
}

void TransformContext::insertAtLineStart(clang::SourceLocation at, const std::string &text) {
  at = unit.ast().getSourceManager().getFileLoc(at);
  // Start of that line, so the helper sits between declarations.
  const clang::SourceManager &sm = unit.ast().getSourceManager();
  auto [fid, off] = sm.getDecomposedLoc(at);
  unsigned col = sm.getColumnNumber(fid, off);
  rewriter.InsertTextBefore(at.getLocWithOffset(-int(col - 1)), text);
}

void TransformContext::braceStatement(clang::CharSourceRange r) {
  for (const clang::CharSourceRange &b : toBrace)
    if (b.getBegin() == r.getBegin())
      return;
  toBrace.push_back(r);
}

void TransformContext::finishEdits() {
  // Called after every other edit of the step: InsertTextBefore puts `{`
  // before all text inserted at the start, InsertTextAfter puts `}` after
  // all text inserted at the end.
  for (const clang::CharSourceRange &r : toBrace) {
    rewriter.InsertTextBefore(r.getBegin(), "{ ");
    rewriter.InsertTextAfter(r.getEnd(), " }");
  }
  toBrace.clear();
}
