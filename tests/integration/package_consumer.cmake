# Installs libjitcache's "client" component from the build tree into a scratch prefix, then builds a
# program outside the tree against it twice — with find_package(jitcache) and with pkg-config — and
# runs both on the fake driver with no daemon (docs/client-guide.md §2). Run with cmake -P and:
#   BUILD_DIR SOURCE_DIR WORK_DIR FAKE_DRIVER PTX GENERATOR PRELOAD (1 when the build has
#   libjitcache-preload.so: the package must then name it, else say it has none)
cmake_minimum_required(VERSION 3.25)

function(run_checked what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${what} failed (${status}):\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
run_checked("install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --component client --prefix "${prefix}")
# The -dev package's part (headers, CMake package, pkg-config, static library): packaging/cpack.cmake.
run_checked("install dev" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --component dev --prefix "${prefix}")

file(GLOB_RECURSE config_files "${prefix}/*/jitcacheConfig.cmake")
file(GLOB_RECURSE pc_files "${prefix}/*/jitcache.pc")
if(NOT config_files OR NOT pc_files)
  message(FATAL_ERROR "the install lacks jitcacheConfig.cmake or jitcache.pc")
endif()

set(ENV{JITCACHE_CUDA_DRIVER} "${FAKE_DRIVER}")
set(ENV{JITCACHE_SOCKET} "${WORK_DIR}/no-daemon.sock")
set(ENV{JITCACHE_QUIET} "1")

# find_package
run_checked("configure the consumer" ${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/data/package_consumer"
  -B "${WORK_DIR}/consumer" -G "${GENERATOR}" "-DCMAKE_PREFIX_PATH=${prefix}")
run_checked("build the consumer" ${CMAKE_COMMAND} --build "${WORK_DIR}/consumer")
file(READ "${WORK_DIR}/consumer/preload.txt" preload_seen)
file(GLOB_RECURSE preload_files "${prefix}/*/libjitcache-preload.so")
if(PRELOAD)
  list(LENGTH preload_files preload_count)
  if(NOT preload_count EQUAL 1)
    message(FATAL_ERROR "the install lacks libjitcache-preload.so beside libjitcache: ${preload_files}")
  endif()
  set(preload_expected "${preload_files}|jitcache::preload ${preload_files}")
else()
  set(preload_expected "jitcache_PRELOAD_LIBRARY-NOTFOUND|no jitcache::preload")
endif()
if(NOT preload_seen STREQUAL preload_expected)
  message(FATAL_ERROR "find_package(jitcache) says of the preload library \"${preload_seen}\", expected \"${preload_expected}\"")
endif()

foreach(program consumer_c consumer_cxx)
  run_checked("run ${program}" "${WORK_DIR}/consumer/${program}" "${PTX}")
  if(NOT last_output MATCHES "^uncached_fallback 0")
    message(FATAL_ERROR "${program}: expected an uncached fallback that succeeds, got: ${last_output}")
  endif()
endforeach()

# pkg-config
find_program(PKG_CONFIG pkg-config REQUIRED)
get_filename_component(pc_dir "${pc_files}" DIRECTORY)
set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
run_checked("pkg-config" ${PKG_CONFIG} --cflags --libs jitcache)
separate_arguments(flags UNIX_COMMAND "${last_output}")
run_checked("cc with pkg-config flags" cc "${SOURCE_DIR}/tests/data/package_consumer/consumer.c" ${flags}
  -o "${WORK_DIR}/consumer_pc")
get_filename_component(lib_dir "${pc_dir}" DIRECTORY)
set(ENV{LD_LIBRARY_PATH} "${lib_dir}")
run_checked("run the pkg-config build" "${WORK_DIR}/consumer_pc" "${PTX}")
if(NOT last_output MATCHES "^uncached_fallback 0")
  message(FATAL_ERROR "consumer_pc: expected an uncached fallback that succeeds, got: ${last_output}")
endif()
message(STATUS "package consumer: find_package and pkg-config builds load through libjitcache")
