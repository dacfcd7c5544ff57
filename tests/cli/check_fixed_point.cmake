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

# Settled, not cut at the cap of 16 passes (kMaxSettlingPasses; docs/decisions-format.md,
# counters).
string(JSON passes ERROR_VARIABLE no_passes GET "${first_text}" counters passes)
if(NOT no_passes AND passes GREATER_EQUAL 16)
  message(FATAL_ERROR "${SNAPSHOT}: the first cycle was cut at the cap of ${passes} passes")
endif()

# Every job pending in the snapshot gets exactly one Start or PendingDecision.
file(READ "${SNAPSHOT}" snapshot_text)
set(decided "")
foreach(list starts pending)
  string(JSON count LENGTH "${first_text}" ${list})
  if(count GREATER 0)
    math(EXPR last "${count} - 1")
    foreach(i RANGE ${last})
      string(JSON job GET "${first_text}" ${list} ${i} job)
      list(APPEND decided "${job}")
    endforeach()
  endif()
endforeach()
string(JSON jobs LENGTH "${snapshot_text}" jobs)
math(EXPR last "${jobs} - 1")
foreach(i RANGE ${last})
  string(JSON id GET "${snapshot_text}" jobs ${i} id)
  string(JSON state ERROR_VARIABLE no_state GET "${snapshot_text}" jobs ${i} state)
  if(no_state OR NOT state STREQUAL "running")
    list(FIND decided "${id}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${SNAPSHOT}: pending job ${id} has neither a start nor a pending "
                          "decision:\n${first_text}")
    endif()
    list(REMOVE_AT decided ${at})
    list(FIND decided "${id}" again)
    if(NOT again EQUAL -1)
      message(FATAL_ERROR "${SNAPSHOT}: pending job ${id} has two decisions:\n${first_text}")
    endif()
  endif()
endforeach()
