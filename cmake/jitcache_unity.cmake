# jitcache_unity_build(<target> GROUPS <n> [APART "<file> <file>..."]... [ONLY <file>...]): compiles
# <target>'s .cpp files as <n> unity files (CMake's UNITY_BUILD, GROUP mode), each including about
# 1/n of them. With ONLY, only the files it names are grouped and any other file of the target
# compiles alone: for a folder where other work adds files, so that a new file never lands in a
# unity file whose names it was not checked against. Files are named by their stem (no folder, no
# .cpp).
#
# Rationale: a target whose files each instantiate the same header-only libraries (CLI11 and
# nlohmann/json in the CLI) spends most of each file's compile generating and optimizing the same
# inline functions again; a precompiled header saves only the parsing. One unity file of ten CLI
# command files took 23.6 s of CPU where the ten alone took 10-15 s each (docs/benchmarks.md
# "CI time").
#
# Files of one unity file share a translation unit, so two files that each define the same name in
# an anonymous namespace (a constant, a helper) cannot share one: each APART list names such a set,
# whose files are put in different groups (the first in group 0, the next in group 1, ...; a set
# has at most GROUPS files). A new file that collides so fails the build with "redefinition of
# ..."; add it to an APART list, or give its name a meaning of its own. The other files are dealt round-robin in the order of the
# target's sources. Each file still goes through the include check of jitcache_module() on its
# own, and each must still compile alone (a unity file can hide a missing #include):
# -DJITCACHE_UNITY_BUILD=OFF compiles every file by itself, as before.
option(JITCACHE_UNITY_BUILD "Compile the targets named in jitcache_unity_build() as a few unity files" ON)
function(jitcache_unity_build target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "GROUPS" "APART;ONLY")
  if(NOT arg_GROUPS OR arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "jitcache_unity_build(${target}): GROUPS <n> is required; unknown: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT JITCACHE_UNITY_BUILD)
    return()
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
  get_target_property(sources ${target} SOURCES)
  set(placed "")
  foreach(set IN LISTS arg_APART)
    string(REPLACE " " ";" names "${set}")
    list(LENGTH names set_size)
    if(set_size GREATER arg_GROUPS)
      message(FATAL_ERROR "jitcache_unity_build(${target}): APART \"${set}\" has more files than GROUPS")
    endif()
    set(group 0)
    foreach(name IN LISTS names)
      set(found "")
      foreach(source IN LISTS sources)
        get_filename_component(stem "${source}" NAME_WE)
        if(stem STREQUAL name)
          set(found "${source}")
        endif()
      endforeach()
      if(NOT found)
        # A file renamed or removed since: nothing left to keep apart.
        message(WARNING "jitcache_unity_build(${target}): APART names ${name}, which is not one of its sources")
        continue()
      endif()
      set_source_files_properties("${found}" PROPERTIES UNITY_GROUP "${target}_${group}")
      list(APPEND placed "${found}")
      math(EXPR group "${group} + 1")
    endforeach()
  endforeach()
  set(index 0)
  foreach(source IN LISTS sources)
    get_filename_component(stem "${source}" NAME_WE)
    if(NOT source MATCHES "\\.cpp$" OR source IN_LIST placed OR (arg_ONLY AND NOT stem IN_LIST arg_ONLY))
      continue()
    endif()
    math(EXPR group "${index} % ${arg_GROUPS}")
    set_source_files_properties("${source}" PROPERTIES UNITY_GROUP "${target}_${group}")
    math(EXPR index "${index} + 1")
  endforeach()
endfunction()
