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

  DLIO_ASSIGN_OR_RETURN(auto pipeline,
                        example::MakePipeline(w, "threaded", source.get(), /*preprocess=*/false));
  DLIO_ASSIGN_OR_RETURN(auto compute, example::MakeCompute(w));

  DLIO_RETURN_NOT_OK(side->BeforeTraining());  // opens the stats file
  example::LoopHooks hooks;
  hooks.on_plan = [&](uint64_t, uint64_t steps) {
    side->SetRunSteps(steps * c.train.epochs);  // the 50 reads go to seeded random steps
    return dlio::Status::OK();
  };
  hooks.before_step = [&](uint64_t global_step) { return side->BeforeStep(global_step); };
  DLIO_RETURN_NOT_OK(
      example::RunEpochs(w, sampler.get(), source.get(), pipeline.get(), compute.get(), hooks));
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
