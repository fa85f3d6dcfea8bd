# The registry's one list against the kernel files (CTest's variants_declared):
# every file of src/kernels/ with kernels in it (*.cu) is named by a line of
# src/variants.h, and every file a line names is there. So a kernel file
# cannot be added without its declaration, nor a declaration without its
# file.
#
#   cmake -DSOURCE_DIR=<the repository> -P variants_check.cmake
cmake_minimum_required(VERSION 3.24)
if(NOT DEFINED SOURCE_DIR)
  message(FATAL_ERROR "variants_check.cmake: SOURCE_DIR is not set")
endif()

file(STRINGS ${SOURCE_DIR}/src/variants.h lines REGEX "^PG_(VARIANT|VARIANT_FORMS|KERNEL_FILE)\\(")
set(declared "")
set(entries 0)
set(lists 0)
foreach(line IN LISTS lines)
  if(line MATCHES "^PG_VARIANT\\(([a-z0-9_]+), \"([^\"]*)\",")
    math(EXPR entries "${entries} + 1")
    set(file "${CMAKE_MATCH_2}")
  elseif(line MATCHES "^PG_VARIANT_FORMS\\([A-Z0-9_]+, \"([^\"]+)\",")
    math(EXPR lists "${lists} + 1") # its entries: forms_declared counts them
    set(file "${CMAKE_MATCH_1}")
  elseif(line MATCHES "^PG_KERNEL_FILE\\(\"([^\"]+)\",")
    set(file "${CMAKE_MATCH_1}")
  else()
    message(FATAL_ERROR "src/variants.h: cannot read the line '${line}'")
  endif()
  if(NOT file STREQUAL "")
    list(APPEND declared "${file}")
  endif()
endforeach()
list(REMOVE_DUPLICATES declared)

file(GLOB present RELATIVE ${SOURCE_DIR}/src/kernels ${SOURCE_DIR}/src/kernels/*.cu)
set(failures "")
foreach(file IN LISTS present)
  if(NOT file IN_LIST declared)
    string(APPEND failures "\n  src/kernels/${file} is named by no line of src/variants.h")
  endif()
endforeach()
foreach(file IN LISTS declared)
  if(NOT file IN_LIST present)
    string(APPEND failures "\n  src/variants.h names src/kernels/${file}, which is not there")
  endif()
endforeach()
if(NOT failures STREQUAL "")
  message(FATAL_ERROR "variants_declared:${failures}")
endif()
list(LENGTH declared files)
message(STATUS "variants_declared: ${entries} entries and ${lists} lists of forms in ${files} kernel files, each declared once")
