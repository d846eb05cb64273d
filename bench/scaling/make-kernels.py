#!/usr/bin/env python3
"""Writes a CUDA translation unit with N trivial kernels and one launch of
each (issue 19 item 7: `cudal1-opt --list-transforms` must be linear in the
number of kernels). Each kernel has one loop, so every kernel has legal
transforms to list. Usage: make-kernels.py N > F.cu"""
import sys


def main():
    n = int(sys.argv[1])
    out = ["#include <cuda_runtime.h>", ""]
    for i in range(n):
        out.append(f"__global__ void k{i}(float *a, int n) {{\n"
                   f"  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                   f"  for (int j = 0; j < 4; ++j)\n"
                   f"    if (i < n) a[i] += {i % 97}.0f;\n"
                   f"}}")
    out.append("")
    out.append("void run(float *d, int n) {")
    for i in range(n):
        out.append(f"  k{i}<<<(n + 255) / 256, 256>>>(d, n);")
    out.append("  cudaDeviceSynchronize();")
    out.append("}")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
