# Thin helpers so each CMakeLists.txt below says only what it builds.

# cudal1_add_library(Name src... LINK lib...)
function(cudal1_add_library name)
  cmake_parse_arguments(ARG "" "" "LINK" ${ARGN})
  add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PUBLIC ${ARG_LINK})
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()

# cudal1_embed_runtime(OUT_VAR file:cName...)
# CUDA that a rewrite inserts into programs lives in runtime/FILE.cuh beside
# the CMakeLists.txt; each becomes runtime/FILE.inc in the build directory
# (cmake/EmbedText.cmake: `cudal1::runtime::cName`, rebuilt when the .cuh
# changes). OUT_VAR receives the .inc files, to list among the sources.
function(cudal1_embed_runtime out_var)
  set(incs "")
  foreach(entry ${ARGN})
    string(REPLACE ":" ";" parts ${entry})
    list(GET parts 0 file)
    list(GET parts 1 name)
    set(in ${CMAKE_CURRENT_SOURCE_DIR}/runtime/${file}.cuh)
    set(out ${CMAKE_CURRENT_BINARY_DIR}/runtime/${file}.inc)
    file(RELATIVE_PATH shown ${CMAKE_SOURCE_DIR} ${in})
    add_custom_command(OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -DINPUT=${in} -DOUTPUT=${out} -DNAME=${name} -DSHOWN=${shown}
              -P ${CMAKE_SOURCE_DIR}/cmake/EmbedText.cmake
      DEPENDS ${in} ${CMAKE_SOURCE_DIR}/cmake/EmbedText.cmake
      COMMENT "Embedding ${shown}" VERBATIM)
    list(APPEND incs ${out})
  endforeach()
  set(${out_var} ${incs} PARENT_SCOPE)
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
