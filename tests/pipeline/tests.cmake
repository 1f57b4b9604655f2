dlio_add_test(pipeline_test LIBS dlio_pipeline
  SOURCES pipeline/pipeline_test.cc pipeline/pipeline_options_test.cc)
