# Runs `gpupool metrics SNAPSHOT`, then checks its output: byte for byte against GOLDEN when
# given (GPUPOOL_UPDATE_GOLDEN=1 in the environment rewrites it), and with `promtool check
# metrics` when PROMTOOL is given.
#
#   cmake -DCLI=<gpupool> -DSNAPSHOT=<file> [-DGOLDEN=<file>] [-DPROMTOOL=<promtool>]
#         -P check_metrics.cmake
execute_process(COMMAND ${CLI} metrics ${SNAPSHOT}
                RESULT_VARIABLE exit_code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT exit_code STREQUAL "0")
  message(FATAL_ERROR "gpupool metrics ${SNAPSHOT}: exit ${exit_code}\n${err}")
endif()
if(DEFINED GOLDEN)
  if("$ENV{GPUPOOL_UPDATE_GOLDEN}" STREQUAL "1")
    file(WRITE ${GOLDEN} "${out}")
  endif()
  file(READ ${GOLDEN} expected)
  if(NOT out STREQUAL expected)
    message(FATAL_ERROR "gpupool metrics ${SNAPSHOT} differs from ${GOLDEN}:\n${out}")
  endif()
endif()
if(DEFINED PROMTOOL)
  string(RANDOM LENGTH 12 tag)
  set(text_file ${CMAKE_CURRENT_BINARY_DIR}/metrics-${tag}.txt)
  file(WRITE ${text_file} "${out}")
  execute_process(COMMAND ${PROMTOOL} check metrics INPUT_FILE ${text_file}
                  RESULT_VARIABLE check_code OUTPUT_VARIABLE check_out ERROR_VARIABLE check_err)
  file(REMOVE ${text_file})
  if(NOT check_code STREQUAL "0" OR NOT "${check_out}${check_err}" STREQUAL "")
    message(FATAL_ERROR "promtool check metrics refused gpupool metrics ${SNAPSHOT} "
                        "(exit ${check_code}):\n${check_out}${check_err}")
  endif()
endif()
