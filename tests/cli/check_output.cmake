# Runs the gpupool CLI once and compares its stdout with a file, byte for byte.
#
#   cmake -DCLI=<binary> -DARGS=<args separated by |> -DEXPECTED=<file> -P check_output.cmake
string(REPLACE "|" ";" ARGS "${ARGS}")
execute_process(COMMAND ${CLI} ${ARGS}
                RESULT_VARIABLE exit_code
                OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
string(REPLACE ";" " " shown "${ARGS}")
if(NOT exit_code EQUAL 0)
  message(FATAL_ERROR "gpupool ${shown}: exit ${exit_code}\nstderr:\n${err}")
endif()
file(READ "${EXPECTED}" expected)
if(NOT out STREQUAL expected)
  message(FATAL_ERROR "gpupool ${shown}: stdout differs from ${EXPECTED}:\n${out}")
endif()
