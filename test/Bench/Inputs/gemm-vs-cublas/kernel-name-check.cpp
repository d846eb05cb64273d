// Prints each (function name, kernel name) pair and whether
// bench/gemm-vs-cublas/kernel_name.h matches them.
#include "kernel_name.h"
#include <cstdio>

int main() {
  const char *cases[][2] = {
      {"_ZN17cudal1_bench_orig6matmulEPKfS1_Pfi", "matmul"},
      // A namespace ending in a digit: the first matcher missed these.
      {"_ZN21cudal1_bench_tuned_016matmulEPKfS1_Pfi", "matmul"},
      {"_ZN21cudal1_bench_tuned_014gemmIfEEvPKT_S3_PS1_iii", "gemm"},
      {"_Z6matmulPKfS0_Pfi", "matmul"},
      // Not the kernel: a longer name, a prefix, a namespace of that name.
      {"_ZN21cudal1_bench_tuned_017matmul2EPKfS1_Pfi", "matmul"},
      {"_ZN21cudal1_bench_tuned_016matmulEPKfS1_Pfi", "matmu"},
      {"_ZN6matmul4initEPf", "matmul"},
      {"cudal1_bench_tuned_01::matmul(const float*, const float*, float*, int)", "matmul"},
      {"void cudal1_bench_orig::gemm<float>(const float*, float*)", "gemm"},
      {"cudal1_bench_orig::matmul2(float*)", "matmul"},
      {"matmul", "matmul"},
  };
  for (auto &c : cases)
    printf("%s %s %s\n", namesKernel(c[0], c[1]) ? "yes" : "no", c[1], c[0]);
  printf("%s null\n", namesKernel(nullptr, "matmul") ? "yes" : "no");
}
