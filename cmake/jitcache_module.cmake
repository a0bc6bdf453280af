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
