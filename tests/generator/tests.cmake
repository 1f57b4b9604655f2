dlio_add_test(generator_test LIBS dlio_generator dlio_storage SOURCES generator/generator_test.cc)
dlio_add_test(generator_formats_test LIBS dlio_generator dlio_format dlio_storage
  SOURCES generator/generator_formats_test.cc)
