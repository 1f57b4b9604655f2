// Per-rank sizes and names of a transformer (LLM) checkpoint, following the layout the public DLIO
// benchmark writes (dlio_benchmark/checkpointing/base_checkpointing.py, 2025): the model is a
// list of layers (0 = embedding, 1..L = transformer layers, L+1 = lm_head, L+2 = final norm)
// split over pipeline stages, every matrix split over tensor-parallel ranks (norms are not), and
// DeepSpeed ZeRO deciding which data-parallel ranks hold what. Integer divisions happen per
// tensor, as there, so the sums match DLIO's to the byte.
#include <string>
#include <vector>

#include "dlio/checkpointer.h"
#include "dlio/str_cat.h"

namespace dlio {
namespace {

// Bytes per element; 0 for a value outside the enum (only a cast can make one).
uint64_t DatatypeBytes(Datatype type) {
  switch (type) {
    case Datatype::kFp16:
    case Datatype::kBf16:
      return 2;
    case Datatype::kFp32:
      return 4;
    case Datatype::kFp64:
      return 8;
    case Datatype::kInt8:
    case Datatype::kUint8:
      return 1;
  }
  return 0;
}

uint64_t KvWidth(const TransformerModel& m) {
  const uint64_t head_size = m.num_attention_heads ? m.hidden_size / m.num_attention_heads : 0;
  return head_size * m.num_kv_heads;
}

// Parameters of each tensor of layer `index` on one rank: matrices split `tp` ways, everything
// further split `shard` ways (ZeRO-3).
std::vector<uint64_t> LayerTensors(const TransformerModel& m, int64_t index, uint64_t tp,
                                   uint64_t shard) {
  const uint64_t h = m.hidden_size;
  const int64_t layers = m.num_layers;
  if (index == 0 || index == layers + 1) {
    return {h * m.vocab_size / tp / shard};  // embedding, lm_head
  }
  if (index == layers + 2) return {h / shard};     // final norm
  return {h / shard,                               // input norm
          h * (h + 2 * KvWidth(m)) / tp / shard,   // Q, K, V
          h * h / tp / shard,                      // attention output
          h / shard,                               // post-attention norm
          h * 2 * m.ffn_hidden_size / tp / shard,  // gated MLP up (two ffn-wide halves)
          h * m.ffn_hidden_size / tp / shard};     // MLP down
}

std::string Pt(const std::string& stem) { return stem + ".pt"; }

// The model's parallelism and datatypes a plan needs, or InvalidArgument naming the key.
Status CheckModel(const TransformerModel& m, int rank, int world) {
  if (world < 1 || rank < 0 || rank >= world) {
    return Status::InvalidArgument("transformer checkpoint: rank ", rank, " is not in a world of ",
                                   world);
  }
  if (m.tensor < 1 || m.pipeline < 1) {
    return Status::InvalidArgument(
        "model.parallelism.tensor and model.parallelism.pipeline must be >= 1");
  }
  if (m.zero_stage > 3) {
    return Status::InvalidArgument("model.parallelism.zero_stage must be 0-3, got ", m.zero_stage);
  }
  if (DatatypeBytes(m.model_datatype) == 0 || DatatypeBytes(m.optimizer_datatype) == 0) {
    return Status::InvalidArgument("model.model_datatype / model.optimizer_datatype: not one of ",
                                   EnumNameList<Datatype>());
  }
  return Status::OK();
}

// The data-parallel degree: model.parallelism.data in subset mode (the job's ranks may be more
// than this run's), else the world over tensor x pipeline.
Result<uint64_t> DataParallelism(const TransformerModel& m, int world) {
  const uint64_t mp = static_cast<uint64_t>(m.tensor) * static_cast<uint64_t>(m.pipeline);
  const uint64_t w = static_cast<uint64_t>(world);
  if (m.subset) {
    if (m.data < 1) {
      return Status::InvalidArgument("checkpoint.mode subset needs model.parallelism.data >= 1");
    }
    const uint64_t dp = static_cast<uint64_t>(m.data);
    if (w > dp * mp) {
      return Status::InvalidArgument("checkpoint.mode subset: ", world,
                                     " ranks are more than the job's model.parallelism.data x "
                                     "tensor x pipeline = ",
                                     dp * mp);
    }
    return dp;
  }
  if (w % mp != 0) {
    return Status::InvalidArgument(world,
                                   " ranks are not a multiple of model.parallelism.tensor x "
                                   "model.parallelism.pipeline = ",
                                   mp);
  }
  return w / mp;
}

// The layers of the rank's pipeline stage: L layers split as evenly as they go, the first stages
// taking one more; the embedding and the head and norm join the first and last stages unless the
// model lists its own layers.
void AssignLayers(const TransformerModel& m, uint64_t pp, TransformerRankPlan* plan) {
  const int64_t layers = m.num_layers;
  if (layers <= 0) return;
  const int64_t stages = static_cast<int64_t>(pp), stage = plan->pipeline_rank;
  const int64_t per = layers / stages, extra = layers % stages;
  if (stage < extra) {
    plan->first_layer = stage * (per + 1) + 1;
    plan->last_layer = plan->first_layer + per;
  } else {
    plan->first_layer = extra * (per + 1) + (stage - extra) * per + 1;
    plan->last_layer = plan->first_layer + per - 1;
  }
  if (m.layer_parameters.empty()) {
    if (stage == stages - 1) plan->last_layer = layers + 2;
    if (stage == 0) plan->first_layer = 0;
  }
}

// Bytes of each of the rank's layers (none when ZeRO-1/2 leave the model to data rank 0);
// adds them to plan->model_bytes.
std::vector<uint64_t> ModelLayerBytes(const TransformerModel& m, bool zero12, uint64_t shard,
                                      TransformerRankPlan* plan) {
  std::vector<uint64_t> layer_bytes;
  if (m.num_layers <= 0 || (zero12 && plan->data_rank != 0)) return layer_bytes;
  const uint64_t tp = static_cast<uint64_t>(m.tensor);
  for (int64_t i = plan->first_layer; i <= plan->last_layer; ++i) {
    uint64_t bytes = 0;
    if (!m.layer_parameters.empty()) {
      for (uint64_t p : m.layer_parameters) bytes += p / tp;  // DLIO's int8 tensors
    } else {
      for (uint64_t p : LayerTensors(m, i, tp, shard)) bytes += p * DatatypeBytes(m.model_datatype);
    }
    layer_bytes.push_back(bytes);
    plan->model_bytes += bytes;
  }
  return layer_bytes;
}

// Model state: ZeRO-1/2 keep whole (tensor/pipeline-split) layers on data-parallel rank 0, one
// file per layer with pipeline parallelism; ZeRO-0 (first replica only) and ZeRO-3 (sharded)
// write one file per rank.
void AddModelFiles(const TransformerModel& m, uint64_t mp_rank, const std::string& dp_mp,
                   TransformerRankPlan* plan) {
  const bool zero12 = m.zero_stage == 1 || m.zero_stage == 2;
  const uint64_t shard = m.zero_stage == 3 ? plan->data_parallelism : 1;
  const std::vector<uint64_t> layer_bytes = ModelLayerBytes(m, zero12, shard, plan);
  if (plan->model_bytes == 0) return;
  if (zero12 && m.pipeline > 1) {
    for (size_t k = 0; k < layer_bytes.size(); ++k) {
      if (layer_bytes[k] == 0) continue;
      plan->files.push_back({Pt(StrCat("layer_", plan->first_layer + int64_t(k), "-model_", mp_rank,
                                       "_model_states")),
                             layer_bytes[k]});
    }
  } else if (zero12) {
    plan->files.push_back({Pt(StrCat("model_", mp_rank, "_model_states")), plan->model_bytes});
  } else {
    plan->files.push_back({Pt(dp_mp + "_model_states"), plan->model_bytes});
  }
}

}  // namespace

uint64_t TransformerParameterCount(const TransformerModel& m) {
  if (m.num_layers <= 0) return 0;
  const uint64_t h = m.hidden_size;
  const uint64_t per_layer =
      h + h * (h + 2 * KvWidth(m)) + h * h + h + 2 * m.ffn_hidden_size * h + m.ffn_hidden_size * h;
  const uint64_t embedding = m.vocab_size * h;
  return embedding + per_layer * static_cast<uint64_t>(m.num_layers) + h + embedding;
}

Result<TransformerRankPlan> PlanTransformerCheckpoint(const TransformerModel& m, int rank,
                                                      int world) {
  DLIO_RETURN_NOT_OK(CheckModel(m, rank, world));
  const uint64_t tp = m.tensor, pp = m.pipeline, mp = tp * pp;
  const uint64_t r = static_cast<uint64_t>(rank);
  TransformerRankPlan plan;
  DLIO_ASSIGN_OR_RETURN(plan.data_parallelism, DataParallelism(m, world));
  const uint64_t dp = plan.data_parallelism;
  plan.tensor_rank = static_cast<int>(r % tp);
  plan.pipeline_rank = static_cast<int>((r / tp) % pp);
  plan.data_rank = static_cast<int>(r / mp);
  const uint64_t mp_rank = r % mp;
  // Without ZeRO only the first data-parallel replica checkpoints.
  if (m.zero_stage == 0 && r >= mp) return plan;
  AssignLayers(m, pp, &plan);
  const std::string dp_mp = StrCat("zero_pp_rank_", plan.data_rank, "_mp_rank_", mp_rank);
  AddModelFiles(m, mp_rank, dp_mp, &plan);

  // Optimizer state: given groups (int8 tensors a and b per group plus one combined), or the
  // Adam-like state DLIO derives: three groups of (parameters of this shard + 5 x hidden).
  if (!m.optimization_groups.empty()) {
    uint64_t sum = 0;
    for (uint64_t g : m.optimization_groups) sum += g;
    plan.optimizer_bytes = 3 * sum;
  } else if (m.num_layers > 0) {
    const uint64_t params = TransformerParameterCount(m) / (m.zero_stage > 0 ? dp * mp : mp);
    if (params > 0) {
      plan.optimizer_bytes = 3 * (params + 5 * m.hidden_size) * DatatypeBytes(m.optimizer_datatype);
    }
  }
  if (plan.optimizer_bytes > 0) {
    plan.files.push_back({Pt(dp_mp + "_optim_states"), plan.optimizer_bytes});
  }
  return plan;
}

}  // namespace dlio
