# The C API from C11 and the Python package (ctypes) over it, with Debian's python3.
if(TARGET dlio_c)
  add_executable(c_api_test bindings/c_api_test.c)
  set_target_properties(c_api_test PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
  dlio_target_defaults(c_api_test)
  target_compile_options(c_api_test PRIVATE -Werror)  # the header must be clean, pedantic C
  target_link_libraries(c_api_test PRIVATE dlio_c)
  add_test(NAME bindings:c_api COMMAND c_api_test)
  set_tests_properties(bindings:c_api PROPERTIES TIMEOUT 300)

  # A sanitized libdlio_c.so cannot be dlopen'ed by an uninstrumented python.
  if(NOT DLIO_SANITIZE)
    set(dlio_python_env "DLIO_C_LIBRARY=$<TARGET_FILE:dlio_c>"
                        "PYTHONPATH=${PROJECT_SOURCE_DIR}/bindings/python")
    add_test(NAME bindings:python
             COMMAND ${DLIO_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/bindings/python_test.py -v)
    set_tests_properties(bindings:python PROPERTIES TIMEOUT 300 ENVIRONMENT "${dlio_python_env}")
    if(DLIO_BUILD_EXAMPLES)
      add_test(NAME examples:python_training_loop
               COMMAND ${DLIO_SYSTEM_PYTHON} ${PROJECT_SOURCE_DIR}/examples/python_training_loop.py)
      set_tests_properties(examples:python_training_loop PROPERTIES TIMEOUT 120
                           ENVIRONMENT "${dlio_python_env}"
                           PASS_REGULAR_EXPRESSION "epoch 2: 16 batches")
    endif()
    # Installed: the package finds libdlio_c.so by itself; a C program links dlio::dlio_c.
    add_test(NAME bindings:installed
             COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR}
                     -DPYTHON=${DLIO_SYSTEM_PYTHON} -DPYTHON_DIR=${DLIO_PYTHON_INSTALL_DIR}
                     -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/bindings_install_test
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/bindings/run_bindings_install_test.cmake)
    set_tests_properties(bindings:installed PROPERTIES TIMEOUT 600)
  endif()
endif()
