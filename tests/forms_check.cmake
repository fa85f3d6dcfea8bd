# A family's forms declared in one place only (CTest's forms_declared): a
# list of forms is an X-macro of a header of src/kernels/ (TWS_FORMS in
# tma_ws.h: `#define TWS_FORMS(FORM)`, then one `FORM(name, ..., "technique")`
# line a form), and src/variants.h takes it with one PG_VARIANT_FORMS line.
# Fails where
#   * a list of forms is taken by no PG_VARIANT_FORMS line (its entries would
#     be in no registry), or a PG_VARIANT_FORMS line names no list;
#   * a form is named twice, in its list or by a PG_VARIANT line too;
#   * a PG_VARIANT line names an entry of a forms' file that the file does
#     not define by hand (PG_ENTRY(name)): a form belongs in its list;
#   * a form's technique is more than 60 characters;
#   * a string that names a form of the family ("tma_ws_...") in the tests,
#     the scripts, the Python package or the library's C files is no entry
#     of the registry (a form renamed or gone, still listed somewhere).
#
#   cmake -DSOURCE_DIR=<the repository> -P forms_check.cmake
cmake_minimum_required(VERSION 3.24)
if(NOT DEFINED SOURCE_DIR)
  message(FATAL_ERROR "forms_check.cmake: SOURCE_DIR is not set")
endif()

set(failures "")
macro(fail text)
  string(APPEND failures "\n  ${text}")
endmacro()

