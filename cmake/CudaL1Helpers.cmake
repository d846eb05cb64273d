# Thin helpers so each CMakeLists.txt below says only what it builds.

# cudal1_add_library(Name src... LINK lib...)
function(cudal1_add_library name)
  cmake_parse_arguments(ARG "" "" "LINK" ${ARGN})
  add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PUBLIC ${ARG_LINK})
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()

# cudal1_add_tool(name src... LINK lib...)
function(cudal1_add_tool name)
  cmake_parse_arguments(ARG "" "" "LINK" ${ARGN})
  add_executable(${name} ${ARG_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE ${ARG_LINK})
endfunction()

# cudal1_add_unittest(NameTest src... LINK lib... [LABELS l...])
# GoogleTest binaries; each runs as one ctest test (and through lit's unit suite).
function(cudal1_add_unittest name)
  cmake_parse_arguments(ARG "" "" "LINK;LABELS" ${ARGN})
  if(NOT GTest_FOUND)
    return()
  endif()
  add_executable(${name} ${ARG_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE ${ARG_LINK} GTest::gtest GTest::gtest_main)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/unittests)
  add_test(NAME unit/${name} COMMAND ${name})
  set(labels unit ${ARG_LABELS})
  set_tests_properties(unit/${name} PROPERTIES LABELS "${labels}")
endfunction()

# cudal1_add_gpu_test(name COMMAND cmd...): a test that needs a GPU. It exits
# 77 where none is present, which ctest reports as skipped.
function(cudal1_add_gpu_test name)
  cmake_parse_arguments(ARG "" "" "COMMAND" ${ARGN})
  add_test(NAME gpu/${name} COMMAND ${ARG_COMMAND})
  set_tests_properties(gpu/${name} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
endfunction()
