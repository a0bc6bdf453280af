# A man page made from a program's own --help (cmake -P): the help text is the reference, so the man
# page cannot drift from it. With SUBCOMMANDS, each subcommand that `PROGRAM --help` lists under
# "SUBCOMMANDS:" gets a section with its own --help.
# Usage: cmake -DPROGRAM=path -DNAME=jitcache -DSECTION=1 -DSUMMARY=text -DVERSION=x.y.z
#              [-DSUBCOMMANDS=ON] -DOUT=file -P make_man_page.cmake
function(help_of output)
  execute_process(COMMAND ${PROGRAM} ${ARGN} --help OUTPUT_VARIABLE text ERROR_VARIABLE errors RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} ${ARGN} --help failed (${status}): ${errors}")
  endif()
  set(${output} "${text}" PARENT_SCOPE)
endfunction()

# roff: a backslash is an escape, and a line starting with . or ' a request.
function(as_roff output text)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${output} "${text}" PARENT_SCOPE)
endfunction()

string(TOUPPER "${NAME}" title)
help_of(help)
as_roff(body "${help}")
set(page ".TH ${title} ${SECTION} \"\" \"${NAME} ${VERSION}\"\n.SH NAME\n${NAME} \\- ${SUMMARY}\n")
string(APPEND page ".SH DESCRIPTION\nThe text of \\fB${NAME} --help\\fR.\n.PP\n.nf\n${body}.fi\n")
if(SUBCOMMANDS)
  string(APPEND page ".SH COMMANDS\n")
  string(REGEX REPLACE ".*\nSUBCOMMANDS:\n" "" listed "${help}")
  string(REGEX MATCHALL "(^|\n)  [a-z][a-z-]*" names "${listed}")
  foreach(entry IN LISTS names)
    string(STRIP "${entry}" command)
    help_of(command_help ${command})
    as_roff(command_body "${command_help}")
    string(APPEND page ".SS ${NAME} ${command}\n.nf\n${command_body}.fi\n")
  endforeach()
endif()
string(APPEND page ".SH SEE ALSO\n")
if(NAME STREQUAL "jitcache")
  string(APPEND page "\\fBjitcached\\fR(8)")
else()
  string(APPEND page "\\fBjitcache\\fR(1)")
endif()
string(APPEND page "; the documentation in /usr/share/doc/jitcache and at https://github.com/jitcache/jitcache/tree/main/docs\n")
file(WRITE "${OUT}" "${page}")
