// The accesses' affine forms (ProgramModel.h), the AST pointers behind them
// (ParsedUnit::accessOf) and the GEMM and uniform-atomic recognizers built
// on both (Idioms.h).
#include "cudal1/Analysis/Idioms.h"
#include "cudal1/Frontend/CompileFlags.h"
#include "cudal1/Frontend/ParsedUnit.h"

#include "mlir/IR/MLIRContext.h"
#include "clang/AST/Expr.h"

#include <gtest/gtest.h>

using namespace cudal1;

namespace {

std::unique_ptr<ParsedUnit> parse(const std::string &code) {
  auto u = ParsedUnit::parse("idioms.cu", code, analysisArgs({}, nullptr));
  if (!u) {
    ADD_FAILURE() << llvm::toString(u.takeError());
    return nullptr;
  }
  return std::move(*u);
}

std::string dims(const AffineForm &f) {
  std::string s;
  for (const LogicalDim &d : f.dims) {
    s += "[" + d.stride.str() + ":";
    for (const AffineTerm &t : d.index.terms)
      s += " " + t.coeff.str() + "*" + t.var;
    if (!d.index.constant.isZero())
      s += " +" + d.index.constant.str();
    s += "]";
  }
  return s;
}

TEST(AffineFormTest, RowMajorIndexDecomposes) {
  auto u = parse("__global__ void k(float *a, const float *b, int n, int m) {\n"
                 "  int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
                 "  int y = blockIdx.y * blockDim.y + threadIdx.y;\n"
                 "  for (int j = 0; j < m; ++j)\n"
                 "    a[y * n + x] += b[(x + 1) * m + j];\n"
                 "}\n");
  ASSERT_TRUE(u);
  const std::vector<MemAccess> &acc = u->model().kernels.at(0).accesses;
  ASSERT_EQ(acc.size(), 3u);
  const AffineForm &a = acc[0].affine;
  ASSERT_TRUE(a.affine) << a.whyNot;
  EXPECT_EQ(a.linear.coefficient("threadIdx.y").str(), "n");
  EXPECT_EQ(a.linear.coefficient("blockIdx.y").str(), "blockDim.y * n");
  EXPECT_EQ(a.linear.coefficient("threadIdx.x").str(), "1");
  EXPECT_TRUE(a.linear.constant.isZero());
  EXPECT_EQ(dims(a),
            "[n: 1*threadIdx.y blockDim.y*blockIdx.y][1: 1*threadIdx.x blockDim.x*blockIdx.x]");
  const AffineForm &b = acc[2].affine;
  ASSERT_TRUE(b.affine) << b.whyNot;
  EXPECT_EQ(dims(b), "[m: 1*threadIdx.x blockDim.x*blockIdx.x +1][1: 1*$k0]");
  EXPECT_EQ(b.linear.constant.str(), "m");
}

TEST(AffineFormTest, OneDimensionalMappingHasAtoms) {
  auto u = parse("__global__ void k(float *c, int n) {\n"
                 "  int idx = blockIdx.x * blockDim.x + threadIdx.x;\n"
                 "  int row = idx / n, col = idx % n;\n"
                 "  c[row * n + col] = 0;\n"
                 "}\n");
  ASSERT_TRUE(u);
  const AffineForm &f = u->model().kernels.at(0).accesses.at(0).affine;
  ASSERT_TRUE(f.affine) << f.whyNot;
  ASSERT_EQ(f.atoms.size(), 2u);
  EXPECT_EQ(f.dims.size(), 2u);
  ThreadCoord r = coordOf(f.dims[0].index, f), c = coordOf(f.dims[1].index, f);
  EXPECT_EQ(r.kind, ThreadCoord::Kind::Quotient);
  EXPECT_EQ(c.kind, ThreadCoord::Kind::Remainder);
  EXPECT_EQ(r.divisor.str(), "n");
}

TEST(AffineFormTest, NotAffineSaysWhy) {
  auto u = parse("__global__ void k(float *a, const int *ix, int n) {\n"
                 "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                 "  a[ix[i]] = 1;\n"
                 "  a[i * i] = 2;\n"
                 "}\n");
  ASSERT_TRUE(u);
  const std::vector<MemAccess> &acc = u->model().kernels.at(0).accesses;
  ASSERT_EQ(acc.size(), 3u);
  EXPECT_FALSE(acc[0].affine.affine);
  EXPECT_EQ(acc[0].affine.whyNot, "the index reads memory");
  EXPECT_TRUE(acc[1].affine.affine); // ix[i]
  EXPECT_FALSE(acc[2].affine.affine);
  EXPECT_NE(acc[2].affine.whyNot.find("multiplies"), std::string::npos);
}

TEST(AccessOfTest, EveryAccessHasItsExpression) {
  auto u = parse("__global__ void k(float *a, float *s, int n) {\n"
                 "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                 "  a[i] += 1;\n"
                 "  atomicAdd(s, a[i]);\n"
                 "}\n");
  ASSERT_TRUE(u);
  const Kernel &k = u->model().kernels.at(0);
  ASSERT_EQ(k.accesses.size(), 5u);
  // a[i] += 1 is a read and a write of one expression.
  EXPECT_EQ(u->accessExpr(0, 0), u->accessExpr(0, 1));
  EXPECT_EQ(u->accessOf(0, u->accessExpr(0, 0), AccessKind::Write), &k.accesses[1]);
  for (unsigned i = 0; i < k.accesses.size(); ++i)
    EXPECT_NE(u->accessOf(0, u->accessExpr(0, i)), nullptr);
  EXPECT_TRUE(clang::isa<clang::CallExpr>(u->accessExpr(0, 3))); // atomicAdd(s, ...)
}

struct GemmCase {
  const char *name, *code;
  bool inPlace, oneD, transA, transB;
  const char *a, *b, *c, *m, *n, *k, *alpha, *beta;
};

std::string spelledScalar(const GemmScalar &s) {
  if (!s.expr)
    return std::to_string(s.constant);
  if (auto *d = llvm::dyn_cast<clang::DeclRefExpr>(s.expr))
    return d->getDecl()->getNameAsString();
  return "expr";
}

TEST(GemmIdiomTest, RecognizesTheSpellings) {
  const GemmCase cases[] = {
      {"polybench",
       "__global__ void k(int ni, int nj, int nk, double alpha, double beta, double *a,\n"
       "                  double *b, double *c) {\n"
       "  int j = blockIdx.x * blockDim.x + threadIdx.x;\n"
       "  int i = blockIdx.y * blockDim.y + threadIdx.y;\n"
       "  if ((i < ni) && (j < nj)) {\n"
       "    c[i * nj + j] *= beta;\n"
       "    int k;\n"
       "    for (k = 0; k < nk; k++) {\n"
       "      c[i * nj + j] += alpha * a[i * nk + k] * b[k * nj + j];\n"
       "    }\n"
       "  }\n"
       "}\n",
       true, false, false, false, "a", "b", "c", "ni", "nj", "nk", "alpha", "beta"},
      {"transposed-b-swapped-names",
       "__global__ void k(const double *X, const double *Wt, double *Y, int rows, int cols,\n"
       "                  int depth, double s) {\n"
       "  int q = blockIdx.y * blockDim.y + threadIdx.y;\n"
       "  int p = blockIdx.x * blockDim.x + threadIdx.x;\n"
       "  if (p < cols && q < rows) {\n"
       "    double sum = 0.0;\n"
       "    for (int t = 0; t < depth; t++)\n"
       "      sum = sum + Wt[p * depth + t] * X[q * depth + t] * s;\n"
       "    Y[q * cols + p] = sum;\n"
       "  }\n"
       "}\n",
       false, false, false, true, "X", "Wt", "Y", "rows", "cols", "depth", "s", "0"},
      {"one-d",
       "__global__ void k(const float *A, const float *B, float *C, int M, int N, int K) {\n"
       "  int idx = blockIdx.x * blockDim.x + threadIdx.x;\n"
       "  int row = idx / N;\n"
       "  int col = idx % N;\n"
       "  if (idx < M * N) {\n"
       "    float acc = 0.0f;\n"
       "    for (int k = 0; k < K; ++k)\n"
       "      acc += A[row * K + k] * B[k * N + col];\n"
       "    C[row * N + col] = acc;\n"
       "  }\n"
       "}\n",
       false, true, false, false, "A", "B", "C", "M", "N", "K", "1", "0"},
  };
  mlir::MLIRContext ctx;
  for (const GemmCase &c : cases) {
    SCOPED_TRACE(c.name);
    auto u = parse(c.code);
    ASSERT_TRUE(u);
    GemmIdiom g;
    ASSERT_EQ(recognizeGemm(*u, 0, ctx, g), "");
    EXPECT_EQ(g.accumulation == GemmIdiom::Accumulation::InPlace, c.inPlace);
    EXPECT_EQ(g.mapping == GemmIdiom::Mapping::OneD, c.oneD);
    EXPECT_EQ(g.a.transposed, c.transA);
    EXPECT_EQ(g.b.transposed, c.transB);
    EXPECT_EQ(g.a.param->getName(), c.a);
    EXPECT_EQ(g.b.param->getName(), c.b);
    EXPECT_EQ(g.c->getName(), c.c);
    EXPECT_EQ(g.m->getName(), c.m);
    EXPECT_EQ(g.n->getName(), c.n);
    EXPECT_EQ(g.k->getName(), c.k);
    EXPECT_EQ(spelledScalar(g.alpha), c.alpha);
    EXPECT_EQ(spelledScalar(g.beta), c.beta);
  }
}

TEST(GemmIdiomTest, RefusesADependence) {
  // Each row reads the previous row of C: not a product of A and B.
  auto u = parse("__global__ void k(const float *A, float *C, int M, int N, int K) {\n"
                 "  int j = blockIdx.x * blockDim.x + threadIdx.x;\n"
                 "  int i = blockIdx.y * blockDim.y + threadIdx.y;\n"
                 "  if (i < M && j < N) {\n"
                 "    for (int k = 0; k < K; ++k)\n"
                 "      C[i * N + j] += A[i * K + k] * C[k * N + j];\n"
                 "  }\n"
                 "}\n");
  ASSERT_TRUE(u);
  mlir::MLIRContext ctx;
  GemmIdiom g;
  EXPECT_EQ(recognizeGemm(*u, 0, ctx, g), "the output is also an operand");
}

TEST(UniformAtomicTest, FindsTheAtomicAndItsGuard) {
  // The global id's terms swapped, the bound on the left, braces, a void
  // cast, pointer arithmetic: the same atomic.
  auto u = parse("__global__ void k(const float *x, float *out, int n) {\n"
                 "  int i = threadIdx.x + blockDim.x * blockIdx.x;\n"
                 "  if (n > i) {\n"
                 "    (void)atomicAdd(out + blockIdx.x, x[i]);\n"
                 "  }\n"
                 "}\n"
                 "__global__ void all(unsigned long long *c) { atomicAdd(c, 1ull); }\n");
  ASSERT_TRUE(u);
  mlir::MLIRContext ctx;
  UniformAtomic a;
  ASSERT_EQ(recognizeUniformAtomic(*u, 0, ctx, a), "");
  ASSERT_TRUE(a.guard && a.call && a.target && a.stmt);
  EXPECT_NE(a.stmt, a.call); // the cast to void is the statement
  EXPECT_EQ(a.target->param, "out");
  EXPECT_EQ(a.valueType, "float");
  ASSERT_EQ(recognizeUniformAtomic(*u, 1, ctx, a), "");
  EXPECT_EQ(a.guard, nullptr);
  EXPECT_EQ(a.stmt, a.call);
  EXPECT_EQ(a.valueType, "unsigned long long");
}

TEST(UniformAtomicTest, RefusesTargetsThatVaryWithinABlock) {
  const std::pair<const char *, const char *> cases[] = {
      {"atomicAdd(&out[i / blockDim.x], x[i]);",
       "the atomic's index i / blockDim.x depends on threadIdx"},
      {"atomicAdd(&out[threadIdx.x % 32], x[i]);",
       "the atomic's index threadIdx.x % 32 depends on threadIdx"},
      {"atomicAdd(&out[(int)x[i]], 1.0f);",
       "the atomic's index (int)x[i] is not an affine expression (the index reads memory)"},
      {"{ atomicAdd(out, x[i]); atomicAdd(out + 1, x[i]); }",
       "the kernel has several atomics; only one is handled"},
      {"out[i] = atomicAdd(out + 1, x[i]);",
       "the atomicAdd is not a statement at the top of the kernel or directly inside a "
       "top-level if (or its result is used)"},
  };
  mlir::MLIRContext ctx;
  for (const auto &[stmt, why] : cases) {
    SCOPED_TRACE(stmt);
    auto u = parse(std::string("__global__ void k(const float *x, float *out, int n) {\n"
                               "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                               "  if (i < n)\n    ") +
                   stmt + "\n}\n");
    ASSERT_TRUE(u);
    UniformAtomic a;
    EXPECT_EQ(recognizeUniformAtomic(*u, 0, ctx, a), why);
  }
}

} // namespace
