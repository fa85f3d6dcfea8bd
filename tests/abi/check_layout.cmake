# abi_layout: the header's layout (LAYOUT, the program tests/abi/layout.c)
# against the one recorded for the library's soname (DIR/<SONAME>.txt).
# Every recorded line must still be printed; new lines are allowed (see
# layout.c). A new soname needs its own record: the output of LAYOUT.
execute_process(COMMAND ${LAYOUT} OUTPUT_VARIABLE now RESULT_VARIABLE code)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "abi_layout: ${LAYOUT} exited with ${code}")
endif()
set(record ${DIR}/${SONAME}.txt)
if(NOT EXISTS ${record})
  message(FATAL_ERROR "abi_layout: no layout recorded for ${SONAME}: a new soname needs "
                      "tests/abi/${SONAME}.txt, the output of ${LAYOUT}")
endif()
file(STRINGS ${record} recorded)
string(REPLACE "\n" ";" now_lines "${now}")
set(missing "")
foreach(line IN LISTS recorded)
  if(line STREQUAL "" OR line MATCHES "^#")
    continue()
  endif()
  list(FIND now_lines "${line}" at)
  if(at EQUAL -1)
    string(APPEND missing "\n  ${line}")
  endif()
endforeach()
if(NOT missing STREQUAL "")
  message(FATAL_ERROR "abi_layout: under the soname ${SONAME}, these facts of the header "
                      "changed (a change of size, order or value needs a new soname; "
                      "docs/api.md, \"Versions and the ABI\"):${missing}")
endif()
list(LENGTH recorded count)
message(STATUS "abi_layout: ${SONAME}: the ${count} recorded facts hold")
