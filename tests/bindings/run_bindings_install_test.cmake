# Installs the build tree into a fresh prefix, then (1) imports the installed dlio package with
# Debian's python3 without DLIO_C_LIBRARY (it must find libdlio_c.so in the install lib dir) and
# (2) builds and runs a C program against dlio::dlio_c from find_package(dlio).
# Arguments: -DBUILD_DIR= -DPYTHON= -DPYTHON_DIR= (relative to the prefix) -DWORK_DIR=
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed: ${rc}")
endif()

set(ENV{PYTHONPATH} ${WORK_DIR}/prefix/${PYTHON_DIR})
unset(ENV{DLIO_C_LIBRARY})
execute_process(
  COMMAND ${PYTHON} -c "import dlio, os; c = dlio.Config(); print(dlio.version(), c.to_dict()['dataset']['format'], os.path.realpath(dlio._capi.lib._name))"
  WORKING_DIRECTORY ${WORK_DIR}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "python: ${out}${err}")
if(NOT rc EQUAL 0 OR NOT out MATCHES "npz .*/prefix/")
  message(FATAL_ERROR "the installed package failed: ${rc} ${out} ${err}")
endif()

file(WRITE ${WORK_DIR}/consumer/CMakeLists.txt [=[
cmake_minimum_required(VERSION 3.20)
project(dlio_c_consumer LANGUAGES C CXX)
find_package(dlio REQUIRED)
add_executable(consumer_c main.c)
set_target_properties(consumer_c PROPERTIES C_STANDARD 99)
target_link_libraries(consumer_c PRIVATE dlio::dlio_c)
]=])
file(WRITE ${WORK_DIR}/consumer/main.c [=[
#include <stdio.h>
#include <string.h>
#include "dlio/dlio_c.h"
int main(void) {
  dlio_config* cfg = NULL;
  if (dlio_config_set(NULL, "x", "1") != DLIO_INVALID_ARGUMENT) return 1;
  if (dlio_config_load(NULL, NULL, &cfg) != DLIO_OK) return 2;
  int rc = dlio_config_set(cfg, "reader.batch_sise", "4");
  printf("dlio %s: %s: %s\n", dlio_version(), dlio_status_name(rc), dlio_last_error());
  dlio_config_free(cfg);
  return rc == DLIO_INVALID_ARGUMENT ? 0 : 3;
}
]=])
execute_process(COMMAND ${CMAKE_COMMAND} -S ${WORK_DIR}/consumer -B ${WORK_DIR}/consumer/build
                        -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "find_package(dlio) for dlio::dlio_c failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer/build RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the C consumer did not build: ${rc}")
endif()
execute_process(COMMAND ${WORK_DIR}/consumer/build/consumer_c RESULT_VARIABLE rc OUTPUT_VARIABLE out)
message(STATUS "C: ${out}")
if(NOT rc EQUAL 0 OR NOT out MATCHES "InvalidArgument: unknown key 'reader.batch_sise'")
  message(FATAL_ERROR "the C consumer failed: ${rc} ${out}")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
