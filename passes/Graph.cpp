// graph: the run of launches in a host loop's body becomes one CUDA graph.
// The first iteration captures the launches (stream capture on a stream of
// the helper's own) and instantiates the graph; every iteration launches it
// on the launches' original stream, so its order with the rest of the
// program is unchanged. Arguments are evaluated each iteration as before and
// a kernel node whose arguments or configuration changed (a pointer swap, an
// offset `x + t * n`) is updated on the executable graph with
// cudaGraphExecKernelNodeSetParams. Legal when the launches are an
// unconditional, contiguous run of the body (only error checks between
// them) and the loop reads no device data on the host.
#include "Graph.h"
#include "cudal1/Rewrite/HostCode.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"

#define DEBUG_TYPE "graph"

using namespace clang;
using namespace cudal1;

namespace {

const char *helperText = R"(#ifndef CUDAL1_GRAPH_LOOP
#define CUDAL1_GRAPH_LOOP
#include <cstdio>
#include <cstdlib>
#include <tuple>
#include <utility>
#include <vector>
// cudal1 graph: the launches of one loop iteration as a CUDA graph. The first
// iteration captures them on a stream of its own; every iteration launches
// the graph on the original stream. Later iterations evaluate the arguments
// as the loop did and update each kernel node whose arguments or
// configuration changed (pointer swaps, offsets) on the executable graph.
class Cudal1GraphLoop {
public:
  Cudal1GraphLoop() = default;
  Cudal1GraphLoop(const Cudal1GraphLoop &) = delete;
  Cudal1GraphLoop &operator=(const Cudal1GraphLoop &) = delete;
  ~Cudal1GraphLoop() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    if (capture) cudaStreamDestroy(capture);
  }

  template <typename... P, typename... A>
  void launch(void (*kernel)(P...), dim3 grid, dim3 block, size_t shmem, A &&...args) {
    std::tuple<P...> values(std::forward<A>(args)...);
    std::vector<char> key = keyOf(values, grid, block, shmem);
    if (!exec) {
      if (!capturing) {
        if (!capture) check(cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking), "stream");
        check(cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal), "capture");
        capturing = true;
      }
      launchOn(kernel, grid, block, shmem, values, std::index_sequence_for<P...>());
      check(cudaGetLastError(), "launch");
      nodes.push_back(lastNode());
      keys.push_back(key);
    } else {
      if (next >= nodes.size()) fail("more launches than the graph holds");
      if (key != keys[next]) {
        update(kernel, grid, block, shmem, values, std::index_sequence_for<P...>());
        keys[next] = key;
      }
    }
    ++next;
  }

  void replay(cudaStream_t stream) {
    if (!exec) {
      check(cudaStreamEndCapture(capture, &graph), "end capture");
      capturing = false;
      check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
    } else if (next != nodes.size()) {
      fail("fewer launches than the graph holds");
    }
    check(cudaGraphLaunch(exec, stream), "graph launch");
    next = 0;
  }

private:
  cudaStream_t capture = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  bool capturing = false;
  size_t next = 0;
  std::vector<cudaGraphNode_t> nodes;
  std::vector<std::vector<char>> keys; // argument and configuration bytes per node

  static void fail(const char *what) {
    fprintf(stderr, "cudal1 graph: %s\n", what);
    exit(1);
  }
  static void check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
      fprintf(stderr, "cudal1 graph: %s: %s\n", what, cudaGetErrorString(e));
      exit(1);
    }
  }
  template <typename T> static void append(std::vector<char> &b, const T &v) {
    const char *p = reinterpret_cast<const char *>(&v);
    b.insert(b.end(), p, p + sizeof(T));
  }
  template <typename... P>
  static std::vector<char> keyOf(const std::tuple<P...> &values, dim3 grid, dim3 block, size_t shmem) {
    std::vector<char> b;
    std::apply([&](const auto &...v) { (append(b, v), ...); }, values);
    append(b, grid);
    append(b, block);
    append(b, shmem);
    return b;
  }
  template <typename... P, size_t... I>
  void launchOn(void (*kernel)(P...), dim3 grid, dim3 block, size_t shmem,
                std::tuple<P...> &values, std::index_sequence<I...>) {
    kernel<<<grid, block, shmem, capture>>>(std::get<I>(values)...);
  }
  template <typename... P, size_t... I>
  void update(void (*kernel)(P...), dim3 grid, dim3 block, size_t shmem,
              std::tuple<P...> &values, std::index_sequence<I...>) {
    void *params[] = {(void *)&std::get<I>(values)..., nullptr};
    cudaKernelNodeParams p = {};
    p.func = (void *)kernel;
    p.gridDim = grid;
    p.blockDim = block;
    p.sharedMemBytes = (unsigned)shmem;
    p.kernelParams = params;
    check(cudaGraphExecKernelNodeSetParams(exec, nodes[next], &p), "update");
  }
  // The node the last launch added: the capture's only dependency now.
  cudaGraphNode_t lastNode() {
    cudaStreamCaptureStatus status;
    const cudaGraphNode_t *deps = nullptr;
    size_t n = 0;
#if CUDART_VERSION >= 13000
    check(cudaStreamGetCaptureInfo(capture, &status, nullptr, nullptr, &deps, nullptr, &n), "capture info");
#else
    check(cudaStreamGetCaptureInfo(capture, &status, nullptr, nullptr, &deps, &n), "capture info");
#endif
    if (n != 1) fail("unexpected capture");
    return deps[0];
  }
};
#endif
)";

