dlio_add_test(comm_test LIBS dlio_comm SOURCES comm/serial_comm_test.cc)
