// Parsing normalized indices into MLIR affine expressions and the strides
// derived from them.
#include "cudal1/Analysis/AffineIndex.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace cudal1;

namespace {

class AffineIndexTest : public ::testing::Test {
protected:
  mlir::MLIRContext ctx;
  IndexSpace space{ctx};

  Stride strideX(const char *text) {
    auto e = space.parse(text);
    EXPECT_TRUE(e.has_value()) << text;
    return e ? strideAlong(*e, IndexSpace::ThreadX, space) : Stride{};
  }
};

TEST_F(AffineIndexTest, UnitStrideOfTheGlobalIndex) {
  Stride s = strideX("blockIdx.x * blockDim.x + threadIdx.x");
  EXPECT_EQ(s.kind, Stride::Kind::Constant);
  EXPECT_EQ(s.value, 1);
}

TEST_F(AffineIndexTest, TransposeWriteStridesByRows) {
  Stride s = strideX(
      "((blockIdx.x * blockDim.x + threadIdx.x) * rows + (blockIdx.y * blockDim.y + threadIdx.y))");
  EXPECT_EQ(s.kind, Stride::Kind::Symbolic);
  EXPECT_EQ(s.text, "rows");
}

TEST_F(AffineIndexTest, ConstantMultiplesAndShifts) {
  EXPECT_EQ(strideX("(threadIdx.x * 4 + 1)").value, 4);
  EXPECT_EQ(strideX("(0 - threadIdx.x)").value, -1);
  EXPECT_EQ(strideX("7").value, 0);
  EXPECT_EQ(strideX("(threadIdx.y * 32 + threadIdx.x)").value, 1);
}

TEST_F(AffineIndexTest, NonlinearAndOpaqueIndicesHaveNoStride) {
  EXPECT_EQ(strideX("threadIdx.x * threadIdx.x").kind, Stride::Kind::Unknown);
  EXPECT_EQ(strideX("threadIdx.x / 2").kind, Stride::Kind::Unknown);
  EXPECT_EQ(strideX("?load + threadIdx.x").kind, Stride::Kind::Unknown);
}

TEST_F(AffineIndexTest, StrideMayDependOnOtherDimensions) {
  // Loop counter $k0 multiplies the thread index: a stride that varies per iteration.
  Stride s = strideX("threadIdx.x * ($k0 + 1)");
  EXPECT_EQ(s.kind, Stride::Kind::Symbolic);
  EXPECT_EQ(s.text, "$k0 + 1");
}

TEST_F(AffineIndexTest, RejectsTextOutsideTheGrammar) {
  EXPECT_FALSE(space.parse("a +").has_value());
  EXPECT_FALSE(space.parse("(a").has_value());
  EXPECT_FALSE(space.parse("a / 0").has_value());
  EXPECT_FALSE(space.parse("a b").has_value());
}

TEST_F(AffineIndexTest, PrintsWithTheOriginalNames) {
  auto e = space.parse("(n - 1) * 2 + threadIdx.x");
  ASSERT_TRUE(e.has_value());
  std::string text = space.print(*e);
  EXPECT_NE(text.find("threadIdx.x"), std::string::npos) << text;
  EXPECT_NE(text.find("n"), std::string::npos) << text;
}

TEST_F(AffineIndexTest, SameFunctionDespiteOperandOrder) {
  auto a = space.parse("blockDim.x * rows");
  auto b = space.parse("rows * blockDim.x");
  auto c = space.parse("rows * blockDim.x + 1");
  ASSERT_TRUE(a && b && c);
  EXPECT_TRUE(sameFunction(*a, *b, space));
  EXPECT_FALSE(sameFunction(*a, *c, space));
}

TEST_F(AffineIndexTest, EvaluateBindsDimsAndSymbols) {
  auto e = space.parse("threadIdx.x * 3 + n");
  ASSERT_TRUE(e.has_value());
  unsigned n = *space.symbol("n");
  std::vector<int64_t> syms(space.numSymbols(), 0);
  syms[n] = 10;
  EXPECT_EQ(evaluate(*e, {5}, syms), 25);
}

} // namespace
