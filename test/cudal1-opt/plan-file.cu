// --plan-file: every plan of a file applied to one parse of the input; each
// output is the same bytes as --plan gives, refusals are reported at the
// plan's line and the other plans are still written.
// RUN: rm -rf %t && mkdir -p %t
// RUN: printf '# plans\n@scale: restrict\n\n@scale: unroll(loop=0, factor=4)\n@nosuch: restrict\n@#0: coarsen(factor=2); @scale: launch-bounds(threads=256, min-blocks=2)\n@scale: restrict(\n' > %t/plans
// RUN: not cudal1-opt %s --plan-file %t/plans -o %t/out 2> %t/err
// RUN: FileCheck %s --check-prefix=ERR < %t/err
// RUN: ls %t/out | FileCheck %s --check-prefix=FILES
// RUN: cudal1-opt %s --plan '@scale: restrict' -o %t/2.cu
// RUN: cmp %t/2.cu %t/out/2.cu
// RUN: cudal1-opt %s --plan '@scale: unroll(loop=0, factor=4)' -o %t/4.cu
// RUN: cmp %t/4.cu %t/out/4.cu
// RUN: cudal1-opt %s --plan '@#0: coarsen(factor=2); @scale: launch-bounds(threads=256, min-blocks=2)' -o %t/6.cu
// RUN: cmp %t/6.cu %t/out/6.cu
// RUN: FileCheck %s --check-prefix=SIX < %t/out/6.cu
// All plans applied: exit 0.
// RUN: printf '@scale: restrict\n' > %t/good
// RUN: cudal1-opt %s --plan-file %t/good -o %t/good-out
// RUN: cmp %t/2.cu %t/good-out/1.cu
// RUN: not cudal1-opt %s --plan-file %t/good 2>&1 | FileCheck %s --check-prefix=NODIR
// RUN: not cudal1-opt %s --plan-file %t/missing -o %t/x 2>&1 | FileCheck %s --check-prefix=MISSING

// Syntax errors are reported first (all plans are parsed before any is applied).
// ERR: plans:7:18: error: expected a parameter name
// ERR-NEXT: plans:5:10: error: step 1 (restrict): there is no kernel named 'nosuch'
// ERR-NOT: error
// FILES: 2.cu
// FILES-NEXT: 4.cu
// FILES-NEXT: 6.cu
// FILES-NOT: .cu
// SIX: /* cudal1-opt plan: @#0: coarsen(factor=2); @scale: launch-bounds(threads=256, min-blocks=2) */
// NODIR: --plan-file needs -o DIR
// MISSING: cannot read '{{.*}}missing'

__global__ void scale(float *x, const float *y, int n, int reps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    for (int r = 0; r < reps; ++r)
      x[i] += y[i];
}

void run(float *x, const float *y, int n) { scale<<<(n + 255) / 256, 256>>>(x, y, n, 4); }
