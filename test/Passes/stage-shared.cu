// stage-shared: a kernel whose one store is unit-stride along one thread index
// and whose reads are unit-stride along the other (a naive transpose) computes
// each value with threadIdx.x along the read's contiguous index, parks it in a
// padded shared tile, and after one barrier stores it with threadIdx.x along
// the write's contiguous index. Launches get the tile's block and a grid that
// covers the original threads. The refusals below each name what blocks it.
// RUN: cudal1-opt %s --list-transforms | %FileCheck %s --check-prefix=LIST
// RUN: cudal1-opt %s --plan '@transpose: stage-shared; @transposeD: stage-shared(tile=16, pad=0, rows=2); @scaleT: stage-shared(tile=32, pad=1, rows=1); @derived: stage-shared; @flat: stage-shared(flat=1, tile=16)' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | %FileCheck %s
// RUN: cudal1-clang++ -x cuda --cuda-gpu-arch=sm_90 -std=c++17 -fsyntax-only -Wall -Werror %t.cu
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// Parameters outside the space, and a refused kernel: nothing is written.
// RUN: not cudal1-opt %s --plan '@transpose: stage-shared(tile=8)' -o %t.bad.cu 2>&1 | %FileCheck %s --check-prefix=BAD-TILE
// RUN: not test -e %t.bad.cu
// RUN: not cudal1-opt %s --plan '@transpose: stage-shared(rows=3)' -o %t.bad.cu 2>&1 | %FileCheck %s --check-prefix=BAD-ROWS
// RUN: not cudal1-opt %s --plan '@copy2d: stage-shared' -o %t.bad.cu 2>&1 | %FileCheck %s --check-prefix=REFUSED
// RUN: not test -e %t.bad.cu

// BAD-TILE: parameter tile=8 is not one of {32, 16}
// BAD-ROWS: parameter rows=3 is not one of {4, 2, 1}
// REFUSED: no read is strided along threadIdx.x and the store is unit-stride: already coalesced

// LIST-LABEL: kernel transpose
// LIST: stage-shared(tile=32|16, pad=1|0, rows=4|2|1)
// LIST-LABEL: kernel transposeD
// LIST: stage-shared(tile=32|16, pad=1|0, rows=4|2|1)
// LIST-LABEL: kernel scaleT
// LIST: stage-shared(tile=32|16, pad=1|0, rows=4|2|1)

// The read is unit-stride along x, the write along y: values are computed
// with threadIdx.x along x and stored with it along y.
// CHECK-LABEL: {{^}}__global__ void transpose(const float *in, float *out, int rows, int cols) {
// CHECK-NEXT: {{^}}  // stage-shared(tile=32, pad=1, rows=4): a 32x32 tile per block of 32x8 threads; the values are computed with threadIdx.x along x and stored with it along y
// CHECK-NEXT: {{^}}  __shared__ float cudal1_tile[32][32 + 1];
// CHECK-NEXT: {{^}}#pragma unroll
// CHECK-NEXT: {{^}}  for (int cudal1_j = 0; cudal1_j < 32; cudal1_j += 8) {
// CHECK-NEXT: {{^}}    int c = blockIdx.x * 32 + threadIdx.x;
// CHECK-NEXT: {{^}}    int r = blockIdx.y * 32 + (threadIdx.y + cudal1_j);
// CHECK-NEXT: {{^}}    if (r < rows && c < cols) {
// CHECK-NEXT: {{^}}      cudal1_tile[threadIdx.y + cudal1_j][threadIdx.x] = in[r * cols + c];
// CHECK-NEXT: {{^}}    }
// CHECK-NEXT: {{^}}  }
// CHECK-NEXT: {{^}}  __syncthreads();
// CHECK-NEXT: {{^}}#pragma unroll
// CHECK-NEXT: {{^}}  for (int cudal1_j = 0; cudal1_j < 32; cudal1_j += 8) {
// CHECK-NEXT: {{^}}    int c = blockIdx.x * 32 + (threadIdx.y + cudal1_j);
// CHECK-NEXT: {{^}}    int r = blockIdx.y * 32 + threadIdx.x;
// CHECK-NEXT: {{^}}    if (r < rows && c < cols)
// CHECK-NEXT: {{^}}      out[c * rows + r] = cudal1_tile[threadIdx.x][threadIdx.y + cudal1_j];
// CHECK-NEXT: {{^}}  }
// CHECK-NEXT: {{^}}}
__global__ void transpose(const float *in, float *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[c * rows + r] = in[r * cols + c];
}

