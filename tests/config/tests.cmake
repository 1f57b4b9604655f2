# Tests of the config module (paths relative to tests/).
dlio_add_test(config_test LIBS dlio_config
  SOURCES config/config_parse_test.cc config/config_storage_keys_test.cc config/config_errors_test.cc config/config_validate_test.cc)
# The parquet format's own rules are its registry entry's hook (all of libdlio).
dlio_add_test(parquet_config_test SOURCES config/parquet_config_test.cc)
# dlio_storage, dlio_cache, dlio_format, dlio_pipeline, dlio_checkpoint: the storages' registry
# (tiered's entry too), the formats', the pipelines' and the checkpointers', whose declared key
# sections it walks.
dlio_add_test(config_docs_test LIBS dlio_config dlio_storage dlio_cache dlio_format dlio_pipeline
  dlio_checkpoint SOURCES config/config_docs_test.cc)
# ValidateCapabilities asks the registries (all of libdlio): collective reads, keys, records and
# what backends declare; the request models each format declares.
dlio_add_test(capabilities_test SOURCES config/capabilities_test.cc)
dlio_add_test(io_model_capabilities_test SOURCES config/io_model_capabilities_test.cc)