/// The statements of a loop body (a block, or one statement).
std::vector<const Stmt *> bodyStatements(const Stmt *body) {
  if (auto *cs = dyn_cast<CompoundStmt>(body))
    return std::vector<const Stmt *>(cs->body_begin(), cs->body_end());
  return {body};
}

const Stmt *loopBody(const Stmt *loop) {
  if (auto *f = dyn_cast<ForStmt>(loop))
    return f->getBody();
  if (auto *w = dyn_cast<WhileStmt>(loop))
    return w->getBody();
  if (auto *d = dyn_cast<DoStmt>(loop))
    return d->getBody();
  if (auto *r = dyn_cast<CXXForRangeStmt>(loop))
    return r->getBody();
  return nullptr;
}

std::string text(ASTContext &ast, const Expr *e) { return spelled(ast, e); }

struct Run {
  std::vector<const Stmt *> stmts; ///< the body's statements
  size_t first = 0, last = 0;      ///< the run of launches: [first, last]
  std::vector<const CUDAKernelCallExpr *> launches;
  std::string stream;              ///< "" for the default stream
};

/// The run of launches of a loop, or the reason there is none.
std::string findRun(TransformContext &ctx, unsigned loop, Run &run) {
  ASTContext &ast = ctx.unit.ast();
  const HostLoop &hl = ctx.model().hostLoops[loop];
  const Stmt *body = loopBody(ctx.unit.hostLoopStmt(loop));
  run.stmts = bodyStatements(body);
  std::vector<size_t> at;
  for (unsigned id : hl.launches) {
    const CUDAKernelCallExpr *kc = ctx.unit.launchExpr(id);
    auto it = std::find(run.stmts.begin(), run.stmts.end(), kc);
    if (it == run.stmts.end())
      return "launch #" + std::to_string(id) +
             " is not a statement of the loop body (conditional, nested or inside an expression)";
    at.push_back(it - run.stmts.begin());
  }
  if (at.empty())
    return "the loop launches no kernel";
  run.first = *std::min_element(at.begin(), at.end());
  run.last = *std::max_element(at.begin(), at.end());
  for (size_t i = run.first; i <= run.last; ++i) {
    const Stmt *s = run.stmts[i];
    if (auto *kc = dyn_cast<CUDAKernelCallExpr>(s)) {
      run.launches.push_back(kc);
      continue;
    }
    if (!isErrorCheck(ast, s))
      return "the launches are not one run: line " +
             std::to_string(ast.getSourceManager().getPresumedLineNumber(
                 ast.getSourceManager().getFileLoc(s->getBeginLoc()))) +
             " between them does more than check errors";
  }
  return "";
}

/// Why one launch cannot go through the helper ("" when it can).
std::string launchProblem(TransformContext &ctx, const CUDAKernelCallExpr *kc, unsigned id) {
  ASTContext &ast = ctx.unit.ast();
  const LaunchSite &l = ctx.model().launches[id];
  std::string at = "launch #" + std::to_string(id) + ": ";
  if (l.kernelIndex < 0)
    return at + "the kernel is not known";
  if (kc->getBeginLoc().isMacroID() || kc->getEndLoc().isMacroID())
    return at + "it is written inside a macro";
  if (kc->HasSideEffects(ast, /*IncludePossibleEffects=*/false))
    return at + "its arguments have side effects";
  const FunctionDecl *k = kc->getDirectCallee();
  if (!k)
    return at + "the kernel is not a named function";
  if (kc->getNumArgs() != k->getNumParams())
    return at + "default arguments are used";
  if (auto *dre = dyn_cast<DeclRefExpr>(kc->getCallee()->IgnoreImpCasts());
      !dre || (k->getTemplateSpecializationArgs() && !dre->hasExplicitTemplateArgs()))
    return at + "the kernel's template arguments are deduced, not written";
  for (unsigned i = 0; i < kc->getNumArgs(); ++i) {
    const Expr *a = kc->getArg(i)->IgnoreImpCasts();
    if (k->getParamDecl(i)->getType()->isPointerType() && a->getType()->isIntegerType())
      return at + "an integer is passed for pointer parameter " + std::to_string(i);
  }
  return "";
}

} // namespace

