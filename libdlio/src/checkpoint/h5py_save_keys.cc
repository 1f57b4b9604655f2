// The h5py_save checkpointer's config keys (checkpoint.h5py_*; docs/workloads.md): declared here,
// beside the checkpointer, and parsed straight into its H5pySaveOptions in the config's
// CheckpointConfig::checkpointers (as torch_save_keys.cc does for checkpoint.torch_*).
#include "checkpoint/h5py_save_options.h"
#include "config/key_builders.h"

#define H5PY_SAVE_FIELD(member) \
  DLIO_SECTION_FIELD(checkpoint.checkpointers, H5pySaveOptions, std::string, member)

namespace dlio::config_internal {

void AddH5pySaveKeys(std::vector<KeySpec>* t) {
  auto add = [t](KeySpec k) { t->push_back(std::move(k)); };
  add(String("checkpoint.h5py_datasets", H5PY_SAVE_FIELD(datasets),
             "type 'h5py_save': the datasets h5py writes (Keras' save_weights, or "
             "f.create_dataset(name, data=w) in h5py.File(path, 'w')), in order, as "
             "name:shape[:dtype] items separated by commas (e.g. 'dense/kernel:784x10, "
             "dense/bias:10'; a name with '/' is created in its group first, as h5py's "
             "require_group does; shape 'scalar' or empty = 0-dim; dtype fp32 (default), fp16, "
             "fp64, int8, uint8, int16, int32, int64; items are read from the right, so names may "
             "hold ':' as Keras' kernel:0); an item 'object@name:shape:dtype' is an attribute of "
             "the root (object empty) or a group, its dtype also S<n>, bytes<n> or str<n> (fixed, "
             "variable-length ASCII or UTF-8 strings of n characters)"));
  add(String("checkpoint.h5py_file_name", H5PY_SAVE_FIELD(file_name),
             "type 'h5py_save': the file's name in each checkpoint folder, {rank} standing for "
             "the rank (needed when all ranks write)",
             kNonEmpty));
}

}  // namespace dlio::config_internal

#undef H5PY_SAVE_FIELD
