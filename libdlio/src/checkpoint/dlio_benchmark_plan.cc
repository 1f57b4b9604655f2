// The files of one rank's checkpoint in the public DLIO benchmark's layout
// (dlio_benchmark/checkpointing/base_checkpointing.py, pytorch_checkpointing.py and
// tf_checkpointing.py at e1919d7): which ranks write, the model_states file of non-transformer
// models, and how each framework stores a state. The layer and optimizer files are
// PlanTransformerCheckpoint's.
#include <string>
#include <utility>
#include <vector>

#include "dlio/checkpointer.h"
#include "dlio/str_cat.h"

namespace dlio {
namespace {

// "zero_pp_rank_0_mp_rank_0_model_states.pt" -> "zero_pp_rank_0_mp_rank_0_model_states".
std::string Stem(const std::string& name) {
  const std::string pt = ".pt";
  if (name.size() > pt.size() && name.compare(name.size() - pt.size(), pt.size(), pt) == 0) {
    return name.substr(0, name.size() - pt.size());
  }
  return name;
}

// One state as the framework stores it: torch.save writes "<stem>.pt"; tf.train.Checkpoint.save
// of prefix "<stem>.pb" writes the first save's index and data shard. Sizes are the state's bytes;
// TensorFlow's data shard also holds its save counter and object graph, and its index is a table
// of one entry per tensor, for which kTfIndexBytes stands in (docs/workloads.md, "TensorFlow's
// files").
void AddState(const std::string& framework, const std::string& stem, uint64_t bytes,
              std::vector<CheckpointPlanFile>* out) {
  if (framework == "tensorflow") {
    out->push_back({stem + ".pb-1.index", kTfIndexBytes});
    out->push_back({stem + ".pb-1.data-00000-of-00001", bytes});
  } else {
    out->push_back({stem + ".pt", bytes});
  }
}

}  // namespace

Result<std::vector<CheckpointPlanFile>> PlanDlioBenchmarkCheckpoint(
    const CheckpointOptions& options) {
  if (options.framework != "pytorch" && options.framework != "tensorflow") {
    return Status::InvalidArgument("framework: checkpoint type 'dlio_benchmark' writes DLIO's ",
                                   "pytorch or tensorflow files, not '", options.framework,
                                   "' (set framework, or another checkpoint.type)");
  }
  const TransformerModel& m = options.transformer;
  DLIO_ASSIGN_OR_RETURN(TransformerRankPlan layers,
                        PlanTransformerCheckpoint(m, options.rank, options.world));
  std::vector<CheckpointPlanFile> files;
  // DLIO: without ZeRO only the first tensor x pipeline ranks hold state (the first replica).
  const uint64_t mp = m.tensor * m.pipeline;
  if (m.zero_stage == 0 && static_cast<uint64_t>(options.rank) >= mp) return files;
  if (options.model_type != "transformer") {
    const uint64_t bytes =
        options.model_size_bytes > 0 ? options.model_size_bytes : kDlioDefaultModelSizeBytes;
    AddState(options.framework, StrCat("model_states-", options.rank), bytes, &files);
  }
  for (const auto& f : layers.files) AddState(options.framework, Stem(f.name), f.bytes, &files);
  // TensorFlow's "checkpoint" file names the latest save of its folder; every save of every rank
  // rewrites it, so one rank writes it, at the length of the two lines naming its last state
  // (another rank's last state of the same kind gives the same length while ranks are < 10).
  if (options.framework == "tensorflow" && options.rank == 0 && !files.empty()) {
    const std::string prefix = Stem(files.back().name.substr(0, files.back().name.find(".pb-1")));
    const std::string path = StrCat("\"", prefix, ".pb-1\"\n");
    files.push_back(
        {"checkpoint",
         StrCat("model_checkpoint_path: ", path, "all_model_checkpoint_paths: ", path).size()});
  }
  return files;
}

}  // namespace dlio
