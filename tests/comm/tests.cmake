dlio_add_test(comm_test LIBS dlio_comm SOURCES comm/serial_comm_test.cc)
if(DLIO_WITH_MPI)
  dlio_add_mpi_test(mpi_comm_test RANKS 1 2 3 4 LIBS dlio_comm SOURCES comm/mpi_comm_test.cc)
endif()
