dlio_add_test(checkpoint_test LIBS dlio_checkpoint dlio_storage dlio_trace
  SOURCES checkpoint/checkpointer_test.cc)
