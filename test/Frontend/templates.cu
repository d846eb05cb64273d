// Template kernels: one entry per instantiation, with its own mangled name,
// key and strides (a non-type template parameter becomes a constant).
// RUN: cudal1-opt %s --analyze=text | FileCheck %s
// RUN: cudal1-opt %s --analyze | FileCheck %s --check-prefix=JSON

template <typename T, int Stride>
__global__ void gather(const T *in, T *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i * Stride];
}

// CHECK-LABEL: kernel gather<float, 2>
// CHECK: read  in[i * Stride]  stride_x=2
// CHECK-LABEL: kernel gather<double, 8>
// CHECK: read  in[i * Stride]  stride_x=8
// CHECK-LABEL: launches:
// CHECK: #0 gather<<<(n + 127) / 128, 128>>>  in run<float, 2>  {{.*}}templates.cu:26:3
// CHECK: #1 gather<<<(n + 127) / 128, 128>>>  in run<double, 8>  {{.*}}templates.cu:26:3

// JSON: "mangled_name": "_Z6gatherIfLi2EEvPKT_PS0_i"
// JSON: "template_args": "<float, 2>"
// JSON: "mangled_name": "_Z6gatherIdLi8EEvPKT_PS0_i"
template <typename T, int S>
void run(const T *in, T *out, int n) {
  gather<T, S><<<(n + 127) / 128, 128>>>(in, out, n);
}

void both(const float *f, float *g, const double *d, double *e, int n) {
  run<float, 2>(f, g, n);
  run<double, 8>(d, e, n);
}
