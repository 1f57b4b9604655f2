dlio_add_test(storage_test LIBS dlio_storage dlio_trace dlio_comm
  SOURCES storage/storage_conformance_test.cc storage/posix_storage_test.cc
          storage/slow_storage_test.cc storage/mpiio_serial_test.cc storage/read_some_test.cc
          storage/fresh_read_pages_test.cc storage/seek_test.cc storage/map_test.cc)
if(DLIO_WITH_MPI)
  # The conformance suite again, now including mpiio, plus mpiio's own multi-rank tests.
  dlio_add_mpi_test(storage_mpi_test RANKS 1 2 3 4 LIBS dlio_storage dlio_trace dlio_comm
    SOURCES storage/storage_conformance_test.cc storage/mpiio_storage_test.cc)
endif()
# The s3 storage: SigV4 against AWS's published examples (no server) ...
dlio_add_test(s3_sigv4_test LIBS dlio_storage SOURCES storage/s3_sigv4_test.cc)
# ... its statistics (counts, bytes, GET percentiles), no server either ...
dlio_add_test(s3_request_stats_test LIBS dlio_storage SOURCES storage/s3_request_stats_test.cc)
# ... the checks of what a server's XML may be (depth, DOCTYPE, balance) and of listing pages ...
dlio_add_test(s3_xml_test LIBS dlio_storage SOURCES storage/s3_xml_test.cc)
# ... and against a real S3 server (s3rver on 127.0.0.1, started by each test; skipped without
# node and s3rver, which `./setup.sh test` installs).
dlio_add_test(s3_storage_test SOURCES storage/s3_storage_test.cc storage/s3_server.cc
  PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)
dlio_add_test(s3_dlio_run_test
  SOURCES storage/s3_dlio_run_test.cc storage/s3_server.cc storage/fault_proxy.cc
  PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77)
target_link_libraries(s3_dlio_run_test PRIVATE nlohmann_json::nlohmann_json)
add_dependencies(s3_dlio_run_test dlio-run)
# ... behind a fault-injecting proxy (503 SlowDown, 429, dropped connections): the retries.
dlio_add_test(s3_faults_test
  SOURCES storage/s3_faults_test.cc storage/fault_proxy.cc storage/s3_server.cc
  PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)
# ... behind the same proxy acting as a hostile server (listings that never end or are malformed,
# falsified range answers, huge headers, a server that never answers).
dlio_add_test(s3_hostile_test
  SOURCES storage/s3_hostile_test.cc storage/fault_proxy.cc storage/s3_server.cc
  PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)
add_dependencies(s3_hostile_test dlio-run)
# ... over https (a CA made with the openssl CLI) and with virtual-host addressing.
dlio_add_test(s3_tls_vhost_test SOURCES storage/s3_tls_vhost_test.cc storage/s3_server.cc
  PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)
