# cmake -P script behind the install_consumer test: installs the build tree into a scratch
# prefix, then uses it the ways a host does:
#   1. a C++ project with find_package(gpupool) (consumer/);
#   2. a C project with find_package(gpupool) and gpupool::c (c_consumer/), and the same C file
#      compiled with a bare compiler command and `pkg-config --cflags --libs gpupool`;
#   3. the Python module, imported from the prefix (when the build has it: -DPYTHON=...).
# Every C and Python host's output is compared byte for byte with the installed `gpupool`
# command's, for every example snapshot and scenario, with and without policies; and each error
# message with the CLI's (the file name replaced by "snapshot").
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# 1. C++ with find_package.
run(${CMAKE_COMMAND} -S ${CONSUMER_SOURCE} -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release
    "-DCMAKE_CXX_FLAGS=${CONSUMER_CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_LINKER_FLAGS}")
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer ${EXAMPLE})
if(NOT last_output MATCHES "decisions:")
  message(FATAL_ERROR "consumer printed no decisions:\n${last_output}")
endif()
message(STATUS "consumer output:\n${last_output}")

# 2. C with find_package (a project that enables C only), then with pkg-config alone. The
# sanitizer flags of the build, if any, go to the C compiler too.
run(${CMAKE_COMMAND} -S ${C_CONSUMER_SOURCE} -B ${WORK_DIR}/c_build -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release
    "-DCMAKE_C_FLAGS=${CONSUMER_CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_LINKER_FLAGS}")
run(${CMAKE_COMMAND} --build ${WORK_DIR}/c_build)
file(STRINGS ${WORK_DIR}/c_build/CMakeCache.txt c_compiler REGEX "^CMAKE_C_COMPILER:")
string(REGEX REPLACE "^[^=]*=" "" c_compiler "${c_compiler}")
file(GLOB_RECURSE pc_file ${prefix}/gpupool.pc)
if(NOT pc_file)
  message(FATAL_ERROR "gpupool.pc is not installed under ${prefix}")
endif()
get_filename_component(pc_dir "${pc_file}" DIRECTORY)
set(pkg_config ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${pc_dir} pkg-config)
run(${pkg_config} --cflags --libs gpupool)
string(STRIP "${last_output}" pc_flags)
message(STATUS "pkg-config --cflags --libs gpupool: ${pc_flags}")
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
separate_arguments(sanitizer_flags UNIX_COMMAND "${CONSUMER_CXX_FLAGS}")
run(${c_compiler} -std=c99 -pedantic -Wall -Wextra -Werror ${sanitizer_flags}
    ${C_CONSUMER_SOURCE}/main.c ${pc_flags} -o ${WORK_DIR}/c_consumer_pc)
run(${pkg_config} --modversion gpupool)
string(STRIP "${last_output}" version)

set(cli ${prefix}/bin/gpupool)
# Each host is a name and a command (host_<name>).
set(hosts c c_pkg_config)
set(host_c ${WORK_DIR}/c_build/c_consumer)
set(host_c_pkg_config ${WORK_DIR}/c_consumer_pc)
if(DEFINED PYTHON AND NOT PYTHON STREQUAL "")
  set(python_path ${prefix}/${PYTHON_INSTALL_DIR})
  if(NOT EXISTS ${python_path})
    message(FATAL_ERROR "the Python module is not installed in ${python_path}")
  endif()
  list(APPEND hosts python)
  set(host_python ${CMAKE_COMMAND} -E env PYTHONPATH=${python_path} ${PYTHON}
      ${CMAKE_CURRENT_LIST_DIR}/python_consumer.py)
endif()

# The error paths of the C API (c_consumer checks them itself).
foreach(host ${host_c} ${host_c_pkg_config})
  run(${host} errors ${EXAMPLE} ${version})
  message(STATUS "${host} errors:\n${last_output}")
endforeach()

