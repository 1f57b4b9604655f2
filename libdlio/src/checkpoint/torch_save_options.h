// The torch_save checkpointer's own options (checkpoint.torch_*; docs/workloads.md), held in
// CheckpointOptions::sections, so neither dlio/checkpointer.h, dlio/config.h nor the runner names
// them. Its keys are declared by checkpoint/torch_save_keys.cc and parsed straight into this type
// in the config's CheckpointConfig::checkpointers; the checkpointer reads them in one place,
// PlanTorchSaveFiles (torch_save_plan.cc). Header-only and free of other headers of dlio, as the
// config module (a leaf) compiles the key file.
#pragma once

#include <string>

namespace dlio {

struct TorchSaveOptions {
  // checkpoint.torch_state_dict and checkpoint.torch_modules: the state dict ("name:7x10[:dtype],
  // ...") and the modules of its _metadata ("" = from the tensor names, "none" = no _metadata,
  // else "mod[=version], ..."); with several files, one group per file separated by ';' (one
  // modules group may stand for every file).
  std::string state_dict;
  std::string modules;
  // checkpoint.torch_file_name: the file's name in the checkpoint folder, "{rank}" replaced by the
  // rank; several names separated by ',' are several torch.save files per checkpoint, written in
  // that order.
  std::string file_name = "model-rank{rank}.pt";
  // checkpoint.torch_pickle_bytes: each file's data.pkl size ("" or 0 = its state dict's own
  // pickle), separated by ',' (one value may stand for every file).
  std::string pickle_bytes;
};

}  // namespace dlio
