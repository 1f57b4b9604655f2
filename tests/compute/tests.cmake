dlio_add_test(compute_test LIBS dlio_compute SOURCES compute/compute_test.cc)
