# Sources of the pipeline module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
  src/pipeline/buffer_pool.cc
  src/pipeline/preload_store.cc
  src/pipeline/batch_pipeline.cc
  src/pipeline/batch_pipeline_reads.cc
  src/pipeline/bounded_read_buffer.cc
  src/pipeline/read_scratch.cc
  src/pipeline/spin_wait.cc
  src/pipeline/worker_channel.cc
  src/pipeline/worker_process.cc
  src/pipeline/worker_pool.cc
  src/pipeline/worker_pipeline.cc
  src/pipeline/pytorch_options.cc
  src/pipeline/pytorch_memory.cc
  src/pipeline/register.cc
)
