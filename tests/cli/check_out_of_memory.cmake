# Out of memory while reading a snapshot: `gpupool schedule` exits 3 with "gpupool: out of
# memory" on stderr (docs/cli.md, "Exit codes"), not an abort or an invalid-JSON error. A valid
# snapshot padded with 40 MiB of whitespace is read under `ulimit -v` of about 100 MB (the
# reader needs several times the document's size), and again without the limit, where it
# schedules (so the limit, not the file, is what fails it). POSIX shells only; not registered
# under the sanitizers, which reserve far more address space than the limit.
#
#   cmake -DCLI=<binary> -DWORK=<directory> -P check_out_of_memory.cmake
file(MAKE_DIRECTORY "${WORK}")
set(snapshot "${WORK}/padded.snapshot.json")
string(REPEAT " " 41943040 pad)
file(WRITE "${snapshot}" "{\"now\": 0, \"nodes\": [], \"queues\": [], \"jobs\": []${pad}}\n")
set(pad "")

execute_process(COMMAND sh -c "ulimit -v 100000 && exec \"$0\" schedule \"$1\"" "${CLI}"
                        "${snapshot}"
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 3 OR NOT err STREQUAL "gpupool: out of memory\n")
  message(FATAL_ERROR "under ulimit -v 100000: exit ${code}, stderr \"${err}\" "
                      "(expected exit 3 and \"gpupool: out of memory\")")
endif()

execute_process(COMMAND "${CLI}" schedule "${snapshot}"
                RESULT_VARIABLE code OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "without the limit: exit ${code}\n${err}")
endif()
file(REMOVE "${snapshot}")
