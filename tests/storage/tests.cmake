dlio_add_test(storage_test LIBS dlio_storage dlio_trace dlio_comm
  SOURCES storage/storage_conformance_test.cc storage/posix_storage_test.cc
          storage/slow_storage_test.cc storage/mpiio_serial_test.cc storage/read_some_test.cc)
if(DLIO_WITH_MPI)
  # The conformance suite again, now including mpiio, plus mpiio's own multi-rank tests.
  dlio_add_mpi_test(storage_mpi_test RANKS 1 2 3 4 LIBS dlio_storage dlio_trace dlio_comm
    SOURCES storage/storage_conformance_test.cc storage/mpiio_storage_test.cc)
endif()
