// reader.io_model: tarfile_index. What CPython 3.11's tarfile sends to the file system for random
// access into an uncompressed archive, `t = tarfile.open(path)` (mode "r:*") once, then
// `t.extractfile(name).read()` per member (Lib/tarfile.py; docs/io_models.md, "tarfile_index"):
//
// - open tries the compressed methods first, in the order gz, bz2, xz: each opens the path with
//   open(path, "rb") (open, fstat), reads the magic through Python's buffered file (gzip's
//   read(2), one fill of the buffer; bz2's and lzma's read(8192), _compression.BUFFER_SIZE),
//   fails and closes it;
// - taropen opens the path once more and TarFile reads the first header (read(512): a fill);
// - the first extractfile (getmember) loads the index (TarFile.next until the end): before each
//   later header, when the previous member's data lies between (tarfile.offset != tell()),
//   seek(offset - 1) and read(1), tarfile's check that the data is there; then read(512); a pax
//   or GNU long-name header reads its data (read of the padded size) and the next header at once;
//   the zero block ends the archive;
// - extractfile(name).read() is seek(data offset) and read(size) through the same buffered file
//   (ExFileObject's readall calls _FileInFile.read() once).
//
// The same buffered file serves all of them (a BufferedReader of st_blksize, 4096 on local file
// systems): reads that fall inside its buffer reach no storage, as in CPython. A sample is the
// members sharing a WebDataset key, consecutive in the archive (the webdataset reader's
// grouping), each extracted in archive order; members without a key are indexed and never read.
// Held request by request against CPython under the preload tracer (tarfile_index_test).
#pragma once

#include <memory>
#include <string>

#include "dlio/format.h"
#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio::io_models {

// Opens `path` as tarfile.open(path) does and loads its member index (as the first extractfile
// does). options.samples_per_file > 0 is the samples the archive must hold at least (Corruption
// naming the file when it holds fewer); 0 takes the index's count. Under reader.client_costs
// framework each member's read returns a new bytes object, copied into the sample; else the
// member lands in the sample directly, with the same requests.
Result<std::unique_ptr<FormatReader>> OpenTarfileIndexReader(Storage* storage,
                                                             const std::string& path,
                                                             const FormatOptions& options);

}  // namespace dlio::io_models
