# Runs the pipegemm tool and checks its exit code (and optionally its output).
# CTest's PASS_REGULAR_EXPRESSION ignores the exit code, hence this script.
#
#   cmake -DPIPEGEMM=<tool> "-DCLI_ARGS=bench --size 64" "-DEXPECT_CODES=0 3"
#         [-DEXPECT_OUTPUT=<regex on stdout>] [-DEXPECT_ERROR=<regex on stderr>]
#         [-DERROR_LINES=<how many lines stderr has>]
#         [-DOUTPUT_FILE=<file stdout goes to, e.g. /dev/full>]
#         -P cli_exit_code.cmake
#
# EXPECT_OUTPUT applies only when the exit code is 0; EXPECT_ERROR and
# ERROR_LINES always.
cmake_minimum_required(VERSION 3.24)

foreach(required PIPEGEMM CLI_ARGS EXPECT_CODES)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "cli_exit_code.cmake: ${required} is not set")
  endif()
endforeach()

separate_arguments(args UNIX_COMMAND "${CLI_ARGS}")
separate_arguments(codes UNIX_COMMAND "${EXPECT_CODES}")
if(DEFINED OUTPUT_FILE)
  set(stdout_to OUTPUT_FILE "${OUTPUT_FILE}")
else()
  set(stdout_to OUTPUT_VARIABLE out)
endif()
execute_process(
  COMMAND "${PIPEGEMM}" ${args}
  RESULT_VARIABLE code
  ${stdout_to}
  ERROR_VARIABLE err)

message(STATUS "pipegemm ${CLI_ARGS} -> exit ${code}")
if(NOT code IN_LIST codes)
  message(FATAL_ERROR "pipegemm ${CLI_ARGS}: exit code ${code}, expected one of "
                      "${EXPECT_CODES}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED EXPECT_OUTPUT AND code EQUAL 0 AND NOT out MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "pipegemm ${CLI_ARGS}: stdout lacks '${EXPECT_OUTPUT}'\n"
                      "stdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED EXPECT_ERROR AND NOT err MATCHES "${EXPECT_ERROR}")
  message(FATAL_ERROR "pipegemm ${CLI_ARGS}: stderr does not match '${EXPECT_ERROR}'\n"
                      "stdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED ERROR_LINES)
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines lines)
  if(NOT lines EQUAL ERROR_LINES)
    message(FATAL_ERROR "pipegemm ${CLI_ARGS}: ${lines} lines on stderr, expected "
                        "${ERROR_LINES}\nstdout:\n${out}\nstderr:\n${err}")
  endif()
endif()
