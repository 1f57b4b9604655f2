// The built-in checkpointers' factories (file_checkpointer_types.cc), which register.cc registers
// with what each declares (CheckpointerCapabilities), and the checkpointer they all build
// (file_checkpointer.cc).
#pragma once

#include <cstdint>
#include <memory>

#include "checkpoint/checkpoint_folders.h"
#include "checkpoint/checkpoint_layout.h"
#include "dlio/checkpointer.h"

namespace dlio::checkpoint_internal {

// Each builds rank options.rank's checkpointer of its kind (dlio/checkpointer.h describes their
// files); InvalidArgument naming the key for options it cannot honour.
Result<std::unique_ptr<Checkpointer>> MakePaperCheckpointer(const CheckpointOptions& options,
                                                            const CheckpointEnv& env);
Result<std::unique_ptr<Checkpointer>> MakeModelCheckpointer(const CheckpointOptions& options,
                                                            const CheckpointEnv& env);
Result<std::unique_ptr<Checkpointer>> MakeTransformerCheckpointer(const CheckpointOptions& options,
                                                                  const CheckpointEnv& env);
Result<std::unique_ptr<Checkpointer>> MakeDlioBenchmarkCheckpointer(
    const CheckpointOptions& options, const CheckpointEnv& env);
Result<std::unique_ptr<Checkpointer>> MakeTorchSaveCheckpointer(const CheckpointOptions& options,
                                                                const CheckpointEnv& env);
Result<std::unique_ptr<Checkpointer>> MakeH5pySaveCheckpointer(const CheckpointOptions& options,
                                                               const CheckpointEnv& env);

// The checks of checkpoint.folder_name and tag_file a file checkpointer makes when it is built
// (InvalidArgument naming the key), also declared for the preflight
// (CheckpointerCapabilities::check_options): CheckFolderOptions for the types whose folders the
// template names, CheckDlioFolderOptions for dlio_benchmark (DLIO's names: folder_name must be
// the default).
Status CheckFolderOptions(const CheckpointOptions& options);
// torch_save's: CheckFolderOptions, or checkpoint.folder_name "." (kFlatFolderName) with a tag
// file that is a plain name (its per-save file names are checked when it is built).
Status CheckFlatFolderOptions(const CheckpointOptions& options);
Status CheckDlioFolderOptions(const CheckpointOptions& options);

// The bytes of model_size_bytes checkpoint type "model" gives rank options.rank: all of them to
// rank 0 with root_only (none to the others), else an even share, the first (total % world)
// ranks one byte more, so the shares sum to the total.
uint64_t ModelRankBytes(const CheckpointOptions& options);

// The checkpointer of `plan` (rank options.rank's files of every checkpoint, per-save names as
// their templates) in `folders`: what every file checkpointer type builds
// (file_checkpointer_types.cc) with its own plan and folders.
Result<std::unique_ptr<Checkpointer>> NewFileCheckpointer(const CheckpointOptions& options,
                                                          const CheckpointEnv& env,
                                                          std::vector<PlannedFile> plan,
                                                          CheckpointFolders folders);

}  // namespace dlio::checkpoint_internal
