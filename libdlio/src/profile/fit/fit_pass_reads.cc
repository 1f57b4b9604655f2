// reader.batch_size held against the samples a pass of the program read. DLIO's loaders, and
// dlio's, drop an epoch's last partial batch: a batch fitted from pauses or bursts (a guess when
// readers run ahead of compute) that does not divide the epoch makes the emulation read fewer
// samples, and so fewer files and requests, than the program did. When that misses the program's
// samples per pass by more than 5%, the batch nearest the guess that reads them is taken.
#include <cstdlib>

#include "dlio/str_cat.h"
#include "profile/fit/fit_internal.h"

namespace dlio::fit {
namespace {

constexpr int64_t kSlackParts = 20;  // 1/20 = 5%: the request-count tolerance

// Samples an emulated epoch of `epoch` samples reads with batch `b`.
int64_t EmulatedSamples(int64_t epoch, int64_t b) { return epoch / b * b; }

bool Close(int64_t emulated, int64_t read) {
  return std::llabs(emulated - read) * kSlackParts <= read;
}

// The batch nearest `b` (the smaller of two as near) among the divisors of `read` whose epoch
// reads within 5% of `read` samples; 0 when none does. A loop that dropped its own last batch read
// a multiple of its batch, so its batch is among the divisors.
int64_t NearestKeepingBatch(int64_t epoch, int64_t read, int64_t b) {
  int64_t best = 0;
  auto consider = [&](int64_t x) {
    if (!Close(EmulatedSamples(epoch, x), read)) return;
    const int64_t d = std::llabs(x - b), best_d = std::llabs(best - b);
    if (best == 0 || d < best_d || (d == best_d && x < best)) best = x;
  };
  for (int64_t d = 1; d <= read / d; ++d) {
    if (read % d != 0) continue;
    consider(d);
    consider(read / d);
  }
  return best;
}

}  // namespace

void KeepPassReads(const View& view, int64_t per_access, FitResult* out) {
  const FitEntry* batch = out->Find("reader.batch_size");
  const FitEntry* files = out->Find("dataset.num_files_train");
  const FitEntry* samples = out->Find("dataset.num_samples_per_file");
  if (batch == nullptr || files == nullptr || samples == nullptr || !batch->inferred ||
      !files->inferred || !samples->inferred || view.world > 1 || view.epochs < 1) {
    return;
  }
  int64_t accesses = 0;
  for (const Access& a : view.accesses) accesses += IsTrain(view, a);
  const int64_t read = SaturatingMul(accesses, per_access) / view.epochs;  // per pass
  const int64_t epoch = SaturatingMul(EntryInt(files, 0), EntryInt(samples, 0));
  const int64_t b = EntryInt(batch, 0);
  if (b <= 0 || read <= 0 || epoch < read || Close(EmulatedSamples(epoch, b), read)) return;
  const int64_t keep = NearestKeepingBatch(epoch, read, b);
  if (keep == 0) return;
  for (FitEntry& e : out->entries) {  // the first entry of a key is the one written
    if (e.key != "reader.batch_size") continue;
    e.reason += StrCat("; ", b, " would read ", EmulatedSamples(epoch, b), " of the ", read,
                       " samples a pass read (an epoch's last partial batch is dropped): ", keep,
                       ", the nearest batch that reads them, keeps the request count");
    e.value = std::to_string(keep);
    e.confidence = FitConfidence::kLow;
    return;
  }
}

}  // namespace dlio::fit
