# The fixed point through the command line (docs/engine.md, "Guarantees"): schedule a snapshot,
# carry the decisions out with `gpupool apply`, schedule the result at the same moment, and find
# no further Start, Preempt, Migrate or Resize. The first cycle must have decided something, so
# that the check cannot pass by doing nothing.
#
#   cmake -DCLI=<binary> -DSNAPSHOT=<file> -DPOLICY=<file> -DWORK=<directory> -P check_fixed_point.cmake
file(MAKE_DIRECTORY "${WORK}")
set(first "${WORK}/first.decisions.json")
set(applied "${WORK}/applied.snapshot.json")
set(second "${WORK}/second.decisions.json")
file(REMOVE "${first}" "${applied}" "${second}")

function(run_cli)
  execute_process(COMMAND ${CLI} ${ARGN} RESULT_VARIABLE code ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    string(REPLACE ";" " " shown "${ARGN}")
    message(FATAL_ERROR "gpupool ${shown}: exit ${code}\n${err}")
  endif()
endfunction()

run_cli(schedule "${SNAPSHOT}" --policy "${POLICY}" --out "${first}")
run_cli(apply "${SNAPSHOT}" "${first}" --out "${applied}")
run_cli(schedule "${applied}" --policy "${POLICY}" --out "${second}")

file(READ "${first}" first_text)
file(READ "${second}" second_text)
set(acted FALSE)
foreach(kind starts preemptions migrations resizes)
  string(FIND "${first_text}" "\"${kind}\": []" empty_first)
  if(empty_first EQUAL -1)
    set(acted TRUE)
  endif()
  string(FIND "${second_text}" "\"${kind}\": []" empty_second)
  if(empty_second EQUAL -1)
    message(FATAL_ERROR "${SNAPSHOT}: applied and scheduled again, the cycle still has ${kind}:\n"
                        "${second_text}")
  endif()
endforeach()
if(NOT acted)
  message(FATAL_ERROR "${SNAPSHOT}: the first cycle decided no start, preemption, move or resize")
endif()
