// Climate segmentation (DLIO paper): training data made in memory; 50 random 500 B reads of a
// 4 KB HDF5 statistics file spread over the run; every rank writes a 4 MB JSON model file at the
// end.
//
//   climate_seg [--dir DIR] [--set key=value ...]     (parameters: the climate_seg preset)
#include "dlio/side_io.h"
#include "paper_workload.h"

namespace {

dlio::Status Run(example::Workload* w) {
  const dlio::WorkloadConfig& c = w->config;
  // The synthetic format has no files: the only things on storage are the stats file and the
  // model file.
  DLIO_ASSIGN_OR_RETURN(dlio::SideIoOptions side_options, dlio::SideIoOptionsFor(c, 0));
  DLIO_RETURN_NOT_OK(dlio::GenerateSideFile(side_options, w->registries, w->storage.get()));
  DLIO_ASSIGN_OR_RETURN(auto side, dlio::SideIo::Make(side_options, w->storage.get()));

  DLIO_ASSIGN_OR_RETURN(auto source, example::MakeSource(w));
  DLIO_ASSIGN_OR_RETURN(dlio::SamplerOptions so, dlio::SamplerOptionsFor(c, 0));
  DLIO_ASSIGN_OR_RETURN(auto sampler, dlio::MakeSampler(so));

  dlio::PipelineOptions po;
  po.name = "threaded";
  po.batch_size = c.reader.batch_size;
  po.read_threads = c.reader.read_threads;
  po.computation_threads = 0;
  DLIO_ASSIGN_OR_RETURN(auto factory, w->registries.pipelines.Get(po.name));
  DLIO_ASSIGN_OR_RETURN(auto pipeline, factory(po, {source.get(), w->clock, w->tracer.get()}));

  dlio::ComputeOptions co;
  co.time = c.train.computation_time;
  co.seed = dlio::MixSeed(c.train.seed, 0, 0xc0);
  DLIO_ASSIGN_OR_RETURN(auto compute, dlio::MakeComputeEmulator(co, w->clock));

  DLIO_RETURN_NOT_OK(side->BeforeTraining());  // opens the stats file
  std::vector<dlio::SampleRef> plan;
  uint64_t global_step = 0;
  for (uint64_t epoch = 0; epoch < c.train.epochs; ++epoch) {
    DLIO_RETURN_NOT_OK(sampler->Plan({epoch, 0, 1, &source->samples_per_file()}, &plan));
    const uint64_t steps = example::StepsOf(c, plan.size());
    plan.resize(steps * c.reader.batch_size);
    // The 50 reads go to seeded random steps of the whole run.
    side->SetRunSteps(steps * c.train.epochs);
    DLIO_RETURN_NOT_OK(pipeline->StartEpoch(epoch, plan));
    std::vector<dlio::StepRecord> records;
    const int64_t start = w->clock->NowNanos();
    dlio::BatchLease batch;
    for (uint64_t s = 0; s < steps; ++s, ++global_step) {
      dlio::StepRecord rec;
      const int64_t t0 = w->clock->NowNanos();
      DLIO_RETURN_NOT_OK(side->BeforeStep(global_step));
      bool end = false;
      DLIO_RETURN_NOT_OK(pipeline->Next(&batch, &end));
      const int64_t t1 = w->clock->NowNanos();
      compute->Step(static_cast<int64_t>(s));
      rec.load_ns = t1 - t0;
      rec.compute_ns = w->clock->NowNanos() - t1;
      rec.samples = batch->samples.size();
      rec.bytes = batch->bytes;
      records.push_back(rec);
    }
    batch.reset();
    example::PrintEpoch(epoch + 1, records, w->clock->NowNanos() - start,
                        c.train.excluded_start_steps);
  }
  DLIO_RETURN_NOT_OK(pipeline->Stop());
  DLIO_RETURN_NOT_OK(side->AfterTraining());  // the model file
  std::printf("stats reads: %llu (%llu bytes); model file: %llu bytes to %s\n",
              static_cast<unsigned long long>(side->reads_done()),
              static_cast<unsigned long long>(side->bytes_read()),
              static_cast<unsigned long long>(side->bytes_written()),
              side_options.write_file.c_str());
  return dlio::Status::OK();
}

}  // namespace

int main(int argc, char** argv) { return example::Main("climate_seg", argc, argv, Run); }
