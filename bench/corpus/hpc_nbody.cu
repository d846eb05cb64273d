// HPC, all-pairs n-body in float with softening: one thread per body reads
// every other body from global memory, then a separate integration kernel.
#include "common.h"

__global__ void accelerations(const float* px, const float* py, const float* pz, const float* m,
                              float* ax, float* ay, float* az, int n, float soft2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float fx = 0.0f, fy = 0.0f, fz = 0.0f;
    for (int j = 0; j < n; ++j) {
      float dx = px[j] - px[i], dy = py[j] - py[i], dz = pz[j] - pz[i];
      float r2 = dx * dx + dy * dy + dz * dz + soft2;
      float inv = 1.0f / sqrtf(r2);
      float s = m[j] * inv * inv * inv;
      fx += dx * s;
      fy += dy * s;
      fz += dz * s;
    }
    ax[i] = fx;
    ay[i] = fy;
    az[i] = fz;
  }
}

__global__ void integrate(float* px, float* py, float* pz, float* vx, float* vy, float* vz,
                          const float* ax, const float* ay, const float* az, int n, float dt) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    vx[i] += dt * ax[i]; vy[i] += dt * ay[i]; vz[i] += dt * az[i];
    px[i] += dt * vx[i]; py[i] += dt * vy[i]; pz[i] += dt * vz[i];
  }
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "bodies", 32768, 1024);
  int steps = (int)argInt(argc, argv, "steps", 4, 2);
  float* buf[10];
  for (int k = 0; k < 10; ++k) buf[k] = deviceAlloc<float>(n);
  float *px = buf[0], *py = buf[1], *pz = buf[2], *vx = buf[3], *vy = buf[4], *vz = buf[5];
  float *ax = buf[6], *ay = buf[7], *az = buf[8], *m = buf[9];
  fillUniform(px, n, 153); fillUniform(py, n, 154); fillUniform(pz, n, 155);
  fillUniform(vx, n, 156, -0.01, 0.01); fillUniform(vy, n, 157, -0.01, 0.01);
  fillUniform(vz, n, 158, -0.01, 0.01); fillUniform(m, n, 159, 0.5, 1.0);

  dim3 block(256);
  dim3 grid((n + 255) / 256);
  GpuTimer timer;
  timer.start();
  for (int s = 0; s < steps; ++s) {
    accelerations<<<grid, block>>>(px, py, pz, m, ax, ay, az, n, 1e-3f);
    integrate<<<grid, block>>>(px, py, pz, vx, vy, vz, ax, ay, az, n, 1e-4f);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(px, n) + checksumOf(py, n) + checksumOf(pz, n));
  printTime(ms);
  printFloor((double)steps * 13.0 * n * sizeof(float),
             (double)steps * (20.0 * (double)n * n + 12.0 * n), "f32");
  for (int k = 0; k < 10; ++k) cudaFree(buf[k]);
  return 0;
}
