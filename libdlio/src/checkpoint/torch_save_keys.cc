// The torch_save checkpointer's config keys (checkpoint.torch_*; docs/workloads.md): declared
// here, beside the checkpointer, and parsed straight into its TorchSaveOptions in the config's
// CheckpointConfig::checkpointers. The config module compiles this file into its key table
// (config/sources.cmake), as it parses a config before any registry exists; the keys keep their
// place in the checkpoint section (config_table.cc calls this); the checkpointer's registry entry
// names their prefix (checkpoint/register.cc).
#include "checkpoint/torch_save_options.h"
#include "config/key_builders.h"

#define TORCH_SAVE_FIELD(member) \
  DLIO_SECTION_FIELD(checkpoint.checkpointers, TorchSaveOptions, std::string, member)

namespace dlio::config_internal {

void AddTorchSaveKeys(std::vector<KeySpec>* t) {
  auto add = [t](KeySpec k) { t->push_back(std::move(k)); };
  add(String(
      "checkpoint.torch_state_dict", TORCH_SAVE_FIELD(state_dict),
      "type 'torch_save': the state dict torch.save writes, as name:shape[:dtype] items "
      "separated by commas (e.g. 'fc.weight:10x7, fc.bias:10'; shape 'scalar' or empty = "
      "0-dim; dtype fp32 (default), fp16, bf16, fp64, int8, uint8, int16, int32, int64, bool), "
      "in the order the pickler meets them (a nested container's too: module's, then the "
      "optimizer's); with several files (torch_file_name), one group per file separated by ';'"));
  add(String("checkpoint.torch_modules", TORCH_SAVE_FIELD(modules),
             "type 'torch_save': the modules of state_dict()'s _metadata after the root, as "
             "name[=version] items separated by commas; empty = every dotted prefix of the "
             "tensor names, version 1; 'none' = a plain OrderedDict without _metadata; with "
             "several files, one group per file separated by ';' (or one group for all)"));
  add(String("checkpoint.torch_file_name", TORCH_SAVE_FIELD(file_name),
             "type 'torch_save': the file's name in each checkpoint folder, {rank} standing for "
             "the rank, and {id}, {step} and {epoch} (as in folder_name, maybe zero-padded) for "
             "a name each save makes anew (model-{step}.pt, Lightning's "
             "epoch={epoch}-step={step}.ckpt); "
             "its stem is the zip's archive folder, whose length sets the header and central "
             "directory sizes (dlio-run fit copies the traced name, or its template when it "
             "changes from save to save); several names separated by commas: one torch.save "
             "file each per checkpoint, in that order (DeepSpeed's model states, then optimizer "
             "states)",
             kNonEmpty));
  add(String("checkpoint.torch_pickle_bytes", TORCH_SAVE_FIELD(pickle_bytes),
             "type 'torch_save': each file's data.pkl size in bytes, separated by commas (one "
             "value for all files); empty or 0 = the state dict's own pickle. A nested "
             "container ({'module': ..., 'optimizer': ..., scalars}) pickles to more than its "
             "tensors: the state dict's pickle is padded after its STOP to this size, so the "
             "writes are the container's (dlio-run fit reads it from the first write)"));
}

}  // namespace dlio::config_internal

#undef TORCH_SAVE_FIELD
