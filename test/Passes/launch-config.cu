// launch-config: new block shapes; the grid is derived from the original one
// so that at least the same threads run.
// RUN: cudal1-opt %s --plan '@#0: launch-config(block=512); @#1: launch-config(block=16x16)' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// Negative cases: each reason is reported and nothing is written.
// RUN: not cudal1-opt %s --plan '@#2: launch-config(block=256)' -o %t.bad.cu 2>&1 | FileCheck %s --check-prefix=SHARED
// RUN: not test -e %t.bad.cu
// RUN: not cudal1-opt %s --plan '@#3: launch-config(block=256)' 2>&1 | FileCheck %s --check-prefix=UNGUARDED
// RUN: not cudal1-opt %s --plan '@#4: launch-config(block=256)' 2>&1 | FileCheck %s --check-prefix=BLOCKID
// RUN: not cudal1-opt %s --plan '@#1: launch-config(block=256)' 2>&1 | FileCheck %s --check-prefix=DIMS
// RUN: not cudal1-opt %s --plan '@#0: launch-config(block=64x32)' 2>&1 | FileCheck %s --check-prefix=BIG
// RUN: not cudal1-opt %s --plan '@#0: launch-config(block=2048)' 2>&1 | FileCheck %s --check-prefix=BIGDIM
// RUN: not cudal1-opt %s --plan '@#0: launch-config(block=65536x65536)' 2>&1 | FileCheck %s --check-prefix=BIGDIM
// RUN: not cudal1-opt %s --plan '@#0: launch-config(block=256, size=2)' 2>&1 | FileCheck %s --check-prefix=PARAM
// RUN: cudal1-opt %s --plan '@#5: launch-config(block=128)' -o - | grep -v "^ *// [A-Z-]*:" | FileCheck %s --check-prefix=GRIDSTRIDE
// A block above an earlier step's __launch_bounds__ would fail at launch (the
// H200 sweep found six such compositions), so it is refused; the listing
// after launch-bounds offers only the shapes within the bound.
// RUN: not cudal1-opt %s --plan '@saxpy: launch-bounds(threads=256); @#0: launch-config(block=512)' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BOUNDS
// BOUNDS: block=512 has 512 threads, more than the kernel's __launch_bounds__(256) allows
// RUN: cudal1-opt %s --plan '@saxpy: launch-bounds(threads=256)' -o %t.lb.cu
// RUN: cudal1-opt %t.lb.cu --list-transforms | FileCheck %s --check-prefix=BOUNDS-LIST
// BOUNDS-LIST: launch-config(block=64|128|256){{$}}

__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

__global__ void transpose(const float *in, float *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[c * rows + r] = in[r * cols + c];
}

// Shared memory sized for the block: a new shape would break it.
__global__ void block_sum(const float *x, float *out, int n) {
  __shared__ float buf[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (int k = 0; k < 256; ++k)
      s += buf[k];
    out[blockIdx.x] = s;
  }
}

// No guard: more threads would write past the end.
__global__ void fill(float *y) { y[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f; }

// One value per block: what a thread does depends on its block, not only its global id.
__global__ void per_block(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[blockIdx.x] = 0.0f;
}

// A grid-stride loop covers every element whatever the grid: legal.
__global__ void scale_gs(float *y, float s, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    y[i] *= s;
}

void run(float *x, float *y, float *t, int n, int rows, int cols) {
  // CHECK: saxpy<<<(unsigned)(((size_t)((n + 255) / 256) * (256) + 511) / 512), 512>>>(n, 2.0f, x, y);
  saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
  dim3 block(32, 8);
  dim3 grid((cols + 31) / 32, (rows + 7) / 8);
  // CHECK: transpose<<<dim3((dim3(grid).x * dim3(block).x + 15) / 16, (dim3(grid).y * dim3(block).y + 15) / 16, (dim3(grid).z * dim3(block).z + 0) / 1), dim3(16, 16, 1)>>>(x, t, rows, cols);
  transpose<<<grid, block>>>(x, t, rows, cols);
  block_sum<<<(n + 255) / 256, 256>>>(x, y, n);
  fill<<<n / 256, 256>>>(y);
  per_block<<<(n + 255) / 256, 256>>>(y, n);
  // GRIDSTRIDE: scale_gs<<<(unsigned)(((size_t)(1024) * (256) + 127) / 128), 128>>>(y, 0.5f, n);
  scale_gs<<<1024, 256>>>(y, 0.5f, n);
}
// SHARED: plan:1:6: error: step 1 (launch-config): not legal at launch site #2 ({{.*}}launch-config.cu:{{[0-9]+}}:3): the kernel uses shared memory or barriers, which depend on the block shape
// UNGUARDED: not legal at launch site #3 {{.*}}: the kernel does not guard its index range, so extra threads would run out of bounds
// BLOCKID: not legal at launch site #4 {{.*}}: the index y[blockIdx.x] at line {{[0-9]+}} depends on the block shape, not only on the global thread id
// DIMS: the kernel uses 2 thread dimensions; block=256 has fewer at launch site #1
// BIG: block=64x32 has more than 1024 threads
// BIGDIM: is not a shape like 256 or 32x8 (each dimension 1 to 1024)
// PARAM: unknown parameter 'size'
