# jitcache_module(): one folder of the tree as one target that names what it may use, so that an
# include against the direction of its dependencies fails the build (docs/architecture.md
# "Targets and which may depend on which").
#
#   jitcache_module(<name> STATIC|SHARED|EXECUTABLE|INTERFACE
#     FOLDER <folder, from the repository root>
#     [SOURCES <file>...]   # default: every .cpp of FOLDER; relative names are in FOLDER
#     [USES <target>...]    # linked PUBLIC (PRIVATE for an executable or shared library); see below
#     [PRIVATE <target>...] # linked PRIVATE: libraries its sources use that its headers do not show
#   )
#
# USES is the one list of what the target depends on: it is what the target links, and its
# jitcache modules, with everything those use in turn, are the folders FOLDER's files may include
# from besides FOLDER itself. Before anything of the target compiles, check_includes.cmake reads the
# #include lines of its sources and of FOLDER's headers and fails the build when one names a
# project header of another folder, or names a project header in any form but
# <path/from/the/repository/root> (the installed public API <jitcache/jitcache.h> aside).
#
# Rationale: every project header is reachable by its path from the repository root (one include
# directory for all), so the compiler alone would accept an include of any folder; the check is
# what makes the direction a rule. It runs as <name>_includes, a target that <name> depends on, so
# nothing of <name> compiles before it passes, and it waits for nothing else: every target's check
# runs at the start of a build. It runs again only when a file it reads, or the list of allowed
# folders, changes.
set(JITCACHE_CHECK_INCLUDES "${CMAKE_CURRENT_LIST_DIR}/check_includes.cmake")

# Every jitcache_module() call is also written, at the end of the configure step, to
# <build>/jitcache_modules.tsv: one line per target, tab-separated: name, kind, FOLDER, USES,
# PRIVATE (each list space-separated, $<BUILD_INTERFACE:...> taken off) and the CMakeLists.txt that
# declares it; then a line "not built<TAB>name<TAB>why" per jitcache_module_not_built() call.
# tests/unit/test_build_architecture_targets.cpp compares it with docs/architecture.md's targets
# table. Rationale: read from the build's own declarations, not from the CMake text, so that a
# target declared under a condition or through a variable is seen as the build sees it.
function(_jitcache_write_module_declarations)
  get_property(lines GLOBAL PROPERTY JITCACHE_MODULE_DECLARATIONS)
  get_property(not_built GLOBAL PROPERTY JITCACHE_MODULES_NOT_BUILT)
  list(APPEND lines ${not_built})
  list(JOIN lines "\n" text)
  file(WRITE "${CMAKE_BINARY_DIR}/jitcache_modules.tsv" "${text}\n")
endfunction()
cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _jitcache_write_module_declarations)

# jitcache_module_not_built(<name> <why>): a target this configuration leaves out (jitcache-compile
# without nvJitLink), so that the targets table may keep its row.
function(jitcache_module_not_built name why)
  set_property(GLOBAL APPEND PROPERTY JITCACHE_MODULES_NOT_BUILT "not built\t${name}\t${why}")
endfunction()

