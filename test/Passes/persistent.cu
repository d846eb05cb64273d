// persistent: a host loop of launches becomes one kernel that loops on the
// device: one block (__syncthreads between the phases), a cooperative grid
// (grid.sync), or the launches' own threads where every element stays with
// its thread (form=owner, no barrier). The host loop keeps its host
// arithmetic (the counter, the swaps); its launches and syncs run only
// where the helper's cost rule declined to launch the persistent kernel.
// RUN: cudal1-opt %s --list-transforms | FileCheck %s --check-prefix=LIST
// RUN: cudal1-opt %s --plan '@loop#0: persistent(form=grid); @loop#1: persistent; @loop#2: persistent(form=block); @loop#3: persistent(form=grid)' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// RUN: cudal1-opt %s --plan '@loop#0: persistent(form=block)' -o %t.block.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.block.cu | FileCheck %s --check-prefix=BLOCK
// The parameter's default is the first legal form (owner where it is legal).
// RUN: cudal1-opt %s --plan '@loop#1: persistent' -o %t.default.cu
// RUN: cudal1-opt %s --plan '@loop#1: persistent(form=owner)' -o %t.owner.cu
// RUN: tail -n +2 %t.default.cu > %t.default.body && tail -n +2 %t.owner.cu > %t.owner.body
// RUN: cmp %t.default.body %t.owner.body
// Negative cases: each reason is reported and nothing is written.
// RUN: not cudal1-opt %s --plan '@loop#0: persistent(form=owner)' -o %t.bad.cu 2>&1 | FileCheck %s --check-prefix=OWNER
// RUN: not test -e %t.bad.cu
// RUN: not cudal1-opt %s --plan '@loop#4: persistent' -o %t.bad.cu 2>&1 | FileCheck %s --check-prefix=HOSTREAD
// RUN: not test -e %t.bad.cu
// RUN: not cudal1-opt %s --plan '@loop#5: persistent' 2>&1 | FileCheck %s --check-prefix=COPY
// RUN: not cudal1-opt %s --plan '@loop#6: persistent' 2>&1 | FileCheck %s --check-prefix=PRINT
// RUN: not cudal1-opt %s --plan '@loop#7: persistent' 2>&1 | FileCheck %s --check-prefix=TRIP
// RUN: not cudal1-opt %s --plan '@loop#8: persistent' 2>&1 | FileCheck %s --check-prefix=WHILE
// RUN: not cudal1-opt %s --plan '@loop#9: persistent' 2>&1 | FileCheck %s --check-prefix=BREAK
// RUN: not cudal1-opt %s --plan '@loop#10: persistent(form=block)' 2>&1 | FileCheck %s --check-prefix=BIG
// RUN: not cudal1-opt %s --plan '@loop#11: persistent' 2>&1 | FileCheck %s --check-prefix=BARRIER
// RUN: not cudal1-opt %s --plan '@loop#12: persistent(form=grid)' 2>&1 | FileCheck %s --check-prefix=CALLEE
// RUN: not cudal1-opt %s --plan '@loop#13: persistent' 2>&1 | FileCheck %s --check-prefix=CONFIG
// RUN: not cudal1-opt %s --plan '@loop#14: persistent(form=owner)' 2>&1 | FileCheck %s --check-prefix=SHIFT
// RUN: not cudal1-opt %s --plan '@loop#15: persistent' 2>&1 | FileCheck %s --check-prefix=BRANCH
// RUN: not cudal1-opt %s --plan '@loop#16: persistent(form=owner)' 2>&1 | FileCheck %s --check-prefix=CROSS
// RUN: not cudal1-opt %s --plan '@loop#17: persistent' 2>&1 | FileCheck %s --check-prefix=PRINTF
// RUN: not cudal1-opt %s --plan '@loop#18: persistent' 2>&1 | FileCheck %s --check-prefix=FENCE
// RUN: not cudal1-opt %s --plan '@loop#0: persistent(form=warp)' 2>&1 | FileCheck %s --check-prefix=PARAM
// RUN: not cudal1-opt %s --plan '@#0: persistent' 2>&1 | FileCheck %s --check-prefix=SCOPE
#include <cstdio>
#include <cstdlib>
#include <utility>