// The reverse (threads indexed over the output), in double, with an early
// return: values are computed with threadIdx.x along y.
// CHECK-LABEL: {{^}}__global__ void transposeD(
// CHECK:      {{^}}  __shared__ double cudal1_tile[16][16 + 0];
// CHECK-NEXT: {{^}}#pragma unroll
// CHECK-NEXT: {{^}}  for (int cudal1_j = 0; cudal1_j < 16; cudal1_j += 8) {
// CHECK-NEXT: {{^}}    int r = blockIdx.x * 16 + (threadIdx.y + cudal1_j);
// CHECK-NEXT: {{^}}    int c = blockIdx.y * 16 + threadIdx.x;
// CHECK-NEXT: {{^}}    if (!(r >= rows || c >= cols)) {
// CHECK-NEXT: {{^}}      cudal1_tile[threadIdx.x][threadIdx.y + cudal1_j] = in[(size_t)r * cols + c];
// CHECK:      {{^}}  __syncthreads();
// CHECK:      {{^}}    int r = blockIdx.x * 16 + threadIdx.x;
// CHECK-NEXT: {{^}}    int c = blockIdx.y * 16 + (threadIdx.y + cudal1_j);
// CHECK-NEXT: {{^}}    if (!(r >= rows || c >= cols))
// CHECK-NEXT: {{^}}      out[(size_t)c * rows + r] = cudal1_tile[threadIdx.y + cudal1_j][threadIdx.x];
__global__ void transposeD(const double *in, double *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  int c = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= rows || c >= cols)
    return;
  out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
}

// An element-wise function of the read (a scale, a broadcast bias, a local)
// is computed where the value is read; the __restrict__ parameters show that
// the buffers do not alias without looking at the launch.
// CHECK-LABEL: {{^}}__global__ void scaleT(
// CHECK:      {{^}}  for (int cudal1_j = 0; cudal1_j < 32; cudal1_j += 32) {
// CHECK-NEXT: {{^}}    int c = blockIdx.x * 32 + threadIdx.x;
// CHECK-NEXT: {{^}}    int r = blockIdx.y * 32 + (threadIdx.y + cudal1_j);
// CHECK:      {{^}}      float v = alpha * in[r * cols + c];
// CHECK-NEXT: {{^}}      cudal1_tile[threadIdx.y + cudal1_j][threadIdx.x] = v + bias[r];
// CHECK:      {{^}}      out[c * rows + r] = cudal1_tile[threadIdx.x][threadIdx.y + cudal1_j];
__global__ void scaleT(const float *__restrict__ in, const float *__restrict__ bias,
                       float *__restrict__ out, float alpha, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x, r = threadIdx.y + blockDim.y * blockIdx.y;
  if (c < cols && r < rows) {
    float v = alpha * in[r * cols + c];
    out[c * rows + r] = v + bias[r];
  }
}

// Values derived from the indices (no memory read) are evaluated again in
// each phase where they are used: `src` where the value is computed, `dst`
// where it is stored.
// CHECK-LABEL: {{^}}__global__ void derived(
// CHECK:      {{^}}    int c = blockIdx.x * 32 + threadIdx.x;
// CHECK-NEXT: {{^}}    int r = blockIdx.y * 32 + (threadIdx.y + cudal1_j);
// CHECK-NEXT: {{^}}    int src = r * cols + c;
// CHECK-NEXT: {{^}}    if (r < rows && c < cols) {
// CHECK-NEXT: {{^}}      cudal1_tile[threadIdx.y + cudal1_j][threadIdx.x] = in[src];
// CHECK:      {{^}}  __syncthreads();
// CHECK:      {{^}}    int c = blockIdx.x * 32 + (threadIdx.y + cudal1_j);
// CHECK-NEXT: {{^}}    int r = blockIdx.y * 32 + threadIdx.x;
// CHECK-NEXT: {{^}}    if (r < rows && c < cols) {
// CHECK-NEXT: {{^}}      int dst = c * rows + r;
// CHECK-NEXT: {{^}}      out[dst] = cudal1_tile[threadIdx.x][threadIdx.y + cudal1_j];
// CHECK-NEXT: {{^}}    }
__global__ void derived(const float *in, float *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  int src = r * cols + c;
  if (r < rows && c < cols) {
    int dst = c * rows + r;
    out[dst] = in[src];
  }
}

// LIST-LABEL: kernel indexFromMemory
// LIST: - stage-shared: the store's index uses the local 'dst', which reads memory (the store runs in another thread, which would read it again)
__global__ void indexFromMemory(const float *in, const int *perm, float *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) {
    int dst = perm[0] + c * rows + r;
    out[dst] = in[r * cols + c];
  }
}

