// L2HMC (DLIO paper): synthetic in-memory data; rank 0 checkpoints every 50 steps through C stdio,
// four files of several MB, one fwrite each.
//
//   l2hmc [--dir DIR] [--set key=value ...]     (parameters: the l2hmc preset)
#include "dlio/checkpointer.h"
#include "paper_workload.h"

namespace {

dlio::Status Run(example::Workload* w) {
  const dlio::WorkloadConfig& c = w->config;
  DLIO_ASSIGN_OR_RETURN(auto source, example::MakeSource(w));  // synthetic: no files
  DLIO_ASSIGN_OR_RETURN(dlio::SamplerOptions so, dlio::SamplerOptionsFor(c, 0));
  DLIO_ASSIGN_OR_RETURN(auto sampler, dlio::MakeSampler(so));

  DLIO_ASSIGN_OR_RETURN(auto pipeline,
                        example::MakePipeline(w, "threaded", source.get(), /*preprocess=*/false));
  DLIO_ASSIGN_OR_RETURN(auto compute, example::MakeCompute(w));

  // Checkpoints go through a stdio storage (fopen/fwrite/fclose): the model's bytes in
  // checkpoint.model_files files, each no larger than checkpoint.transfer_size, so one fwrite
  // each; only rank 0 writes (rank_mode root).
  dlio::StorageOptions stdio_options;
  stdio_options.name = c.checkpoint.storage_type;  // "stdio"
  DLIO_ASSIGN_OR_RETURN(auto stdio, dlio::MakeStorage(stdio_options, w->registries.storages,
                                                      w->clock, w->tracer.get()));
  dlio::CheckpointOptions ko;
  ko.name = c.checkpoint.type;  // "model"
  ko.folder = c.checkpoint.checkpoint_folder;
  ko.model_size_bytes = c.checkpoint.model_size_bytes;
  ko.sections = c.checkpoint.checkpointers;  // checkpoint.model_files, the model's own key
  ko.transfer_size = c.checkpoint.transfer_size;
  ko.root_only = c.checkpoint.rank_mode == dlio::CheckpointRankMode::kRoot;
  DLIO_ASSIGN_OR_RETURN(auto checkpointer_factory, w->registries.checkpointers.Get(ko.name));
  DLIO_ASSIGN_OR_RETURN(auto checkpointer,
                        checkpointer_factory(ko, {stdio.get(), w->clock, w->tracer.get()}));

  std::vector<dlio::SampleRef> plan;
  uint64_t global_step = 0;
  for (uint64_t epoch = 0; epoch < c.train.epochs; ++epoch) {
    DLIO_RETURN_NOT_OK(sampler->Plan({epoch, 0, 1, &source->samples_per_file()}, &plan));
    const uint64_t steps = example::StepsOf(c, plan.size());
    plan.resize(steps * c.reader.batch_size);
    DLIO_RETURN_NOT_OK(pipeline->StartEpoch(epoch, plan));
    dlio::BatchLease batch;
    for (uint64_t s = 0; s < steps; ++s) {
      bool end = false;
      DLIO_RETURN_NOT_OK(pipeline->Next(&batch, &end));
      compute->Step(static_cast<int64_t>(s));
      batch.reset();
      if (++global_step % static_cast<uint64_t>(c.checkpoint.steps_between_checkpoints) == 0) {
        DLIO_ASSIGN_OR_RETURN(auto r, checkpointer->Save(epoch, static_cast<int64_t>(global_step)));
        std::printf("step %llu: checkpoint %llu, %zu files, %llu bytes in %.3f s\n",
                    static_cast<unsigned long long>(global_step),
                    static_cast<unsigned long long>(r.id), r.files.size(),
                    static_cast<unsigned long long>(r.bytes_written), r.write_ns * 1e-9);
      }
    }
  }
  const dlio::IoStats io = stdio->stats();
  std::printf("stdio: %llu fwrite calls, %llu bytes\n",
              static_cast<unsigned long long>(io.write_ops),
              static_cast<unsigned long long>(io.write_bytes));
  return pipeline->Stop();
}

}  // namespace

int main(int argc, char** argv) { return example::Main("l2hmc", argc, argv, Run); }
