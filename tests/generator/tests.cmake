dlio_add_test(generator_test LIBS dlio_generator dlio_storage SOURCES generator/generator_test.cc)
dlio_add_test(generator_foreign_test LIBS dlio_generator dlio_storage
  SOURCES generator/generator_foreign_test.cc)
dlio_add_test(generator_interrupted_test LIBS dlio_generator dlio_storage
  SOURCES generator/generator_interrupted_test.cc)
dlio_add_test(generator_lock_test LIBS dlio_generator dlio_storage
  SOURCES generator/generator_lock_test.cc)
dlio_add_test(generator_formats_test LIBS dlio_generator dlio_format dlio_storage
  SOURCES generator/generator_formats_test.cc)
if(DLIO_WITH_MPI)
  # The generation lock and error agreement across ranks (under mpiexec).
  dlio_add_mpi_test(generator_mpi_test RANKS 2 3
    LIBS dlio_generator dlio_format dlio_storage dlio_comm
    SOURCES generator/generator_mpi_test.cc)
endif()
# Leftovers of killed generations (owner stamps).
dlio_add_test(generator_leftovers_test LIBS dlio_generator dlio_format dlio_storage
  SOURCES generator/leftovers_test.cc)
# Finding a dataset's files by listing, as the Python DLIO does (subsets, stray files, .h5).
dlio_add_test(dataset_listing_test LIBS dlio_generator dlio_format dlio_storage
  SOURCES generator/dataset_listing_test.cc)