# The registry's lines.
file(STRINGS ${SOURCE_DIR}/src/variants.h lines REGEX "^PG_(VARIANT|VARIANT_FORMS)\\(")
set(entries "")
set(taken_lists "")
foreach(line IN LISTS lines)
  if(line MATCHES "^PG_VARIANT\\(([a-z0-9_]+), \"([^\"]*)\",")
    list(APPEND entries "${CMAKE_MATCH_1}")
    set(file_of_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
  elseif(line MATCHES "^PG_VARIANT_FORMS\\(([A-Z0-9_]+), \"([^\"]+)\",")
    list(APPEND taken_lists "${CMAKE_MATCH_1}")
    set(forms_file_of_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
  endif()
endforeach()

# The lists of forms: `#define LIST(FORM)` in a header of src/kernels/, its
# FORM(...) lines up to the first line without a continuation.
file(GLOB headers ${SOURCE_DIR}/src/kernels/*.h)
set(lists "")
set(all_forms "")
foreach(header IN LISTS headers)
  # Its lines as they are (file(STRINGS) would join the continued ones): a
  # backslash as <bs>, so that a line's last one does not escape the list's
  # separator.
  file(READ ${header} text)
  string(REPLACE "\\" "<bs>" text "${text}")
  string(REPLACE ";" "<semicolon>" text "${text}")
  string(REPLACE "\n" ";" header_lines "${text}")
  set(list_name "")
  foreach(line IN LISTS header_lines)
    if(list_name STREQUAL "")
      if(line MATCHES "^#define ([A-Z0-9_]+)\\(FORM\\)")
        set(list_name "${CMAKE_MATCH_1}")
        list(APPEND lists "${list_name}")
        get_filename_component(header_name ${header} NAME)
        set(header_of_${list_name} "${header_name}")
        set(forms_of_${list_name} "")
      endif()
      continue()
    endif()
    if(line MATCHES "^[ \t]*FORM\\(([a-z0-9_]+),.*\"([^\"]*)\"\\)[ \t]*(<bs>)?[ \t]*$")
      set(form "${CMAKE_MATCH_1}")
      set(technique "${CMAKE_MATCH_2}")
      string(LENGTH "${technique}" length)
      if(length GREATER 60)
        fail("${header_name}: ${form}'s technique is ${length} characters, more than 60")
      endif()
      if(form IN_LIST all_forms)
        fail("${form} is two forms (${header_name})")
      endif()
      list(APPEND all_forms "${form}")
      list(APPEND forms_of_${list_name} "${form}")
    elseif(NOT line MATCHES "^[ \t]*$" AND NOT line MATCHES "^[ \t]*/\\*.*\\*/[ \t]*$")
      fail("${header_name}: cannot read the line '${line}' of ${list_name}: a form is one line, FORM(name, ..., \"technique\") \\")
    endif()
    if(NOT line MATCHES "<bs>[ \t]*$")
      set(list_name "")
    endif()
  endforeach()
endforeach()

foreach(list_name IN LISTS lists)
  if(NOT list_name IN_LIST taken_lists)
    fail("${header_of_${list_name}} declares ${list_name}, which no PG_VARIANT_FORMS line of src/variants.h takes: its forms are in no registry")
  endif()
  if(forms_of_${list_name} STREQUAL "")
    fail("${header_of_${list_name}}: ${list_name} holds no form")
  endif()
endforeach()
foreach(list_name IN LISTS taken_lists)
  if(NOT list_name IN_LIST lists)
    fail("src/variants.h takes ${list_name}, which no header of src/kernels/ declares (#define ${list_name}(FORM))")
    continue()
  endif()
  set(forms_file "${forms_file_of_${list_name}}")
  file(READ ${SOURCE_DIR}/src/kernels/${forms_file} source)
  foreach(form IN LISTS forms_of_${list_name})
    if(form IN_LIST entries)
      fail("${form} is a form of ${list_name} (${header_of_${list_name}}) and a PG_VARIANT line of src/variants.h: declare it once, as its form")
    endif()
  endforeach()
  # The file's other entries, by hand.
  foreach(entry IN LISTS entries)
    if(file_of_${entry} STREQUAL forms_file AND NOT source MATCHES "PG_ENTRY\\(${entry}\\)")
      fail("src/variants.h names ${entry} in ${forms_file}, which does not define it by hand (PG_ENTRY(${entry})): a form of ${list_name} is its line in ${header_of_${list_name}}, not a line of src/variants.h")
    endif()
  endforeach()
endforeach()

# Names of the family's forms where lists of variants live: every string
# that starts as the forms' names do must be an entry.
set(names ${entries} ${all_forms})
set(prefixes "")
foreach(list_name IN LISTS lists)
  list(GET forms_of_${list_name} 0 first)
  if(first MATCHES "^([a-z0-9]+_[a-z0-9]+_)")
    list(APPEND prefixes "${CMAKE_MATCH_1}")
  endif()
endforeach()
file(GLOB_RECURSE sources
  ${SOURCE_DIR}/tests/*.c ${SOURCE_DIR}/tests/*.py ${SOURCE_DIR}/scripts/*.py
  ${SOURCE_DIR}/scripts/*.sh ${SOURCE_DIR}/python/*.py ${SOURCE_DIR}/src/*.c
  ${SOURCE_DIR}/bench/*.c)
set(checked 0)
foreach(source_file IN LISTS sources)
  file(READ ${source_file} text)
  foreach(prefix IN LISTS prefixes)
    string(REGEX MATCHALL "[\"']${prefix}[a-z0-9_]+[\"']" quoted "${text}")
    foreach(name IN LISTS quoted)
      string(REGEX REPLACE "^[\"'](.*)[\"']$" "\\1" name "${name}")
      math(EXPR checked "${checked} + 1")
      if(NOT name IN_LIST names)
        file(RELATIVE_PATH where ${SOURCE_DIR} ${source_file})
        fail("${where} names ${name}, which is no entry of the registry")
      endif()
    endforeach()
  endforeach()
endforeach()

if(NOT failures STREQUAL "")
  message(FATAL_ERROR "forms_declared:${failures}")
endif()
list(LENGTH lists list_count)
list(LENGTH all_forms form_count)
message(STATUS "forms_declared: ${form_count} forms in ${list_count} lists, each an entry once; ${checked} names of them elsewhere, each an entry")
