#include "runner/checkpoint_options.h"

#include "dlio/distribution.h"

namespace dlio {

std::string CheckpointTypeFor(const WorkloadConfig& c) {
  if (c.checkpoint.type != "auto") return c.checkpoint.type;
  if (c.framework == "pytorch" || c.framework == "tensorflow") return "dlio_benchmark";
  const ModelConfig& m = c.model;
  if (m.type == "transformer" || m.num_layers > 0 || !m.layer_parameters.empty() ||
      !m.optimization_groups.empty()) {
    return "transformer";
  }
  if (c.checkpoint.model_size_bytes > 0 || m.model_size_bytes > 0) return "model";
  return "paper";
}

CheckpointOptions CheckpointOptionsFor(const WorkloadConfig& c, int rank, int world) {
  CheckpointOptions co;
  co.name = CheckpointTypeFor(c);
  co.folder = c.checkpoint.checkpoint_folder;
  co.model_size_bytes =
      c.checkpoint.model_size_bytes ? c.checkpoint.model_size_bytes : c.model.model_size_bytes;
  co.fsync = c.checkpoint.fsync;
  co.read_back = c.checkpoint.read_back;
  co.transfer_size = c.checkpoint.transfer_size;
  co.rank = rank;
  co.world = world;
  co.root_only = c.checkpoint.rank_mode == CheckpointRankMode::kRoot;
  co.seed = MixSeed(c.train.seed, rank, 0xcc);
  co.size_divisor = c.checkpoint.size_divisor;
  co.tag_file = c.checkpoint.tag_file;
  co.folder_name = c.checkpoint.folder_name;
  co.framework_client_costs = c.reader.client_costs == ClientCosts::kFramework;
  co.transformer = TransformerModelFor(c);
  co.framework = c.framework;
  co.model_type = c.model.type;
  co.sections = c.checkpoint.checkpointers;  // each implementation's own keys
  return co;
}

TransformerModel TransformerModelFor(const WorkloadConfig& c) {
  const ModelConfig& m = c.model;
  TransformerModel t;
  t.num_layers = m.num_layers;
  t.vocab_size = m.transformer.vocab_size;
  t.hidden_size = m.transformer.hidden_size;
  t.ffn_hidden_size = m.transformer.ffn_hidden_size;
  t.num_attention_heads = m.transformer.num_attention_heads;
  t.num_kv_heads = m.transformer.num_kv_heads;
  t.tensor = m.parallelism.tensor;
  t.pipeline = m.parallelism.pipeline;
  t.data = m.parallelism.data;
  t.subset = c.checkpoint.mode == CheckpointMode::kSubset;
  t.zero_stage = m.parallelism.zero_stage;
  t.model_datatype = m.model_datatype;
  t.optimizer_datatype = m.optimizer_datatype;
  t.optimization_groups = m.optimization_groups;
  t.layer_parameters = m.layer_parameters;
  return t;
}

}  // namespace dlio