function(jitcache_module name kind)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "FOLDER" "SOURCES;USES;PRIVATE")
  if(arg_UNPARSED_ARGUMENTS OR NOT arg_FOLDER)
    message(FATAL_ERROR "jitcache_module(${name}): FOLDER is required; unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  set(folder_dir "${PROJECT_SOURCE_DIR}/${arg_FOLDER}")
  if(arg_SOURCES)
    set(sources "")
    foreach(source IN LISTS arg_SOURCES)
      cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY "${folder_dir}" OUTPUT_VARIABLE source)
      list(APPEND sources "${source}")
    endforeach()
  else()
    file(GLOB sources CONFIGURE_DEPENDS "${folder_dir}/*.cpp")
  endif()
  file(GLOB headers CONFIGURE_DEPENDS "${folder_dir}/*.hpp" "${folder_dir}/*.h")

  if(kind STREQUAL "INTERFACE")
    add_library(${name} INTERFACE)
    set(scope INTERFACE)
  elseif(kind STREQUAL "EXECUTABLE")
    add_executable(${name} ${sources})
    set(scope PRIVATE)
  elseif(kind STREQUAL "SHARED")
    # What a shared library uses stays inside it: a program linking it sees only its own interface.
    add_library(${name} SHARED ${sources})
    set(scope PRIVATE)
  elseif(kind MATCHES "^(STATIC|OBJECT)$")
    add_library(${name} ${kind} ${sources})
    set(scope PUBLIC)
  else()
    message(FATAL_ERROR "jitcache_module(${name}): kind must be STATIC, SHARED, OBJECT, EXECUTABLE or INTERFACE, not ${kind}")
  endif()
  # Includes are rooted at the project: #include <daemon/store/store.hpp>.
  target_include_directories(${name} ${scope} "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>")
  target_link_libraries(${name} ${scope} jitcache_build_settings ${arg_USES})
  if(arg_PRIVATE)
    target_link_libraries(${name} PRIVATE ${arg_PRIVATE})
  endif()

  # The folders FOLDER's files may include from: its own, and those of every jitcache module it
  # uses, with theirs (a target that is no jitcache module, such as SQLite::SQLite3, adds none).
  set(allowed "${arg_FOLDER}")
  foreach(used IN LISTS arg_USES)
    string(REGEX REPLACE "^\\$<BUILD_INTERFACE:(.*)>$" "\\1" used "${used}")
    if(TARGET ${used})
      get_target_property(used_folders ${used} JITCACHE_MODULE_FOLDERS)
      if(used_folders)
        list(APPEND allowed ${used_folders})
      endif()
    endif()
  endforeach()
  list(REMOVE_DUPLICATES allowed)

  set(declared_uses "")
  foreach(used IN LISTS arg_USES)
    string(REGEX REPLACE "^\\$<BUILD_INTERFACE:(.*)>$" "\\1" used "${used}")
    list(APPEND declared_uses "${used}")
  endforeach()
  list(JOIN declared_uses " " declared_uses)
  list(JOIN arg_PRIVATE " " declared_private)
  cmake_path(RELATIVE_PATH CMAKE_CURRENT_LIST_FILE BASE_DIRECTORY "${PROJECT_SOURCE_DIR}" OUTPUT_VARIABLE declared_in)
  set_property(GLOBAL APPEND PROPERTY JITCACHE_MODULE_DECLARATIONS
    "${name}\t${kind}\t${arg_FOLDER}\t${declared_uses}\t${declared_private}\t${declared_in}")
  set_target_properties(${name} PROPERTIES JITCACHE_MODULE_FOLDERS "${allowed}" JITCACHE_MODULE_FOLDER "${arg_FOLDER}")
  if(kind STREQUAL "INTERFACE")
    return()  # nothing of it is built; the whole-tree check (tests/CMakeLists.txt) reads its headers
  endif()

  set(checked "")
  foreach(file IN LISTS sources headers)
    cmake_path(RELATIVE_PATH file BASE_DIRECTORY "${PROJECT_SOURCE_DIR}" OUTPUT_VARIABLE relative)
    list(APPEND checked "${relative}")
  endforeach()
  set(stamp "${CMAKE_CURRENT_BINARY_DIR}/${name}.includes_checked")
  list(JOIN allowed "," allowed_text)
  list(JOIN checked "," checked_text)
  add_custom_command(OUTPUT "${stamp}"
    COMMAND "${CMAKE_COMMAND}" "-DSOURCE_DIR=${PROJECT_SOURCE_DIR}" "-DTARGET=${name}"
            "-DFOLDER=${arg_FOLDER}" "-DALLOWED=${allowed_text}" "-DFILES=${checked_text}"
            "-DSTAMP=${stamp}" -P "${JITCACHE_CHECK_INCLUDES}"
    DEPENDS ${sources} ${headers} "${JITCACHE_CHECK_INCLUDES}"
    COMMENT "Checking the includes of ${name} (${arg_FOLDER})"
    VERBATIM)
  add_custom_target(${name}_includes DEPENDS "${stamp}")
  add_dependencies(${name} ${name}_includes)
endfunction()
