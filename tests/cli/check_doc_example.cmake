# A worked example of the docs that says "prints exactly": the JSON block after the sentence
# naming examples/scenarios/NAME.policy.json must be what `gpupool schedule` prints for that
# scenario, byte for byte (the docs are part of the feature; an outside test found two such
# blocks stale).
#
#   cmake -DCLI=<binary> -DDOC=<file.md> -DSCENARIOS=<directory> -DNAME=<scenario> -P check_doc_example.cmake
file(READ "${DOC}" doc)
set(marker "examples/scenarios/${NAME}.policy.json` prints exactly")
string(FIND "${doc}" "${marker}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${DOC}: no \"${marker}\"")
endif()
string(SUBSTRING "${doc}" ${at} -1 rest)
set(open "```json\n")
string(FIND "${rest}" "${open}" start)
if(start EQUAL -1)
  message(FATAL_ERROR "${DOC}: no JSON block after \"${marker}\"")
endif()
string(LENGTH "${open}" open_length)
math(EXPR start "${start} + ${open_length}")
string(SUBSTRING "${rest}" ${start} -1 rest)
string(FIND "${rest}" "```" end)
string(SUBSTRING "${rest}" 0 ${end} block)

execute_process(
  COMMAND ${CLI} schedule "${SCENARIOS}/${NAME}.snapshot.json" --policy
          "${SCENARIOS}/${NAME}.policy.json"
  RESULT_VARIABLE code OUTPUT_VARIABLE printed ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "gpupool schedule ${NAME}: exit ${code}\n${err}")
endif()
if(NOT block STREQUAL printed)
  message(FATAL_ERROR "${DOC}: the block for ${NAME} differs from what gpupool prints:\n"
                      "--- docs\n${block}\n--- printed\n${printed}")
endif()
