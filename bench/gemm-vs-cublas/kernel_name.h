// Whether a kernel function's name (as cudaFuncGetName gives it: mangled, or
// demangled) is the kernel NAME. Plain C++ so that a host test can check it
// (test/Bench/gemm-vs-cublas-kernel-name.test).
#ifndef CUDAL1_BENCH_KERNEL_NAME_H
#define CUDAL1_BENCH_KERNEL_NAME_H

#include <cctype>
#include <string>

// A mangled name is read as its Itanium nested name: `_Z` then `N`, then
// <length><identifier> pieces up to the first non-digit (E, I, or the
// parameters). The kernel's own name is the last piece. Reading the pieces,
// instead of searching for `<len>NAME`, matters when a namespace ends in a
// digit: the variant namespace `cudal1_bench_tuned_01` holding `matmul`
// mangles as `21cudal1_bench_tuned_016matmul`.
inline bool namesKernel(const char *fn, const std::string &name) {
  if (!fn)
    return false;
  std::string f = fn;
  if (f.compare(0, 2, "_Z") == 0) {
    size_t at = 2;
    if (at < f.size() && f[at] == 'N')
      ++at;
    std::string last;
    while (at < f.size() && isdigit((unsigned char)f[at])) {
      size_t len = 0;
      while (at < f.size() && isdigit((unsigned char)f[at]))
        len = len * 10 + (f[at++] - '0');
      if (len == 0 || at + len > f.size())
        return false;
      last = f.substr(at, len);
      at += len;
    }
    return last == name;
  }
  // Demangled: `ns::NAME(...)`, `NAME(...)` or the bare name.
  size_t paren = f.find('(');
  std::string head = f.substr(0, paren);
  size_t lt = head.find('<');
  if (lt != std::string::npos)
    head = head.substr(0, lt);
  size_t colon = head.rfind("::");
  if (colon != std::string::npos)
    head = head.substr(colon + 2);
  size_t space = head.rfind(' ');
  if (space != std::string::npos)
    head = head.substr(space + 1);
  return head == name;
}

#endif
