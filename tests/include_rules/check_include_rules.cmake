# A wrong include fails the build (cmake/jitcache_module.cmake, cmake/check_includes.cmake): builds
# the project in project/ from a copy, which must succeed, then plants one include that breaks a
# rule and builds again, which must fail before compiling the file, with the message of CASE.
#
#   cmake -DSOURCE_DIR=<repository root> -DWORK_DIR=<scratch dir> -DCASE=wrong_way|quoted
#         -DGENERATOR=<CMake generator> -P check_include_rules.cmake
#
# wrong_way: low/low.cpp includes <high/high.hpp>, against "high uses low".
# quoted:    high/high.cpp includes "high.hpp", which resolves beside it but not from the root.
cmake_minimum_required(VERSION 3.25)

set(project_copy "${WORK_DIR}/project")
set(build_dir "${WORK_DIR}/build")
file(REMOVE_RECURSE "${WORK_DIR}")
file(COPY "${SOURCE_DIR}/tests/include_rules/project/" DESTINATION "${project_copy}")

function(run_build out_result out_output)
  execute_process(COMMAND "${CMAKE_COMMAND}" --build "${build_dir}"
                  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  set(${out_result} "${result}" PARENT_SCOPE)
  set(${out_output} "${output}" PARENT_SCOPE)
endfunction()

execute_process(COMMAND "${CMAKE_COMMAND}" -S "${project_copy}" -B "${build_dir}" -G "${GENERATOR}"
                        "-DJITCACHE_SOURCE_DIR=${SOURCE_DIR}"
                RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "configuring the project failed:\n${output}")
endif()
run_build(result output)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "the project, whose includes follow its USES, did not build:\n${output}")
endif()

if(CASE STREQUAL "wrong_way")
  set(planted_file low/low.cpp)
  set(planted_line "#include <high/high.hpp>")
  set(expected "low/low.cpp:4: error: #include <high/high.hpp>: low \\(low\\) may include only from low: its folder and those of the targets it uses")
elseif(CASE STREQUAL "quoted")
  set(planted_file high/high.cpp)
  set(planted_line "#include \"high.hpp\"")
  set(expected "high/high.cpp:4: error: #include \"high.hpp\": include a project header by its path from the repository root, <folder/file> \\(here: <high/high.hpp>\\)")
else()
  message(FATAL_ERROR "CASE must be wrong_way or quoted, not \"${CASE}\"")
endif()
file(APPEND "${project_copy}/${planted_file}" "${planted_line}\n")
run_build(result output)
if(result EQUAL 0)
  message(FATAL_ERROR "the build succeeded with ${planted_line} in ${planted_file}:\n${output}")
endif()
if(NOT output MATCHES "${expected}")
  message(FATAL_ERROR "the build failed, but without the expected message\n  ${expected}\n${output}")
endif()
get_filename_component(planted_name "${planted_file}" NAME)
if(output MATCHES "Building CXX object [^\n]*${planted_name}")
  message(FATAL_ERROR "${planted_file} was compiled before the include check stopped the build:\n${output}")
endif()
message(STATUS "the build failed as it should:\n${output}")
