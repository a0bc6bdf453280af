# Runs one libFuzzer target for a bounded time (ctest -L fuzz; see CMakeLists.txt here).
#   cmake -D FUZZER=<exe> -D SEED_DIR=<dir> -D WORK_DIR=<dir> -D SECONDS=<n> -P run_fuzzer.cmake
#
# The fuzzer writes the inputs it finds interesting into its first corpus directory, so it gets a
# fresh copy of the seeds: the committed corpus stays unchanged and every run starts from the same place.
foreach(variable IN ITEMS FUZZER SEED_DIR WORK_DIR SECONDS)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "run_fuzzer.cmake: -D ${variable}=... is missing")
  endif()
endforeach()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/corpus" "${WORK_DIR}/artifacts")
file(COPY "${SEED_DIR}/" DESTINATION "${WORK_DIR}/corpus")

# Rationale: -timeout=10 makes an input that takes seconds to decode a finding (a request that stalls
# a daemon worker), where libFuzzer's default would wait 20 minutes.
execute_process(
  COMMAND "${FUZZER}" -max_total_time=${SECONDS} -print_final_stats=1 -timeout=10
          "-artifact_prefix=${WORK_DIR}/artifacts/" "${WORK_DIR}/corpus"
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${FUZZER} failed (${result}); the input that caused it is in ${WORK_DIR}/artifacts/")
endif()
