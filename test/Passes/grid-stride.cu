// grid-stride: guarded 1-D elementwise kernels become grid-stride loops; the
// index declaration moves into the loop header.
// RUN: cudal1-opt %s --plan '@scale: grid-stride; @early: grid-stride; @tmpl: grid-stride; @cond: grid-stride' -o - | grep -v "^ *// [A-Z-]*:" | %FileCheck %s
// RUN: cudal1-opt %s --plan '@scale: grid-stride; @early: grid-stride; @tmpl: grid-stride; @cond: grid-stride' -o %t.cu
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// RUN: not cudal1-opt %s --plan '@uses_tid: grid-stride' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ILLEGAL-TID
// RUN: not cudal1-opt %s --plan '@two_d: grid-stride' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ILLEGAL-2D
// RUN: not cudal1-opt %s --plan '@offset: grid-stride' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ILLEGAL-GID
// RUN: not cudal1-opt %s --plan '@modified: grid-stride' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ILLEGAL-MOD
// RUN: not cudal1-opt %s --plan '@carried: grid-stride' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ILLEGAL-CARRIED
// RUN: not cudal1-opt %s --plan '@derived: grid-stride' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ILLEGAL-DERIVED
// RUN: not cudal1-opt %s --plan '@barrier: grid-stride' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ILLEGAL-BARRIER
// RUN: not cudal1-opt %s --plan '@ret: grid-stride' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ILLEGAL-RET
// RUN: not cudal1-opt %s --plan '@already: grid-stride' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ILLEGAL-ALREADY
// RUN: not cudal1-opt %s --plan '@unbounded: grid-stride' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ILLEGAL-BOUND

// Pattern (a): the guarding if is the last statement.
// CHECK-LABEL: {{^}}__global__ void scale(
// CHECK-NOT: {{^}} *int i =
// CHECK: for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
// CHECK-NEXT: x[i] *= s;
__global__ void scale(float *x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= s;
}

// Pattern (b): an early return; the rest of the body moves into the loop.
// CHECK-LABEL: {{^}}__global__ void early(
// CHECK: const float two = 2.0f;
// CHECK: for (unsigned i = threadIdx.x + blockDim.x * blockIdx.x; i < n; i += blockDim.x * gridDim.x) {
// CHECK-NEXT: float v = a[i];
// CHECK-NEXT: b[i] = v * two;
// CHECK-NEXT: }
// CHECK-NEXT: }
__global__ void early(const float *a, float *b, int n) {
  const float two = 2.0f;
  unsigned i = threadIdx.x + blockDim.x * blockIdx.x;
  if (i >= n) return;
  float v = a[i];
  b[i] = v * two;
}

// A template is edited once; legality holds for every instantiation.
// CHECK-LABEL: {{^}}__global__ void tmpl(
// CHECK: for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
template <typename T>
__global__ void tmpl(T *y, const T *x, T a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = a * x[i] + y[i];
  }
}

// Uniform parts of the condition stay in the loop condition.
// CHECK-LABEL: {{^}}__global__ void cond(
// CHECK: for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n && alpha != 0.0f; i += blockDim.x * gridDim.x)
__global__ void cond(float *x, float alpha, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && alpha != 0.0f)
    x[i] *= alpha;
}

// Negative: the body uses threadIdx directly, so another thread would
// compute a different value for the same element.
// ILLEGAL-TID: not legal at kernel 'uses_tid': the body uses threadIdx other than through 'i'
__global__ void uses_tid(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = threadIdx.x;
}

// Negative: a 2-D kernel.
// ILLEGAL-2D: not legal at kernel 'two_d': the access a[y * w + x] uses the y or z thread dimension
__global__ void two_d(float *a, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h)
    a[y * w + x] = 0.0f;
}

// Negative: the index is not exactly the global id.
// ILLEGAL-GID: not legal at kernel 'offset': the index 'i' is not initialised to the global thread id
__global__ void offset(float *a, int n) {
  int i = 2 * (blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n)
    a[i] = 0.0f;
}

// Negative: the index is modified.
// ILLEGAL-MOD: not legal at kernel 'modified': the index 'i' is modified in the kernel
__global__ void modified(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    a[i++] = 0.0f;
}

// Negative: a local declared before the loop is updated in the body, so a
// second element would see the first one's value.
// ILLEGAL-CARRIED: not legal at kernel 'carried': the body uses 'acc', which is modified or differs between threads
__global__ void carried(float *a, int n) {
  float acc = 1.0f;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    acc *= 2.0f;
    a[i] = acc;
  }
}

// Negative: a value derived from the index before the guard would not be
// recomputed per element.
// ILLEGAL-DERIVED: not legal at kernel 'derived': a declaration before the guard uses the index 'i'
__global__ void derived(float *a, const float *b, int n, int w) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int row = i / w;
  if (i < n)
    a[i] = b[row];
}

// Negative: barriers and shared memory tie the work to the thread.
// ILLEGAL-BARRIER: not legal at kernel 'barrier': the kernel uses shared memory or barriers
__global__ void barrier(float *a, int n) {
  __shared__ float tile[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    tile[threadIdx.x] = a[i];
    __syncthreads();
    a[i] = tile[255 - threadIdx.x];
  }
}

// Negative: a return inside the body would end the whole loop.
// ILLEGAL-RET: not legal at kernel 'ret': the loop body contains a return
__global__ void ret(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    if (a[i] < 0.0f)
      return;
    a[i] = 1.0f;
  }
}

// Negative: already grid-stride.
// ILLEGAL-ALREADY: not legal at kernel 'already': the kernel is grid-stride already
__global__ void already(float *a, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    a[i] = 0.0f;
}

// Negative: the guard does not bound the index from above.
// ILLEGAL-BOUND: not legal at kernel 'unbounded': the guard does not bound a local index from above
__global__ void unbounded(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i % 2 == 0)
    a[i] = 0.0f;
}

void host(float *x, float *y, double *dx, double *dy, int n) {
  scale<<<(n + 255) / 256, 256>>>(x, 2.0f, n);
  early<<<(n + 255) / 256, 256>>>(x, y, n);
  tmpl<<<(n + 255) / 256, 256>>>(y, x, 2.0f, n);
  tmpl<<<(n + 255) / 256, 256>>>(dy, dx, 2.0, n);
  cond<<<(n + 255) / 256, 256>>>(x, 2.0f, n);
}
