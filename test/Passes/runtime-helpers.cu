// The helpers the passes insert are passes/runtime/*.cuh byte for byte: each
// pass's output holds the whole file (embedded at build time).
// RUN: cudal1-opt %S/streams.cu --plan '@#0: streams; @#3: streams' -o %t.streams.cu
// RUN: cudal1-opt %S/graph.cu --plan '@loop#0: graph' -o %t.graph.cu
// RUN: cudal1-opt %S/async-copy.cu --plan '@copy#0: async-copy' -o %t.copy.cu
// RUN: cudal1-opt %S/persistent.cu --plan '@loop#0: persistent' -o %t.persistent.cu
// RUN: cudal1-opt %S/library.cu --plan '@#0: library' -o %t.gemm.cu
// RUN: cudal1-opt %S/library.cu --plan '@#11: library' -o %t.sum.cu
// RUN: cudal1-opt %S/vectorize.cu --plan '@axpy: vectorize(width=16)' -o %t.vec.cu
// RUN: cudal1-opt %S/warp-reduce.cu --plan '@sum: warp-reduce' -o %t.warp.cu
// RUN: %python %S/Inputs/has-helper.py %t.streams.cu %src_root/passes/runtime/side-stream.cuh > %t.log
// RUN: %python %S/Inputs/has-helper.py %t.graph.cu %src_root/passes/runtime/graph-loop.cuh >> %t.log
// RUN: %python %S/Inputs/has-helper.py %t.copy.cu %src_root/passes/runtime/async-copy.cuh >> %t.log
// RUN: %python %S/Inputs/has-helper.py %t.persistent.cu %src_root/passes/runtime/persistent.cuh >> %t.log
// RUN: %python %S/Inputs/has-helper.py %t.gemm.cu %src_root/passes/runtime/cublas.cuh >> %t.log
// RUN: %python %S/Inputs/has-helper.py %t.sum.cu %src_root/passes/runtime/cub-sum.cuh >> %t.log
// RUN: %python %S/Inputs/has-helper.py %t.vec.cu %src_root/passes/runtime/aligned.cuh >> %t.log
// RUN: %python %S/Inputs/has-helper.py %t.warp.cu %src_root/passes/runtime/warp-atomic-add.cuh >> %t.log
// RUN: FileCheck %s --input-file=%t.log --implicit-check-not=MISSING
// The output of a pass that inserts nothing does not hold a helper (the
// check can fail).
// RUN: %python %S/Inputs/has-helper.py %S/streams.cu %src_root/passes/runtime/side-stream.cuh \
// RUN:   | FileCheck %s --check-prefix=ABSENT
// CHECK: side-stream.cuh: verbatim
// CHECK: graph-loop.cuh: verbatim
// CHECK: async-copy.cuh: verbatim
// CHECK: persistent.cuh: verbatim
// CHECK: cublas.cuh: verbatim
// CHECK: cub-sum.cuh: verbatim
// CHECK: aligned.cuh: verbatim
// CHECK: warp-atomic-add.cuh: verbatim
// ABSENT: side-stream.cuh: MISSING
