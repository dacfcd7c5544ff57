# Runs the gpupool CLI once and checks what it did.
#
#   cmake -DCLI=<binary> -DARGS=<args separated by |> -DEXPECT_EXIT=<code>
#         [-DEXPECT_STDOUT=<substring>] [-DEXPECT_STDERR=<substring>] [-DOUT_FILE=<path>]
#         [-DEXPECT_STDOUT_REGEX=<regex>] [-DEXPECT_STDOUT_NOT_REGEX=<regex>]
#         -P run_cli.cmake
#
# The regexes are CMake regexes over the whole of stdout ("." and "[^]]" match newlines too).
#
# A nonzero expected exit code also requires stdout to be empty (errors go to stderr only).
# OUT_FILE, when given, is removed first and must exist afterwards.
if(DEFINED OUT_FILE)
  file(REMOVE "${OUT_FILE}")
endif()
string(REPLACE "|" ";" ARGS "${ARGS}")
execute_process(COMMAND ${CLI} ${ARGS}
                RESULT_VARIABLE exit_code
                OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
string(REPLACE ";" " " shown "${ARGS}")
if(NOT exit_code STREQUAL EXPECT_EXIT)
  message(FATAL_ERROR "gpupool ${shown}: exit ${exit_code}, expected ${EXPECT_EXIT}\n"
                      "stdout:\n${out}\nstderr:\n${err}")
endif()
if(NOT EXPECT_EXIT STREQUAL "0" AND NOT out STREQUAL "")
  message(FATAL_ERROR "gpupool ${shown}: failed but wrote to stdout:\n${out}")
endif()
if(DEFINED EXPECT_STDOUT)
  string(FIND "${out}" "${EXPECT_STDOUT}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "gpupool ${shown}: stdout lacks \"${EXPECT_STDOUT}\":\n${out}")
  endif()
endif()
if(DEFINED EXPECT_STDOUT_REGEX)
  string(REGEX MATCH "${EXPECT_STDOUT_REGEX}" found "${out}")
  if(found STREQUAL "")
    message(FATAL_ERROR "gpupool ${shown}: stdout does not match \"${EXPECT_STDOUT_REGEX}\":\n${out}")
  endif()
endif()
if(DEFINED EXPECT_STDOUT_NOT_REGEX)
  string(REGEX MATCH "${EXPECT_STDOUT_NOT_REGEX}" found "${out}")
  if(NOT found STREQUAL "")
    message(FATAL_ERROR "gpupool ${shown}: stdout matches \"${EXPECT_STDOUT_NOT_REGEX}\" (\"${found}\"):\n${out}")
  endif()
endif()
if(DEFINED EXPECT_STDERR)
  string(FIND "${err}" "${EXPECT_STDERR}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "gpupool ${shown}: stderr lacks \"${EXPECT_STDERR}\":\n${err}")
  endif()
endif()
if(NOT EXPECT_EXIT STREQUAL "0" AND NOT EXPECT_EXIT STREQUAL "2")
  # An input error is exactly one line on stderr.
  string(REGEX MATCHALL "\n" lines "${err}")
  list(LENGTH lines line_count)
  if(NOT line_count EQUAL 1)
    message(FATAL_ERROR "gpupool ${shown}: expected one line on stderr, got:\n${err}")
  endif()
endif()
if(DEFINED OUT_FILE AND NOT EXISTS "${OUT_FILE}")
  message(FATAL_ERROR "gpupool ${shown}: did not write ${OUT_FILE}")
endif()
