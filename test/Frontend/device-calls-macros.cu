// Device-function calls, indices written through macros, and a launch
// spelled inside a macro: positions are where the user reads them.
// RUN: cudal1-opt %s --analyze=text | FileCheck %s

#define IDX(r, c, ld) ((r) * (ld) + (c))
#define LAUNCH(kernel, n, ...) kernel<<<((n) + 255) / 256, 256>>>(__VA_ARGS__)

__device__ float relu(float v) { return v > 0.0f ? v : 0.0f; }
__device__ float bias_relu(float v, float b) { return relu(v + b); }

// CHECK-LABEL: kernel bias_act
// CHECK: write out[IDX(r, c, cols)]  stride_x=1
// CHECK: read  in[IDX(r, c, cols)]  stride_x=1
// CHECK: read  bias[c]  stride_x=1
// CHECK: calls bias_relu  line 20
__global__ void bias_act(const float *in, const float *bias, float *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y;
  if (c < cols && r < rows)
    out[IDX(r, c, cols)] = bias_relu(in[IDX(r, c, cols)], bias[c]);
}

// CHECK-LABEL: launches:
// CHECK: #0 bias_act<<<((n) + 255) / 256, 256>>>  in host  {{.*}}device-calls-macros.cu:27:10
void host(const float *in, const float *bias, float *out, int rows, int cols) {
  int n = cols;
  LAUNCH(bias_act, n, in, bias, out, rows, cols);
}