# Runs `gpupool ARGS...` and every host with the same arguments; their stdout must be equal
# byte for byte (for validate, after the CLI's "FILE: "), and so must their exit codes and
# stderr (the CLI's "gpupool: FILE: " being the hosts' "snapshot: " or "policy: ").
set(compared 0)
function(compare)
  # The hosts take the policy file as the last positional argument; the CLI as --policy.
  set(cli_args ${ARGN})
  list(LENGTH cli_args argc)
  list(GET cli_args 0 command)
  if((command STREQUAL "schedule" AND argc EQUAL 3) OR (command STREQUAL "explain" AND argc EQUAL 4))
    math(EXPR last "${argc} - 1")
    list(INSERT cli_args ${last} --policy)
  endif()
  execute_process(COMMAND ${cli} ${cli_args} RESULT_VARIABLE cli_rc OUTPUT_VARIABLE cli_out
                  ERROR_VARIABLE cli_err)
  # `gpupool validate FILE` prints "FILE: ok: ..."; the hosts print what follows "FILE: ".
  list(GET ARGN 1 snapshot_path)
  if(command STREQUAL "validate" AND cli_rc EQUAL 0)
    string(LENGTH "${snapshot_path}: " prefix_length)
    string(SUBSTRING "${cli_out}" 0 ${prefix_length} prefix)
    if(NOT prefix STREQUAL "${snapshot_path}: ")
      message(FATAL_ERROR "gpupool ${ARGN}: unexpected output:\n${cli_out}")
    endif()
    string(SUBSTRING "${cli_out}" ${prefix_length} -1 cli_out)
  endif()
  # The file names in the CLI's message: the snapshot's, then the policy's (schedule/explain).
  set(cli_err_named "${cli_err}")
  foreach(arg ${ARGN})
    if(arg MATCHES "\\.json$")
      string(REPLACE "gpupool: ${arg}: " "" cli_err_named "${cli_err_named}")
    endif()
  endforeach()
  foreach(host ${hosts})
    execute_process(COMMAND ${host_${host}} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                    ERROR_VARIABLE err)
    if(NOT rc STREQUAL cli_rc OR NOT out STREQUAL cli_out)
      file(WRITE ${WORK_DIR}/expected.txt "${cli_out}")
      file(WRITE ${WORK_DIR}/actual.txt "${out}")
      message(FATAL_ERROR "${host} ${ARGN}: exit ${rc} and stdout differ from `gpupool ${ARGN}` "
                          "(exit ${cli_rc}); see ${WORK_DIR}/expected.txt and actual.txt\n${err}")
    endif()
    if(NOT cli_rc EQUAL 0)
      string(REGEX REPLACE "^(snapshot|policy|decisions): " "" err_named "${err}")
      if(NOT err_named STREQUAL cli_err_named)
        message(FATAL_ERROR "${host} ${ARGN}: the message differs from the CLI's:\n"
                            "host: ${err}cli:  ${cli_err}")
      endif()
    endif()
  endforeach()
  math(EXPR n "${compared} + 1")
  set(compared ${n} PARENT_SCOPE)
endfunction()

file(GLOB snapshots ${EXAMPLES_DIR}/snapshots/*.json)
file(GLOB policies ${EXAMPLES_DIR}/policies/*.json)
foreach(snapshot ${snapshots})
  compare(validate ${snapshot})
  compare(schedule ${snapshot})
  foreach(policy ${policies})
    compare(schedule ${snapshot} ${policy})
  endforeach()
  # Every job of the snapshot explained.
  file(READ ${snapshot} text)
  string(JSON job_count ERROR_VARIABLE no_jobs LENGTH "${text}" jobs)
  if(NOT no_jobs AND job_count GREATER 0)
    math(EXPR last "${job_count} - 1")
    foreach(i RANGE ${last})
      string(JSON job_id GET "${text}" jobs ${i} id)
      compare(explain ${snapshot} ${job_id})
    endforeach()
  endif()
endforeach()
# The preemption and reservation scenarios, each with its policy.
file(GLOB scenario_policies ${EXAMPLES_DIR}/scenarios/*.policy.json)
foreach(policy ${scenario_policies})
  string(REPLACE ".policy.json" ".snapshot.json" snapshot "${policy}")
  compare(schedule ${snapshot} ${policy})
endforeach()
# Invalid inputs: the same exit code (1) and message.
file(GLOB bad_snapshots ${CLI_DATA_DIR}/*.json)
foreach(snapshot ${bad_snapshots})
  if(NOT snapshot MATCHES "policy")
    compare(schedule ${snapshot})
    compare(validate ${snapshot})
  endif()
endforeach()
compare(schedule ${EXAMPLE} ${CLI_DATA_DIR}/policy_with_scorer.json)
# Decisions carried out: the scenarios that ship theirs, and decisions that do not fit.
foreach(scenario health_cordon maintenance_drain)
  compare(apply ${EXAMPLES_DIR}/scenarios/${scenario}.snapshot.json
          ${EXAMPLES_DIR}/scenarios/${scenario}.decisions.json)
endforeach()
compare(apply ${EXAMPLES_DIR}/scenarios/backfill.snapshot.json
        ${EXAMPLES_DIR}/scenarios/health_cordon.decisions.json)
compare(apply ${EXAMPLES_DIR}/scenarios/backfill.snapshot.json
        ${EXAMPLES_DIR}/scenarios/backfill.policy.json)
list(LENGTH hosts host_count)
message(STATUS "${compared} commands compared byte for byte with the CLI, on ${host_count} hosts")
