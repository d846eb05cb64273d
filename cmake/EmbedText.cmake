# cmake -DINPUT=file.cuh -DOUTPUT=file.inc -DNAME=cIdentifier -P EmbedText.cmake
# Writes OUTPUT holding INPUT's bytes as a C++ raw string literal,
# `inline constexpr const char NAME[]` in namespace cudal1::runtime
# (passes/CMakeLists.txt runs it for every passes/runtime/*.cuh).
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
get_filename_component(base "${INPUT}" NAME)
file(WRITE "${OUTPUT}.tmp"
  "// Generated from passes/runtime/${base} by cmake/EmbedText.cmake: edit the .cuh.\n"
  "namespace cudal1::runtime {\n"
  "inline constexpr const char ${NAME}[] = R\"${delim}(${text})${delim}\";\n"
  "} // namespace cudal1::runtime\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
