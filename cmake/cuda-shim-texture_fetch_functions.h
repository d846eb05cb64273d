// Generated into cudal1's CUDA shim (cmake/CudaShim.cmake) under the name of
// the header CUDA 13 removed and clang-19's CUDA wrapper still includes, after
// CUDA's math functions (with __CUDA_ARCH__ defined for the host pass too,
// so nothing here tests it): the stand-in is empty but for this.
//
// Host overloads of ::min and ::max, which nvcc provides (crt/math_functions.hpp
// declares them __host__ __device__) and clang-19 declares for the device only,
// so host code such as NVIDIA's CUDA samples (max(float, float) in transpose,
// simpleStreams) fails to parse. Same signatures and arithmetic as nvcc's:
// mixed signed/unsigned arguments compare as the unsigned type, float/double
// pairs as double, floating point through fmin/fmax.
#ifndef CUDAL1_CUDA_SHIM_HOST_MINMAX_H
#define CUDAL1_CUDA_SHIM_HOST_MINMAX_H
#if defined(__cplusplus) && defined(__CUDA__)
static inline __host__ int min(const int a, const int b) { return (int)a < (int)b ? (int)a : (int)b; }
static inline __host__ int max(const int a, const int b) { return (int)a > (int)b ? (int)a : (int)b; }
static inline __host__ unsigned int min(const unsigned int a, const unsigned int b) { return (unsigned int)a < (unsigned int)b ? (unsigned int)a : (unsigned int)b; }
static inline __host__ unsigned int max(const unsigned int a, const unsigned int b) { return (unsigned int)a > (unsigned int)b ? (unsigned int)a : (unsigned int)b; }
static inline __host__ unsigned int min(const int a, const unsigned int b) { return (unsigned int)a < (unsigned int)b ? (unsigned int)a : (unsigned int)b; }
static inline __host__ unsigned int max(const int a, const unsigned int b) { return (unsigned int)a > (unsigned int)b ? (unsigned int)a : (unsigned int)b; }
static inline __host__ unsigned int min(const unsigned int a, const int b) { return (unsigned int)a < (unsigned int)b ? (unsigned int)a : (unsigned int)b; }
static inline __host__ unsigned int max(const unsigned int a, const int b) { return (unsigned int)a > (unsigned int)b ? (unsigned int)a : (unsigned int)b; }
static inline __host__ long int min(const long int a, const long int b) { return (long int)a < (long int)b ? (long int)a : (long int)b; }
static inline __host__ long int max(const long int a, const long int b) { return (long int)a > (long int)b ? (long int)a : (long int)b; }
static inline __host__ unsigned long int min(const unsigned long int a, const unsigned long int b) { return (unsigned long int)a < (unsigned long int)b ? (unsigned long int)a : (unsigned long int)b; }
static inline __host__ unsigned long int max(const unsigned long int a, const unsigned long int b) { return (unsigned long int)a > (unsigned long int)b ? (unsigned long int)a : (unsigned long int)b; }
static inline __host__ unsigned long int min(const long int a, const unsigned long int b) { return (unsigned long int)a < (unsigned long int)b ? (unsigned long int)a : (unsigned long int)b; }
static inline __host__ unsigned long int max(const long int a, const unsigned long int b) { return (unsigned long int)a > (unsigned long int)b ? (unsigned long int)a : (unsigned long int)b; }
static inline __host__ unsigned long int min(const unsigned long int a, const long int b) { return (unsigned long int)a < (unsigned long int)b ? (unsigned long int)a : (unsigned long int)b; }
static inline __host__ unsigned long int max(const unsigned long int a, const long int b) { return (unsigned long int)a > (unsigned long int)b ? (unsigned long int)a : (unsigned long int)b; }
static inline __host__ long long int min(const long long int a, const long long int b) { return (long long int)a < (long long int)b ? (long long int)a : (long long int)b; }
static inline __host__ long long int max(const long long int a, const long long int b) { return (long long int)a > (long long int)b ? (long long int)a : (long long int)b; }
static inline __host__ unsigned long long int min(const unsigned long long int a, const unsigned long long int b) { return (unsigned long long int)a < (unsigned long long int)b ? (unsigned long long int)a : (unsigned long long int)b; }
static inline __host__ unsigned long long int max(const unsigned long long int a, const unsigned long long int b) { return (unsigned long long int)a > (unsigned long long int)b ? (unsigned long long int)a : (unsigned long long int)b; }
static inline __host__ unsigned long long int min(const long long int a, const unsigned long long int b) { return (unsigned long long int)a < (unsigned long long int)b ? (unsigned long long int)a : (unsigned long long int)b; }
static inline __host__ unsigned long long int max(const long long int a, const unsigned long long int b) { return (unsigned long long int)a > (unsigned long long int)b ? (unsigned long long int)a : (unsigned long long int)b; }
static inline __host__ unsigned long long int min(const unsigned long long int a, const long long int b) { return (unsigned long long int)a < (unsigned long long int)b ? (unsigned long long int)a : (unsigned long long int)b; }
static inline __host__ unsigned long long int max(const unsigned long long int a, const long long int b) { return (unsigned long long int)a > (unsigned long long int)b ? (unsigned long long int)a : (unsigned long long int)b; }
static inline __host__ float min(const float a, const float b) { return fminf(a, b); }
static inline __host__ double min(const double a, const double b) { return fmin((double)a, (double)b); }
static inline __host__ double min(const float a, const double b) { return fmin((double)a, (double)b); }
static inline __host__ double min(const double a, const float b) { return fmin((double)a, (double)b); }
static inline __host__ float max(const float a, const float b) { return fmaxf(a, b); }
static inline __host__ double max(const double a, const double b) { return fmax((double)a, (double)b); }
static inline __host__ double max(const float a, const double b) { return fmax((double)a, (double)b); }
static inline __host__ double max(const double a, const float b) { return fmax((double)a, (double)b); }
#endif
#endif
