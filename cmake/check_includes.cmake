# check_includes.cmake: reads the #include lines of C and C++ files and fails when one breaks the
# include rules of docs/architecture.md "Include paths" and "Targets and which may depend on which":
#
#  - a project header is included as <path/from/the/repository/root>: never "quoted", never by a
#    name that only resolves through another include directory; <jitcache/...> names only the
#    installed public API (client/include/jitcache/);
#  - a target's files include project headers only from the folders it may use (ALLOWED).
#
# Two modes, one set of rules:
#   cmake -DSOURCE_DIR=<root> -DTARGET=<name> -DFOLDER=<folder> -DALLOWED=<a,b,...> -DFILES=<f,g,...>
#         -DSTAMP=<file> -P check_includes.cmake
#       one target's files (jitcache_module(), cmake/jitcache_module.cmake); touches STAMP when clean.
#   cmake -DSOURCE_DIR=<root> -DSTYLE_ONLY=ON -P check_includes.cmake
#       the include form in every C and C++ file of the tree (git ls-files; tests/CMakeLists.txt).
# Errors are printed as "<file>:<line>: error: ..." so that editors and CI logs link to the line.
cmake_minimum_required(VERSION 3.25)

# <folder/...> names a project header when folder is a top-level folder of the repository (no
# third-party or system header directory shares a name with one: boost, catch2, CLI, sys, ...).
set(public_api_dir client/include)
set(rules_doc [[docs/architecture.md "Include paths"]])

if(NOT SOURCE_DIR)
  message(FATAL_ERROR "check_includes.cmake: SOURCE_DIR is required")
endif()

if(STYLE_ONLY)
  find_program(git_program git)
  if(git_program AND EXISTS "${SOURCE_DIR}/.git")
    execute_process(COMMAND "${git_program}" ls-files --cached --others --exclude-standard
                            -- "*.cpp" "*.hpp" "*.h" "*.c" "*.cc"
                    WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE listed RESULT_VARIABLE status
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT status EQUAL 0)
      message(FATAL_ERROR "check_includes.cmake: git ls-files failed in ${SOURCE_DIR}")
    endif()
    string(REPLACE "\n" ";" files "${listed}")
  else()
    # A tree without git (an unpacked tarball): every file under the project's own folders.
    file(GLOB_RECURSE files RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/*.cpp" "${SOURCE_DIR}/*.hpp"
         "${SOURCE_DIR}/*.h" "${SOURCE_DIR}/*.c" "${SOURCE_DIR}/*.cc")
    list(FILTER files EXCLUDE REGEX "^build")
  endif()
  set(TARGET "the tree")
else()
  foreach(required TARGET FOLDER ALLOWED FILES STAMP)
    if(NOT DEFINED ${required})
      message(FATAL_ERROR "check_includes.cmake: ${required} is required")
    endif()
  endforeach()
  string(REPLACE "," ";" files "${FILES}")
  string(REPLACE "," ";" allowed "${ALLOWED}")
endif()

set(errors "")
set(error_count 0)

# The line number of the first line of path that is exactly text (errors only: it reads the file).
function(line_of path text out)
  file(READ "${path}" content)
  string(FIND "${content}" "${text}" position)
  set(line 1)
  if(position GREATER 0)
    string(SUBSTRING "${content}" 0 ${position} before)
    string(REGEX REPLACE "[^\n]" "" newlines "${before}")
    string(LENGTH "${newlines}" count)
    math(EXPR line "${count} + 1")
  endif()
  set(${out} ${line} PARENT_SCOPE)
endfunction()

macro(report file include_line message_text)
  line_of("${path}" "${include_line}" line)
  string(APPEND errors "${file}:${line}: error: ${message_text}\n")
  math(EXPR error_count "${error_count} + 1")
endmacro()

foreach(file IN LISTS files)
  if(IS_ABSOLUTE "${file}")
    set(path "${file}")
    cmake_path(RELATIVE_PATH file BASE_DIRECTORY "${SOURCE_DIR}")
  else()
    set(path "${SOURCE_DIR}/${file}")
  endif()
  if(NOT EXISTS "${path}")
    continue()
  endif()
  cmake_path(GET file PARENT_PATH folder)
  file(STRINGS "${path}" include_lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  foreach(include_line IN LISTS include_lines)
    if(NOT include_line MATCHES "^[ \t]*#[ \t]*include[ \t]*([<\"])([^>\"]+)[>\"]")
      continue()
    endif()
    set(quote "${CMAKE_MATCH_1}")
    set(name "${CMAKE_MATCH_2}")
    string(REGEX REPLACE "/.*" "" first "${name}")

    set(header "")
    if(quote STREQUAL "\"")
      set(hint "")
      if(EXISTS "${SOURCE_DIR}/${folder}/${name}")
        cmake_path(SET suggested NORMALIZE "${folder}/${name}")
        set(hint " (here: <${suggested}>)")
      endif()
      report("${file}" "${include_line}"
             "#include \"${name}\": include a project header by its path from the repository root, <folder/file>${hint} (${rules_doc})")
      continue()
    elseif(NOT first STREQUAL name AND IS_DIRECTORY "${SOURCE_DIR}/${first}" AND NOT first STREQUAL "jitcache")
      set(header "${name}")
    elseif(first STREQUAL "jitcache")
      if(EXISTS "${SOURCE_DIR}/${public_api_dir}/${name}")
        set(header "${public_api_dir}/${name}")
      else()
        report("${file}" "${include_line}"
               "#include <${name}>: <jitcache/...> names only the installed public API (${public_api_dir}/jitcache/); include other project headers by their path from the repository root (${rules_doc})")
        continue()
      endif()
    elseif(EXISTS "${SOURCE_DIR}/${folder}/${name}" AND NOT IS_DIRECTORY "${SOURCE_DIR}/${folder}/${name}")
      cmake_path(SET suggested NORMALIZE "${folder}/${name}")
      report("${file}" "${include_line}"
             "#include <${name}>: include a project header by its path from the repository root, <${suggested}> (${rules_doc})")
      continue()
    else()
      continue()  # a system or third-party header
    endif()

    if(STYLE_ONLY)
      continue()
    endif()
    cmake_path(GET header PARENT_PATH header_folder)
    if(NOT header_folder IN_LIST allowed)
      list(JOIN allowed ", " allowed_text)
      report("${file}" "${include_line}"
             "#include <${name}>: ${TARGET} (${FOLDER}) may include only from ${allowed_text}: its folder and those of the targets it uses. If ${TARGET} should depend on what owns ${header_folder}/, add that target to its USES (the jitcache_module() call that defines ${TARGET}); otherwise this include points against the direction of the dependencies (docs/architecture.md \"Targets and which may depend on which\")")
    endif()
  endforeach()
endforeach()

if(error_count GREATER 0)
  message(NOTICE "${errors}")
  message(FATAL_ERROR "${error_count} include(s) in ${TARGET} break the include rules of docs/architecture.md")
endif()
if(NOT STYLE_ONLY)
  file(TOUCH "${STAMP}")
endif()
