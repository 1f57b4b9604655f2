// checkpoint.folder_name: the template a checkpoint folder's name is made from, so that dlio names
// its folders as the emulated framework does (DeepSpeed's global_step{step}, Hugging Face's
// checkpoint-{step}, Megatron's iter_{step:07}); dlio's own is ckpt-{id:06}.
//
// Text with placeholders: {id}, the checkpoint's id (checkpointer.h: one past the highest id
// already in the folder, then counting up), {step}, the global step the save follows (the run's
// steps, plus the step of the checkpoint it resumed from), and {epoch}, the epoch the save happens
// in, counted from 0 as PyTorch Lightning counts (a save at an epoch's end: that epoch; a resumed
// run's epochs go on after the epoch of the checkpoint it resumed from). Each is written in
// decimal, or zero-padded to a width as {id:06} (a '0' and the width, 1 to 20). At least one
// placeholder
// (every save needs a folder of its own), each at most once; the text after a placeholder does not
// start with a digit (or a name would not tell where its number ends). A name, not a path: no
// '/', not "." or "..", not ".dlio..." (dlio's bookkeeping).
//
// The same templates name each save's files where a framework names them per save
// (checkpoint.torch_file_name: model-{step}.pt, Lightning's epoch={epoch}-step={step}.ckpt):
// ParseFileName, which names that key in its errors and also takes a name with no placeholder (the
// same name in every save's folder).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dlio/status.h"

namespace dlio::checkpoint_internal {

inline constexpr char kDefaultFolderName[] = "ckpt-{id:06}";
// checkpoint.folder_name "." : no folder per save; each save's files go straight into
// checkpoint_folder, side by side with the other saves' (torch.save(sd, f"ckpt/model-{step}.pt"),
// PyTorch Lightning's ModelCheckpoint), so their names must change from save to save (only
// torch_save's checkpoint.torch_file_name can: {id}, {step}, {epoch}). Not a template: Parse
// refuses it, and CheckpointFolders::Flat lists the files by their names' template instead.
inline constexpr char kFlatFolderName[] = ".";

// The numbers of one save that its names may hold; -1 where one is not known (a name makes it 0).
struct SaveNumbers {
  uint64_t id = 0;
  int64_t step = -1;   // the global step the save follows
  int64_t epoch = -1;  // the epoch it happens in, from 0
};

// The {epoch} of a save in run epoch `epoch` (Checkpointer::Save's, counted from 1).
inline int64_t NamedEpoch(uint64_t epoch) {
  return epoch > 0 ? static_cast<int64_t>(epoch - 1) : 0;
}

class FolderNameTemplate {
 public:
  // dlio's own, ckpt-{id:06}.
  FolderNameTemplate();
  // InvalidArgument naming checkpoint.folder_name and what is wrong with `text`.
  static Result<FolderNameTemplate> Parse(std::string_view text);
  // A file's name in each save's folder: as Parse, but InvalidArgument names `key`, and a name
  // with no placeholder is one (per_save() false, Name() the text).
  static Result<FolderNameTemplate> ParseFileName(std::string_view text, std::string_view key);

  // The folder (or file) of the save `n` numbers (a negative step or epoch counts as 0).
  std::string Name(const SaveNumbers& n) const;

  // The numbers a name this template makes holds; nullopt for any other name. A number matches
  // any run of 1 to 19 digits (ckpt-1 and ckpt-000001 are both id 1).
  struct Fields {
    std::optional<uint64_t> id;
    std::optional<uint64_t> step;
    std::optional<uint64_t> epoch;
  };
  std::optional<Fields> Match(std::string_view name) const;

  bool names_id() const { return Has(Field::kId); }
  bool names_step() const { return Has(Field::kStep); }
  bool names_epoch() const { return Has(Field::kEpoch); }
  // Whether names differ from save to save ({id}, {step} or {epoch}).
  bool per_save() const { return names_id() || names_step() || names_epoch(); }
  const std::string& text() const { return text_; }

 private:
  struct Unparsed {};
  explicit FolderNameTemplate(Unparsed) {}
  // What the text names (for its errors): a checkpoint's folder, or a file in it under `key`.
  struct Use {
    std::string_view key;
    bool file = false;
  };
  static Result<FolderNameTemplate> ParseAs(std::string_view text, Use use);
  enum class Field { kNone, kId, kStep, kEpoch };
  struct Part {
    std::string literal;  // text before the field (or the whole tail, with kNone)
    Field field = Field::kNone;
    int width = 0;  // zero-padded to this many digits; 0 = plain decimal
  };
  bool Has(Field f) const;

  std::string text_;
  std::vector<Part> parts_;
};

}  // namespace dlio::checkpoint_internal