std::string Graph::legality(TransformContext &ctx, Target t) const {
  ASTContext &ast = ctx.unit.ast();
  const Stmt *loop = ctx.unit.hostLoopStmt(t.loop);
  const FunctionDecl *fd = ctx.unit.hostLoopFunction(t.loop);
  if (fd->isTemplateInstantiation() || fd->getTemplatedKind() != FunctionDecl::TK_NonTemplate)
    return "the loop is in a function template (one edit for every instantiation)";
  if (loop->getBeginLoc().isMacroID())
    return "the loop is written inside a macro";
  if (!isa_and_nonnull<CompoundStmt>(parentStmt(ast, loop)))
    return "the loop is not a statement of a block";
  // 1. One unconditional run of launches: the same kernels every iteration.
  Run run;
  if (std::string why = findRun(ctx, t.loop, run); !why.empty())
    return why;
  const HostLoop &hl = ctx.model().hostLoops[t.loop];
  for (size_t i = 0; i < run.launches.size(); ++i) {
    unsigned id = hl.launches[i];
    if (std::string why = launchProblem(ctx, run.launches[i], id); !why.empty())
      return why;
    if (ctx.model().launches[id].stream != ctx.model().launches[hl.launches[0]].stream)
      return "the launches use different streams";
  }
  // 2. Nothing in the loop reads device data on the host (so nothing it
  //    decides depends on it).
  if (std::string why = hostAccessOfDeviceData(ast, loop, deviceBuffers(ast, fd)); !why.empty())
    return "the loop reads device data on the host: " + why;
  return "";
}

llvm::Error Graph::apply(TransformContext &ctx, Target t, const PlanStep &) const {
  ASTContext &ast = ctx.unit.ast();
  const Stmt *loop = ctx.unit.hostLoopStmt(t.loop);
  const FunctionDecl *fd = ctx.unit.hostLoopFunction(t.loop);
  Run run;
  findRun(ctx, t.loop, run);
  ctx.insertHelperBefore(fd, "Cudal1GraphLoop", helperText);
  std::string var = freshName(ctx, "cudal1Graph");
  const LaunchSite &first = ctx.model().launches[ctx.model().hostLoops[t.loop].launches[0]];
  std::string stream = first.stream.empty() ? "0" : first.stream;
  // The graph lives as long as the loop runs.
  ctx.rewriter.InsertTextBefore(loop->getBeginLoc(), "Cudal1GraphLoop " + var + ";  // cudal1 graph\n" +
                                                         indentAt(ast, loop->getBeginLoc()));
  for (const CUDAKernelCallExpr *kc : run.launches) {
    const CallExpr *cfg = kc->getConfig();
    auto cfgArg = [&](unsigned i, const char *def) -> std::string {
      if (i >= cfg->getNumArgs() || isa<CXXDefaultArgExpr>(cfg->getArg(i)))
        return def;
      return text(ast, cfg->getArg(i)->IgnoreUnlessSpelledInSource());
    };
    std::string call = var + ".launch(" + text(ast, kc->getCallee()->IgnoreImpCasts()) + ", " +
                       cfgArg(0, "1") + ", " + cfgArg(1, "1") + ", " + cfgArg(2, "0");
    for (const Expr *a : kc->arguments())
      call += ", " + text(ast, a);
    call += ")";
    ctx.rewriter.ReplaceText(statementRange(ast, kc), call);
  }
  // Launch the graph right after the run, on the original stream; an
  // unbraced body gets braces.
  const Stmt *last = run.stmts[run.last];
  CharSourceRange lr = statementRange(ast, last);
  SourceLocation semi = Lexer::findLocationAfterToken(lr.getEnd().getLocWithOffset(-1), tok::semi,
                                                      ast.getSourceManager(), ast.getLangOpts(),
                                                      /*SkipTrailingWhitespaceAndNewLine=*/false);
  if (semi.isInvalid())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no ';' after the last launch of the loop");
  ctx.rewriter.InsertTextAfter(semi, " " + var + ".replay(" + stream + ");");
  const Stmt *body = loopBody(loop);
  if (!isa<CompoundStmt>(body)) {
    ctx.rewriter.InsertTextBefore(statementRange(ast, body).getBegin(), "{ ");
    ctx.rewriter.InsertTextAfter(semi, " }");
  }
  return llvm::Error::success();
}