#define CHECK(call)                                                                \
  do {                                                                             \
    cudaError_t err_ = (call);                                                     \
    if (err_ != cudaSuccess) {                                                     \
      fprintf(stderr, "%s\n", cudaGetErrorString(err_));                           \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

// Every thread reads all of hPrev: a barrier must separate the steps.
__global__ void rnnStep(const float *W, const float *b, const float *hPrev, const float *xt,
                        float *hNext, int H) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < H) {
    float acc = b[j] + xt[j];
    for (int k = 0; k < H; ++k)
      acc += W[j * H + k] * hPrev[k];
    hNext[j] = tanhf(acc);
  }
}

// Element to element: each thread reads and writes only its own element.
__global__ void decay(const float *in, float *out, float k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] * k + 1.0f;
}

__global__ void scale(float *x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= s;
}

__global__ void smooth(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1)
    y[i] = 0.25f * x[i - 1] + 0.5f * x[i] + 0.25f * x[i + 1];
}

__global__ void blockSum(const float *x, float *out, int n) {
  __shared__ float part[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  part[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (int k = 0; k < 256; ++k)
      s += part[k];
    out[blockIdx.x] = s;
  }
}

__device__ int globalId() { return blockIdx.x * blockDim.x + threadIdx.x; }

__global__ void viaHelper(float *x, int n) {
  int i = globalId();
  if (i < n)
    x[i] += 1.0f;
}

// A recurrence with a ping-pong swap, a per-step offset and a sync per step.
// CHECK: struct Cudal1PersistentLaunch {
// CHECK: cudal1PersistentGrid(
// CHECK: cudal1 persistent: [[K0:cudal1Persistent[0-9]+]] runs host loop #0 of recurrence on the device (form=grid)
// CHECK-NEXT: __global__ void [[K0]](int steps, const float * W, const float * b, float * hA, const float * x, int H, float * hB, dim3 cudal1G0, dim3 cudal1B0) {
// CHECK-NEXT: cooperative_groups::grid_group cudal1Grid = cooperative_groups::this_grid();
// CHECK: for (int t = 0; t < steps; ++t) {
// CHECK-NEXT: // rnnStep<<<(H + 127) / 128, 128>>>
// CHECK-NEXT: for (unsigned long long cudal1V = cudal1Rank; cudal1V < cudal1PersistentCount(cudal1G0, cudal1B0); cudal1V += cudal1Threads) {
// CHECK-NEXT: uint3 cudal1Thread, cudal1Block;
// CHECK-NEXT: cudal1PersistentCoords(cudal1V, cudal1G0, cudal1B0, cudal1Thread, cudal1Block);
// CHECK-NEXT: [](uint3 threadIdx, uint3 blockIdx, dim3 blockDim, dim3 gridDim, const float *W, const float *b, const float *hPrev, const float *xt, float *hNext, int H) {
// CHECK: }(cudal1Thread, cudal1Block, cudal1B0, cudal1G0, W, b, hA, x + (size_t)t * H, hB, H);
// CHECK-NEXT: }
// CHECK-NEXT: float *tmp = hA;
// CHECK-NEXT: hA = hB;
// CHECK-NEXT: hB = tmp;
// CHECK-NEXT: cudal1Grid.sync();
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-LABEL: void recurrence(
void recurrence(const float *W, const float *b, const float *x, float *hA, float *hB, int H,
                int steps) {
  // CHECK: bool [[ON:cudal1OnDevice[0-9]+]];
  // CHECK-NEXT: { // cudal1 persistent: the launches of loop #0 run in [[K0]]
  // CHECK-NEXT: const dim3 cudal1G0 = dim3((H + 127) / 128), cudal1B0 = dim3(128);
  // CHECK-NEXT: [[ON]] = cudal1PersistentGrid([[K0]], 0, {{[{][{]}}cudal1G0, cudal1B0}}, steps, W, b, hA, x, H, hB, cudal1G0, cudal1B0);
  // CHECK-NEXT: if ([[ON]])
  // CHECK-NEXT: CHECK(cudaDeviceSynchronize());
  // CHECK-NEXT: }
  // CHECK-NEXT: for (int t = 0; t < steps; ++t) {
  for (int t = 0; t < steps; ++t) {
    // CHECK-NEXT: if (![[ON]]) rnnStep<<<(H + 127) / 128, 128>>>(W, b, hA, x + (size_t)t * H, hB, H);
    rnnStep<<<(H + 127) / 128, 128>>>(W, b, hA, x + (size_t)t * H, hB, H);
    // CHECK-NEXT: CHECK(cudaGetLastError());
    CHECK(cudaGetLastError());
    // CHECK-NEXT: if (![[ON]]) CHECK(cudaDeviceSynchronize());
    CHECK(cudaDeviceSynchronize());
    // CHECK-NEXT: float *tmp = hA;
    float *tmp = hA;
    hA = hB;
    hB = tmp;
  }
}

// Element to element with std::swap of two fresh buffers: each thread owns
// its element through every step (form=owner, the original grid, no barrier).
// CHECK: runs host loop #1 of relax on the device (form=owner)
// CHECK-NEXT: __global__ void [[K1:cudal1Persistent[0-9]+]](int steps, float * a, float * b, int n, float cudal1Arg0_2) {
// CHECK-NEXT: for (int s = 0; s < steps; s++) {
// CHECK-NEXT: // decay<<<(n + 255) / 256, 256>>>
// CHECK-NEXT: [](const float *in, float *out, float k, int n) {
// CHECK: }(a, b, cudal1Arg0_2, n);
// CHECK-NEXT: { auto cudal1Swap = a; a = b; b = cudal1Swap; }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-LABEL: void relax(
void relax(int n, int steps, float rate) {
  float *a, *b;
  cudaMalloc(&a, n * sizeof(float));
  cudaMalloc(&b, n * sizeof(float));
  // CHECK: [[ON1:cudal1OnDevice[0-9]+]] = cudal1PersistentOwner([[K1]], 0, dim3((n + 255) / 256), dim3(256), steps, a, b, n, 1.0f - rate);
  // CHECK-NEXT: }
  // CHECK-NEXT: for (int s = 0; s < steps; s++) {
  // CHECK-NEXT: if (![[ON1]]) decay<<<(n + 255) / 256, 256>>>(a, b, 1.0f - rate, n);
  // CHECK-NEXT: std::swap(a, b);
  for (int s = 0; s < steps; s++) {
    decay<<<(n + 255) / 256, 256>>>(a, b, 1.0f - rate, n);
    std::swap(a, b);
  }
  cudaFree(a);
  cudaFree(b);
}

// Three phases: the second shares only its own elements with the first (no
// barrier between them), the third reads neighbours (a barrier before it).
// One block: the launches have 512 threads.
// CHECK-LABEL: runs host loop #2 of chain on the device (form=block)
// CHECK: const unsigned long long cudal1Rank = threadIdx.x, cudal1Threads = blockDim.x;
// CHECK: // scale<<<2, 256>>>
// CHECK-NOT: __syncthreads();
// CHECK: // scale<<<2, 256>>>
// CHECK: }(cudal1Thread, cudal1Block, cudal1B0, cudal1G0, x, cudal1Arg1_1, n);
// CHECK-NEXT: }
// CHECK-NEXT: __syncthreads();
// CHECK-NEXT: // smooth<<<2, 256>>>
// CHECK: }(cudal1Thread, cudal1Block, cudal1B0, cudal1G0, x, y, n);
// CHECK-NEXT: }
// CHECK-NEXT: __syncthreads();
// CHECK-NEXT: }
// CHECK-LABEL: void chain(
void chain(float *x, float *y, int n) {
  // CHECK: const dim3 cudal1G0 = dim3(2), cudal1B0 = dim3(256);
  // CHECK-NEXT: {{cudal1OnDevice[0-9]+}} = cudal1PersistentBlock({{cudal1Persistent[0-9]+}}, 0, {{[{][{]}}cudal1G0, cudal1B0}}, x, n, y, 2.0f, 0.5f, cudal1G0, cudal1B0);
  for (int r = 0; r < 1000; ++r) {
    scale<<<2, 256>>>(x, 2.0f, n);
    scale<<<2, 256>>>(x, 0.5f, n);
    smooth<<<2, 256>>>(x, y, n);
  }
}

// A stream, a counter declared before the loop, a local derived per step.
// CHECK-LABEL: runs host loop #3 of offsets on the device (form=grid)
// CHECK: int it;
// CHECK-NEXT: for (it = 0; it < steps; it += 2) {
// CHECK-NEXT: int off = it * n;
// CHECK-NEXT: // scale<<<g, blk>>>
// CHECK: }(cudal1Thread, cudal1Block, cudal1B0, cudal1G0, x + off, cudal1Arg0_1, n);
// CHECK-LABEL: void offsets(
void offsets(float *x, int n, int steps, cudaStream_t st) {
  dim3 g((n + 63) / 64), blk(64);
  int it;
  // CHECK: {{cudal1OnDevice[0-9]+}} = cudal1PersistentGrid({{cudal1Persistent[0-9]+}}, st, {{[{][{]}}cudal1G0, cudal1B0}}, steps, n, x, 2.0f, cudal1G0, cudal1B0);
  for (it = 0; it < steps; it += 2) {
    int off = it * n;
    scale<<<g, blk, 0, st>>>(x + off, 2.0f, n);
  }
  CHECK(cudaStreamSynchronize(st));
}

// The host reads managed memory in the loop.
void managed(float *m, float *o, int n, int steps) {
  for (int s = 0; s < steps; ++s) {
    smooth<<<(n + 255) / 256, 256>>>(m, o, n);
    cudaDeviceSynchronize();
    m[0] = o[1];
  }
}

// A device-to-host copy per step.
void copies(float *a, float *b, float *host, int n, int steps) {
  for (int s = 0; s < steps; ++s) {
    smooth<<<(n + 255) / 256, 256>>>(a, b, n);
    cudaMemcpy(host, b, n * sizeof(float), cudaMemcpyDeviceToHost);
  }
}

// Host work between the launches that the device cannot replay.
void record(int step);
void progress(float *a, float *b, int n, int steps) {
  for (int s = 0; s < steps; ++s) {
    smooth<<<(n + 255) / 256, 256>>>(a, b, n);
    record(s);
  }
}

// The condition reads a value the body changes.
void shrinking(float *a, float *b, int n) {
  for (int s = 0; s < n; ++s) {
    smooth<<<(n + 255) / 256, 256>>>(a, b, n);
    n = n - 1;
  }
}

void whileLoop(float *a, float *b, int n, int steps) {
  while (steps > 0) {
    smooth<<<(n + 255) / 256, 256>>>(a, b, n);
    steps--;
  }
}

void early(float *a, float *b, int n, int steps) {
  for (int s = 0; s < steps; ++s) {
    smooth<<<(n + 255) / 256, 256>>>(a, b, n);
    break;
  }
}

// 64 x 256 threads: more than one block.
void big(float *x, int steps) {
  for (int s = 0; s < steps; ++s)
    scale<<<64, 256>>>(x, 0.5f, 64 * 256);
}

void barrier(float *x, float *out, int n, int steps) {
  for (int s = 0; s < steps; ++s)
    blockSum<<<(n + 255) / 256, 256>>>(x, out, n);
}

void helper(float *x, int n, int steps) {
  for (int s = 0; s < steps; ++s)
    viaHelper<<<(n + 255) / 256, 256>>>(x, n);
}

void growing(float *x, int n, int steps) {
  for (int s = 0; s < steps; ++s)
    scale<<<s + 1, 256>>>(x, 0.5f, n);
}

// Element to element, but the buffer moves by one element per step.
void shifting(float *x, int n, int steps) {
  for (int s = 0; s < steps; ++s) {
    scale<<<(n + 255) / 256, 256>>>(x, 0.5f, n);
    x = x + 1;
  }
}

void branchy(float *a, float *b, int n, int steps) {
  for (int s = 0; s < steps; ++s) {
    smooth<<<(n + 255) / 256, 256>>>(a, b, n);
    if (s % 2)
      std::swap(a, b);
  }
}

// Neighbours across a ping-pong swap of fresh buffers: a barrier is needed.
void diffuse(int n, int steps) {
  float *a, *b;
  cudaMalloc(&a, n * sizeof(float));
  cudaMalloc(&b, n * sizeof(float));
  for (int s = 0; s < steps; ++s) {
    smooth<<<(n + 255) / 256, 256>>>(a, b, n);
    float *t = a;
    a = b;
    b = t;
  }
}

__global__ void chatty(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0)
    printf("x[0] = %f\n", x[0]);
  if (i < n)
    x[i] += 1.0f;
}

__device__ void publish(float *x, int i) {
  __threadfence();
  x[i] = 1.0f;
}

__global__ void fenced(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    publish(x, i);
}

void printing(float *x, int n, int steps) {
  for (int s = 0; s < steps; ++s)
    chatty<<<(n + 255) / 256, 256>>>(x, n);
}

void fences(float *x, int n, int steps) {
  for (int s = 0; s < steps; ++s)
    fenced<<<(n + 255) / 256, 256>>>(x, n);
}

// LIST: loop #0 in recurrence {{.*}}  launches #0
// LIST-NEXT: graph
// LIST-NEXT: - loop-streams: the loop's body holds a statement other than the launch
// The block form is offered only where every launch is known to fit one
// block (loop #2's constant grids); elsewhere an explicit plan asks for it.
// LIST-NEXT: persistent(form=grid){{$}}
// LIST: loop #1 in relax {{.*}}  launches #1
// LIST: persistent(form=owner|grid){{$}}
// LIST: loop #2 in chain {{.*}}  launches #2 #3 #4
// LIST: persistent(form=grid|block)
// LIST: loop #10 in big
// LIST: persistent(form=owner|grid)
// LIST: loop #12 in helper
// LIST: - persistent: form=grid: kernel 'viaHelper' calls 'globalId', which reads the thread or block index itself (it would see the persistent kernel's threads); form=owner: launch #14 and its next iteration share 'x' not element by element (unknown
// BLOCK: cudal1PersistentBlock(
// BLOCK: (form=block)
// BLOCK: const unsigned long long cudal1Rank = threadIdx.x, cudal1Threads = blockDim.x;
// BLOCK: __syncthreads();
// BLOCK: cudal1PersistentBlock({{cudal1Persistent[0-9]+}}, 0,
// OWNER: form=owner: launch #0 and its next iteration: 'hB' and 'b' may be the same buffer (not both distinct allocations)
// CROSS: form=owner: launch #{{[0-9]+}} and its next iteration share 'a|b' not element by element (cross-thread{{.*}}): a barrier must separate them
// HOSTREAD: step 1 (persistent): not legal at host loop #4 ({{.*}}persistent.cu:{{[0-9]+}}:3): the loop reads device data on the host: reads or writes device buffer 'm' on the host
// COPY: the loop reads device data on the host: copies device data to the host (cudaMemcpy)
// PRINT: line {{[0-9]+}}: host code in the loop that the device cannot replay: a call of 'record'
// TRIP: the trip count is not known on entry: the condition reads 'n', which line {{[0-9]+}} assigns in the loop body
// WHILE: the loop is a while loop, not a counted for loop: its trip count is not known on entry
// BREAK: line {{[0-9]+}}: a break leaves the iteration early: the trip count is not known on entry
// BIG: form=block: launch #{{[0-9]+}} runs 16384 threads, more than one block holds (1024)
// BARRIER: the kernel uses shared memory
// CALLEE: form=grid: kernel 'viaHelper' calls 'globalId', which reads the thread or block index itself
// CONFIG: launch #{{[0-9]+}}: its grid changes in the loop (it reads 's')
// SHIFT: form=owner: 'x' changes in the loop other than by exchanging buffers
// BRANCH: line {{[0-9]+}}: host code in the loop that the device cannot replay: a branch
// PRINTF: launch #{{[0-9]+}}: the kernel prints (the output of every iteration would wait in the device's printf buffer)
// FENCE: launch #{{[0-9]+}}: the kernel calls 'publish', which synchronizes threads
// PARAM: parameter form=warp is not one of {owner, grid, block}
// SCOPE: applies to a host loop: scope it with @loop#id
