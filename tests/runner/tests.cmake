dlio_add_test(metrics_test LIBS dlio_runner SOURCES runner/metrics_test.cc)
dlio_add_test(loop_test LIBS dlio_runner SOURCES runner/loop_test.cc)
dlio_add_test(workloads_test LIBS dlio_runner SOURCES runner/workloads_test.cc)
