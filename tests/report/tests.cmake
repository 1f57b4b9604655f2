dlio_add_test(report_test LIBS dlio_report dlio_profile
  SOURCES report/report_test.cc report/report_fixture.cc)

# The report drawn by headless Chromium: its own main, skipped (exit 77) without Chromium.
add_executable(report_browser_check report/report_browser_check.cc report/report_fixture.cc
                                    test_util.cc)
dlio_test_defaults(report_browser_check)
target_link_libraries(report_browser_check PRIVATE dlio_report dlio_profile dlio_core)
target_include_directories(report_browser_check PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
                                                        ${PROJECT_SOURCE_DIR}/libdlio/src)
add_test(NAME report_browser_check COMMAND report_browser_check)
set_tests_properties(report_browser_check PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 90)

# `dlio-run report` end to end (runs the built dlio-run).
dlio_add_test(report_command_test LIBS dlio_core SOURCES report/report_command_test.cc)