// LIST-LABEL: kernel copy2d
// LIST: - stage-shared: no read is strided along threadIdx.x and the store is unit-stride: already coalesced
__global__ void copy2d(const float *in, float *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[r * cols + c] = in[r * cols + c];
}

// LIST-LABEL: kernel twoStrided
// LIST: - stage-shared: the read b[c * rows + r] at line {{[0-9]+}} is strided along threadIdx.x (stride rows) as the store is: more than one strided access pattern, one tile cannot coalesce both
__global__ void twoStrided(const float *a, const float *b, float *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[c * rows + r] = a[r * cols + c] + b[c * rows + r];
}

// LIST-LABEL: kernel inPlace
// LIST: - stage-shared: the kernel reads a, which it stores to at line {{[0-9]+}}
__global__ void inPlace(float *a, int n) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < n && c < n)
    a[c * n + r] = a[r * n + c];
}

// The launch in `runUnknown` passes its own parameters: nothing shows that
// they point into different allocations. `restrict` (which trusts distinct
// variables) makes both __restrict__, and the listing says it enables this.
// LIST-LABEL: kernel mayAlias
// LIST: - stage-shared: nothing shows that out and in do not alias: launch #{{[0-9]+}} passes for out something other than a variable holding its own allocation (or mark both __restrict__)
// LIST-NEXT: + stage-shared(tile=32|16, pad=1|0, rows=4|2|1)  enabled by @mayAlias: restrict
__global__ void mayAlias(const float *in, float *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[c * rows + r] = in[r * cols + c];
}

// LIST-LABEL: kernel sameBuffer
// LIST: - stage-shared: launch #{{[0-9]+}} passes d for both out and in
__global__ void sameBuffer(const float *in, float *out, int n) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < n && c < n)
    out[c * n + r] = in[r * n + c];
}

// LIST-LABEL: kernel flat
// LIST: stage-shared(tile=32|16, pad=1|0, flat=1)
// A 1-D id split inline (stage-shared-flat.test has the 1-D form's cases):
// the launch is kept, the blocks of 256 stride over 16x16 tiles.
// CHECK-LABEL: {{^}}__global__ void flat(
// CHECK:      {{^}}  // stage-shared(tile=16, pad=1, flat=1): the 1-D id's threads as rows of cols, in 16x16 tiles
// CHECK:      {{^}}          cudal1_tile[cudal1_ty + cudal1_j][cudal1_tx] = in[i];
// CHECK:      {{^}}          out[(i % cols) * rows + i / cols] = cudal1_tile[cudal1_tx][cudal1_ty + cudal1_j];
__global__ void flat(const float *in, float *out, int rows, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows * cols)
    out[(i % cols) * rows + i / cols] = in[i];
}

// LIST-LABEL: kernel usesBlockDim
// LIST: - stage-shared: the kernel uses blockDim at line {{[0-9]+}} other than in its two thread indices (the block shape changes)
__global__ void usesBlockDim(const float *in, float *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[c * rows + r] = in[r * cols + c] * blockDim.x;
}

// LIST-LABEL: kernel twoStores
// LIST: - stage-shared: the statement at line {{[0-9]+}} is not a local declaration (the guarded region is declarations and one store)
__global__ void twoStores(const float *in, float *out, float *out2, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) {
    out2[r * cols + c] = 0.0f;
    out[c * rows + r] = in[r * cols + c];
  }
}

// LIST-LABEL: kernel barrier
// LIST: - stage-shared: the kernel already has a barrier (line {{[0-9]+}}); the staged form needs the only barrier, reached by every thread
__global__ void barrier(const float *in, float *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) {
    __syncthreads();
    out[c * rows + r] = in[r * cols + c];
  }
}

// LIST-LABEL: kernel sharedAlready
// LIST: - stage-shared: the kernel uses shared memory of a size set at launch (buf), so the tile may not fit
__global__ void sharedAlready(const float *in, float *out, int rows, int cols) {
  extern __shared__ float buf[];
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[c * rows + r] = in[r * cols + c] + buf[0];
}

struct Pair {
  float a, b;
};
// LIST-LABEL: kernel structs
// LIST: - stage-shared: the stored element type 'Pair' is not an arithmetic scalar (the tile holds values of it)
__global__ void structs(const Pair *in, Pair *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[c * rows + r] = in[r * cols + c];
}

// LIST-LABEL: kernel unguarded
// LIST: - stage-shared: the kernel is not 'x = global x id; y = global y id; if (guard) out[...] = value;' (one guarded store after the two thread indices)
__global__ void unguarded(const float *in, float *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  out[c * rows + r] = in[r * cols + c];
}

