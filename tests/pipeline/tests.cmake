dlio_add_test(pipeline_test LIBS dlio_pipeline
  SOURCES pipeline/pipeline_test.cc pipeline/pipeline_options_test.cc
          pipeline/pipeline_trace_test.cc pipeline/pipeline_claim_test.cc
          pipeline/pytorch_options_test.cc pipeline/pytorch_memory_test.cc
          pipeline/pipeline_views_test.cc pipeline/pipeline_wait_test.cc)
# The pytorch pipeline forks worker processes: its own binary, so no other test shares its process.
dlio_add_test(worker_pipeline_test LIBS dlio_pipeline dlio_trace nlohmann_json::nlohmann_json
  SOURCES pipeline/worker_pipeline_test.cc)
dlio_add_test(worker_memory_test LIBS dlio_pipeline dlio_trace nlohmann_json::nlohmann_json
  SOURCES pipeline/worker_memory_test.cc)
