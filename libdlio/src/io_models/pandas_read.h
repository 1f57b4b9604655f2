// reader.io_model: pandas. The requests `pandas.read_csv(path)` sends to the file system (pandas
// 1.5.3 with its C parser, CPython 3.11's io module; docs/io_models.md, section pandas):
//
// read_csv opens the file with `open(path, "r", encoding="utf-8", newline="")`, a TextIOWrapper
// over a BufferedReader, and its tokenizer calls `handle.read(262144)` (characters) until it
// returns "". TextIOWrapper.read(n) takes what it has decoded already, then reads chunks with
// `buffer.read1(max(8192, int(max(b2c, 1.0) * remaining)))`, where b2c is the bytes-per-character
// ratio of the previous chunk; with the BufferedReader's buffer always empty, each read1 is one
// read(2) of exactly that size. Its UTF-8 decoder holds back an incomplete multi-byte sequence and
// its newline decoder a chunk's last '\r', so characters and bytes part when a file has them.
#pragma once

#include <cstdint>
#include <vector>

#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio::format_internal {

// The characters pandas' C tokenizer asks for per read (parsers.pyx DEFAULT_CHUNKSIZE).
inline constexpr uint64_t kPandasChunkChars = 262144;
// TextIOWrapper's minimum chunk (io.DEFAULT_BUFFER_SIZE, _CHUNK_SIZE in textio.c).
inline constexpr uint64_t kTextChunkBytes = 8192;

// Reads the whole of `file` into `out` from offset 0 with the read requests read_csv issues, the
// final empty reads at the end of the file included. Does not open, stat or close the file.
// `python_bytes` (reader.client_costs framework): each read lands in a new bytes object, as
// CPython's read1 reads, and is copied into `out`; otherwise straight into `out`, whose pages
// were touched before the read (the vector's resize zero-fills them), so no read waits for
// fresh pages. Errors: the storage's, naming the file.
Status ReadLikePandas(File* file, std::vector<char>* out, bool python_bytes);

}  // namespace dlio::format_internal