// LIST-LABEL: kernel halfGuarded
// LIST: - stage-shared: the store is not bounded in both thread indices by its guard (the tiles run up to T-1 threads past the launch's in each dimension)
__global__ void halfGuarded(const float *in, float *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows)
    out[c * rows + r] = in[r * cols + c];
}

// LIST-LABEL: kernel userFunction
// LIST: - stage-shared: the kernel calls twice at line {{[0-9]+}} (only math functions of the CUDA headers)
__device__ float twice(float v) { return 2.0f * v; }
__global__ void userFunction(const float *in, float *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[c * rows + r] = twice(in[r * cols + c]);
}

// LIST-LABEL: kernel gather
// LIST: - stage-shared: the index of in[idx[r] * cols + c] at line {{[0-9]+}} is not affine in the thread indices
__global__ void gather(const float *in, const int *idx, float *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[c * rows + r] = in[idx[r] * cols + c];
}

// The launches: the grid covers the original threads in tiles, the block is
// the tile's.
// CHECK-LABEL: void run(
// CHECK: transpose<<<dim3((unsigned)(((size_t)dim3(grid).x * dim3(block).x + 31) / 32), (unsigned)(((size_t)dim3(grid).y * dim3(block).y + 31) / 32), dim3(grid).z * dim3(block).z), dim3(32, 8)>>>(in, out, rows, cols);
// CHECK: transposeD<<<dim3((unsigned)(((size_t)dim3(gridT).x * dim3(dim3(16, 16)).x + 15) / 16), {{.*}}, dim3(16, 8)>>>(in2, out2, cols, rows);
// CHECK: scaleT<<<dim3({{.*}}), dim3(32, 32)>>>(in, bias, out, 2.0f, rows, cols);
// CHECK: {{^}}  flat<<<(rows * cols + 255) / 256, 256>>>(in, out, rows, cols);
void run(int rows, int cols) {
  float *in, *out, *bias, *d, *e, *f;
  double *in2, *out2;
  Pair *p, *q;
  int *idx;
  cudaMalloc(&in, sizeof(float) * rows * cols);
  cudaMalloc(&out, sizeof(float) * rows * cols);
  cudaMalloc(&bias, sizeof(float) * rows);
  cudaMalloc(&d, sizeof(float) * rows * cols);
  cudaMalloc(&e, sizeof(float) * rows * cols);
  cudaMalloc(&f, sizeof(float) * rows * cols);
  cudaMalloc(&in2, sizeof(double) * rows * cols);
  cudaMalloc(&out2, sizeof(double) * rows * cols);
  cudaMalloc(&p, sizeof(Pair) * rows * cols);
  cudaMalloc(&q, sizeof(Pair) * rows * cols);
  cudaMalloc(&idx, sizeof(int) * rows);
  dim3 block(32, 8);
  dim3 grid((cols + 31) / 32, (rows + 7) / 8);
  dim3 gridT((cols + 15) / 16, (rows + 15) / 16);
  transpose<<<grid, block>>>(in, out, rows, cols);
  derived<<<grid, block>>>(in, out, rows, cols);
  indexFromMemory<<<grid, block>>>(in, idx, out, rows, cols);
  transposeD<<<gridT, dim3(16, 16)>>>(in2, out2, cols, rows);
  scaleT<<<grid, block>>>(in, bias, out, 2.0f, rows, cols);
  copy2d<<<grid, block>>>(in, out, rows, cols);
  twoStrided<<<grid, block>>>(in, d, out, rows, cols);
  inPlace<<<grid, block>>>(d, rows);
  sameBuffer<<<grid, block>>>(d, d, rows);
  flat<<<(rows * cols + 255) / 256, 256>>>(in, out, rows, cols);
  usesBlockDim<<<grid, block>>>(in, out, rows, cols);
  twoStores<<<grid, block>>>(in, out, e, rows, cols);
  barrier<<<grid, block>>>(in, out, rows, cols);
  sharedAlready<<<grid, block, 64>>>(in, out, rows, cols);
  structs<<<grid, block>>>(p, q, rows, cols);
  unguarded<<<grid, block>>>(in, out, rows, cols);
  halfGuarded<<<grid, block>>>(in, out, rows, cols);
  userFunction<<<grid, block>>>(in, out, rows, cols);
  gather<<<grid, block>>>(in, idx, out, rows, cols);
}

void runUnknown(const float *a, float *b, int rows, int cols) {
  dim3 block(32, 8);
  dim3 grid((cols + 31) / 32, (rows + 7) / 8);
  mayAlias<<<grid, block>>>(a, b, rows, cols);
}
