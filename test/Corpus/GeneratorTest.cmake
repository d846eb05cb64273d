# corpus/generator: the generator's programs for three fixed seeds compile.
# cmake -DPYTHON=... -DNVCC=... -DSOURCE_DIR=... -DWORK_DIR=... -P GeneratorTest.cmake
file(REMOVE_RECURSE ${WORK_DIR}/src)
foreach(seed 1 2 3)
  execute_process(COMMAND ${PYTHON} ${SOURCE_DIR}/bench/generator/generate.py
                          --seed ${seed} --count 6 --out ${WORK_DIR}/src
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "generate.py --seed ${seed} failed")
  endif()
endforeach()
execute_process(COMMAND ${PYTHON} ${SOURCE_DIR}/bench/run --build-only --jobs 2 --nvcc ${NVCC}
                        --programs-dir ${WORK_DIR}/src --build-dir ${WORK_DIR}/build
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "generated programs failed to compile")
endif()
