// The pytorch pipeline's own options (worker_pipeline.h), held in PipelineOptions::sections, so
// neither dlio/pipeline.h nor the runner names them. reader.persistent_workers, the one config key
// only this pipeline reads, is declared by pipeline/pytorch_keys.cc and parsed straight into this
// type in the config's ReaderConfig::pipelines; the other fields the pipeline's registry entry
// derives (PipelineHooks::derive_options: DerivePytorchOptions, worker_pipeline.h) from the config
// and the runner's PipelineFacts before the pipeline is built. Header-only and free of other
// headers of dlio, as the config module (a leaf) compiles the key file.
#pragma once

#include <cstdint>
#include <string>

namespace dlio {

struct PytorchLoaderOptions {
  // reader.persistent_workers: keep the worker processes across epochs (DataLoader's
  // persistent_workers); false forks them at every StartEpoch and ends them when the epoch has
  // been delivered.
  bool persistent_workers = true;
  // The sample bytes every batch slot's shared region is allocated for when the pipeline is built
  // (0: grown by the workers on demand). Larger batches still grow it. PipelineFacts::
  // batch_reserve_bytes.
  uint64_t reserve_batch_bytes = 0;
  // A slot holds at most this many bytes per sample when > 0 (DLIO's loader hands PyTorch
  // dataset.record_length_bytes_resize bytes per sample, whatever it read): a batch never takes
  // more memory than the framework's. Under PipelineOptions::framework_client_costs false (none)
  // a worker reads each sample straight into its batch's slot (reused, pre-touched), with no
  // collate copy, or, when this is > 0, into its own reused buffer; under true (framework) it
  // reads into its own buffer as the framework does.
  uint64_t collate_limit_bytes = 0;
  // > 0 (at least collate_limit_bytes) bounds each worker's read buffer: its first
  // bounded_read_bytes are memory of their own and every later byte of a sample goes through one
  // reused 1 MiB piece mapped over the rest of a span of PipelineOptions::reserve_sample_bytes
  // (grown to a larger sample after it), so a worker holds bounded_read_bytes + 1 MiB whatever
  // the sample size, and each sample is still read by the same calls into one contiguous buffer
  // (pipeline/bounded_read_buffer.h). Only for readers that stream a sample front to back
  // (FormatCapabilities::streams_samples) and without decoding. 0: the buffer holds whole
  // samples. PipelineFacts::bounded_read_bytes.
  uint64_t bounded_read_bytes = 0;
  // Each worker process writes its own trace to "<prefix>-worker-<n>-<os pid>.pfw" (".gz" added
  // with worker_trace_gzip) when the env's tracer is enabled; "" records nothing.
  // PipelineFacts::trace_prefix and output.trace_gzip.
  std::string worker_trace_prefix;
  bool worker_trace_gzip = false;
};

}  // namespace dlio
