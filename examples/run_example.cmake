# Runs one example program (the example_* tests of examples/CMakeLists.txt).
#
#   cmake -DPROGRAM=<binary> -DARGS=<args separated by |> -DEXPECT=<regexes separated by |>
#         -P run_example.cmake
#
# The program must exit 0 and print, for each regex, a line that matches it.
string(REPLACE "|" ";" ARGS "${ARGS}")
execute_process(COMMAND ${PROGRAM} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
message(STATUS "${PROGRAM} ${ARGS}:\n${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}")
endif()
string(REPLACE ";" "\\;" escaped "${out}")
string(REPLACE "\n" ";" lines "${escaped}")
string(REPLACE "|" ";" EXPECT "${EXPECT}")
foreach(regex IN LISTS EXPECT)
  set(found FALSE)
  foreach(line IN LISTS lines)
    if(line MATCHES "${regex}")
      set(found TRUE)
      break()
    endif()
  endforeach()
  if(NOT found)
    message(FATAL_ERROR "${PROGRAM}: no line matches \"${regex}\"")
  endif()
endforeach()
