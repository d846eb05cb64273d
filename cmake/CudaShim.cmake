# clang-19 cannot compile against CUDA 13 as shipped (docs/Toolchain.md):
#  1. CUDA 13 removed texture_fetch_functions.h, which clang's CUDA wrapper
#     includes: we provide one on an -isystem path (holding only the host
#     min/max overloads nvcc has and clang lacks);
#  2. CUDA 13's fatbinary dropped --image=profile=...: we provide a CUDA path of
#     symlinks whose bin/fatbinary translates it to --image3=kind=...
# Both live in the build tree; cudal1's tools and the cudal1-clang++ wrapper
# pass them to clang themselves.
set(CUDAL1_SHIM_DIR ${CMAKE_BINARY_DIR}/cuda-shim)
set(CUDAL1_CUDA_STUB_INCLUDE ${CUDAL1_SHIM_DIR}/stub-include)
set(CUDAL1_CUDA_SHIM_PATH ${CUDAL1_SHIM_DIR}/cuda)

file(MAKE_DIRECTORY ${CUDAL1_CUDA_STUB_INCLUDE} ${CUDAL1_CUDA_SHIM_PATH}/bin)
# The stand-in also holds nvcc's host overloads of min and max, which clang-19
# declares for the device only (host max(float, float) fails to parse).
configure_file(${CMAKE_CURRENT_LIST_DIR}/cuda-shim-texture_fetch_functions.h
               ${CUDAL1_CUDA_STUB_INCLUDE}/texture_fetch_functions.h COPYONLY)

foreach(sub include lib64 nvvm)
  if(EXISTS ${CUDAL1_CUDA_ROOT}/${sub} AND NOT EXISTS ${CUDAL1_CUDA_SHIM_PATH}/${sub})
    file(CREATE_LINK ${CUDAL1_CUDA_ROOT}/${sub} ${CUDAL1_CUDA_SHIM_PATH}/${sub} SYMBOLIC)
  endif()
endforeach()
file(GLOB cudal1_cuda_bins RELATIVE ${CUDAL1_CUDA_ROOT}/bin ${CUDAL1_CUDA_ROOT}/bin/*)
foreach(bin IN LISTS cudal1_cuda_bins)
  if(NOT bin STREQUAL "fatbinary" AND NOT EXISTS ${CUDAL1_CUDA_SHIM_PATH}/bin/${bin})
    file(CREATE_LINK ${CUDAL1_CUDA_ROOT}/bin/${bin} ${CUDAL1_CUDA_SHIM_PATH}/bin/${bin} SYMBOLIC)
  endif()
endforeach()
configure_file(${CMAKE_CURRENT_LIST_DIR}/fatbinary.in ${CUDAL1_CUDA_SHIM_PATH}/bin/fatbinary
               @ONLY FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
               WORLD_READ WORLD_EXECUTE)
# A drop-in clang++ for CUDA 13 (tests and users' builds use it).
configure_file(${CMAKE_CURRENT_LIST_DIR}/cudal1-clang++.in ${CMAKE_BINARY_DIR}/bin/cudal1-clang++
               @ONLY FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
               WORLD_READ WORLD_EXECUTE)
