# cmake -DINPUT=file.cuh -DOUTPUT=file.inc -DNAME=cIdentifier -P EmbedText.cmake
# Writes OUTPUT holding INPUT's bytes as a C++ raw string literal,
# `inline constexpr const char NAME[]` in namespace cudal1::runtime
# (cudal1_embed_runtime in CudaL1Helpers.cmake runs it for every runtime/*.cuh;
# SHOWN, optional, is the path the generated file names as its source).
foreach(var INPUT OUTPUT NAME)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "EmbedText.cmake: -D${var}= is missing")
  endif()
endforeach()
file(READ "${INPUT}" text)
set(delim "cudal1_runtime")
string(FIND "${text}" ")${delim}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT}: contains ')${delim}\"', which would end the raw string")
endif()
if(NOT DEFINED SHOWN)
  get_filename_component(SHOWN "${INPUT}" NAME)
endif()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${SHOWN} by cmake/EmbedText.cmake: edit the .cuh.\n"
  "namespace cudal1::runtime {\n"
  "inline constexpr const char ${NAME}[] = R\"${delim}(${text})${delim}\";\n"
  "} // namespace cudal1::runtime\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
