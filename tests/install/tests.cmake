# find_package(dlio) after `cmake --install`, checked on a consumer project (built with this
# tree's compiler: a sanitized dlio needs the same compiler's sanitizer runtime).
add_test(NAME install:find_package_consumer
         COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
                 -DCXX=${CMAKE_CXX_COMPILER}
                 -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/install_test -P
                 ${CMAKE_CURRENT_SOURCE_DIR}/install/run_install_test.cmake)
set_tests_properties(install:find_package_consumer PROPERTIES TIMEOUT 600)
