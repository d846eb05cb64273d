// HPC, sparse matrix-vector product y = A x in CSR (scalar kernel: one thread
// per row), float, repeated; rows have 8..24 nonzeros near the diagonal.
#include "common.h"

__global__ void spmvCsr(const int* rowPtr, const int* colIdx, const float* vals, const float* x,
                        float* y, int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float acc = 0.0f;
    for (int k = rowPtr[r]; k < rowPtr[r + 1]; ++k) acc += vals[k] * x[colIdx[k]];
    y[r] = acc;
  }
}

// Column indices: a band around the diagonal plus an occasional far entry.
__global__ void makeColumns(const int* rowPtr, int* colIdx, int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    for (int k = rowPtr[r]; k < rowPtr[r + 1]; ++k) {
      unsigned int h = hashIndex(k, 7u);
      int c = (h % 8 == 0) ? (int)(h % (unsigned)rows) : r + (int)(h % 1024) - 512;
      if (c < 0) c += rows;
      if (c >= rows) c -= rows;
      colIdx[k] = c;
    }
  }
}

int main(int argc, char** argv) {
  int rows = (int)argInt(argc, argv, "rows", 1 << 22, 1 << 14);
  int reps = (int)argInt(argc, argv, "reps", 20, 2);
  std::vector<int> rowPtr(rows + 1);
  rowPtr[0] = 0;
  for (int r = 0; r < rows; ++r) rowPtr[r + 1] = rowPtr[r] + 8 + (int)(hashIndex(r, 5u) % 17);
  int nnz = rowPtr[rows];
  int* dRowPtr = deviceAlloc<int>(rows + 1);
  int* dCol = deviceAlloc<int>(nnz);
  float* dVal = deviceAlloc<float>(nnz);
  float* x = deviceAlloc<float>(rows);
  float* y = deviceAlloc<float>(rows);
  CHECK(cudaMemcpy(dRowPtr, rowPtr.data(), (rows + 1) * sizeof(int), cudaMemcpyHostToDevice));
  makeColumns<<<(rows + 255) / 256, 256>>>(dRowPtr, dCol, rows);
  fillUniform(dVal, nnz, 150);
  fillUniform(x, rows, 151);

  dim3 block(256);
  dim3 grid((rows + 255) / 256);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    spmvCsr<<<grid, block>>>(dRowPtr, dCol, dVal, x, y, rows);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, rows));
  printTime(ms);
  printFloor((double)reps * ((double)nnz * 8 + (rows + 1) * 4.0 + 2.0 * rows * 4),
             (double)reps * 2.0 * nnz, "f32");
  cudaFree(dRowPtr); cudaFree(dCol); cudaFree(dVal); cudaFree(x); cudaFree(y);
  return 0;
}
