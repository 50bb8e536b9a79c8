# SPDX-License-Identifier: Apache-2.0
# Runs one mistake program on one device and checks how it ends:
#   cmake -DPROG=<exe> -DMISTAKE=<name> -DDEVICE=<cpu|cpu:strict> -DEXIT=<status> -DMATCH=<regex> -P expect.cmake
# ctest's WILL_FAIL and PASS_REGULAR_EXPRESSION check one or the other; a report printed by a
# program that then exits 0 (or a crash without the report) must fail the test, so both are checked.
set(ENV{PORTA_DEVICE} "${DEVICE}")
execute_process(COMMAND "${PROG}" "${MISTAKE}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT "${rc}" STREQUAL "${EXIT}")
  message(FATAL_ERROR "${MISTAKE} on ${DEVICE}: exit status ${rc}, expected ${EXIT}")
endif()
string(REGEX REPLACE "\n" " " text "${out}${err}")
if(NOT text MATCHES "${MATCH}")
  message(FATAL_ERROR "${MISTAKE} on ${DEVICE}: the output does not match \"${MATCH}\"")
endif()
