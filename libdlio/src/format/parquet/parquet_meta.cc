#include "format/parquet/parquet_meta.h"

#include "format/parquet/thrift_compact.h"

namespace dlio::format_internal::parquet {
namespace {

using thrift::Field;
using thrift::Reader;
using thrift::Writer;

// --- encoding ---------------------------------------------------------------------------------

void PutSchemaElement(Writer* w, const SchemaElement& e) {
  w->BeginListStruct();
  if (e.type >= 0) w->I32(1, e.type);
  if (e.type == kFixedLenByteArray) w->I32(2, e.type_length);
  if (e.repetition >= 0) w->I32(3, e.repetition);
  w->Binary(4, e.name);
  if (e.num_children > 0) w->I32(5, e.num_children);
  if (e.converted_type >= 0) w->I32(6, e.converted_type);
  if (e.logical != kNoLogical) {
    w->BeginStruct(10);
    w->BeginStruct(static_cast<int16_t>(e.logical));
    if (e.logical == kLogicalInteger) {
      w->Byte(1, e.int_bits);
      w->Bool(2, e.int_signed);
    }
    w->EndStruct();
    w->EndStruct();
  }
  w->EndStruct();
}

void PutColumnChunk(Writer* w, const ColumnChunk& c) {
  const ColumnMetaData& m = c.meta;
  w->BeginListStruct();
  w->I64(2, c.file_offset);
  w->BeginStruct(3);
  w->I32(1, m.type);
  w->BeginList(2, thrift::kI32, m.encodings.size());
  for (int32_t e : m.encodings) w->ListI32(e);
  w->BeginList(3, thrift::kBinary, m.path.size());
  for (const std::string& p : m.path) w->ListBinary(p);
  w->I32(4, m.codec);
  w->I64(5, m.num_values);
  w->I64(6, m.total_uncompressed_size);
  w->I64(7, m.total_compressed_size);
  w->I64(9, m.data_page_offset);
  if (m.dictionary_page_offset >= 0) w->I64(11, m.dictionary_page_offset);
  w->EndStruct();
  w->EndStruct();
}

}  // namespace

std::string EncodeFileMetaData(const FileMetaData& m) {
  Writer w;
  w.I32(1, m.version);
  w.BeginList(2, thrift::kStruct, m.schema.size());
  for (const SchemaElement& e : m.schema) PutSchemaElement(&w, e);
  w.I64(3, m.num_rows);
  w.BeginList(4, thrift::kStruct, m.row_groups.size());
  for (const RowGroup& g : m.row_groups) {
    w.BeginListStruct();
    w.BeginList(1, thrift::kStruct, g.columns.size());
    for (const ColumnChunk& c : g.columns) PutColumnChunk(&w, c);
    w.I64(2, g.total_byte_size);
    w.I64(3, g.num_rows);
    w.EndStruct();
  }
  if (!m.created_by.empty()) w.Binary(6, m.created_by);
  w.Finish();
  return w.bytes();
}

std::string EncodePageHeader(const PageHeader& h) {
  Writer w;
  w.I32(1, h.type);
  w.I32(2, h.uncompressed_size);
  w.I32(3, h.compressed_size);
  if (h.type == kDataPage) {
    w.BeginStruct(5);
    w.I32(1, h.num_values);
    w.I32(2, h.encoding);
    w.I32(3, kRle);  // definition levels (none for required columns)
    w.I32(4, kRle);  // repetition levels (none)
    w.EndStruct();
  } else if (h.type == kDictionaryPage) {
    w.BeginStruct(7);
    w.I32(1, h.num_values);
    w.I32(2, h.encoding);
    w.EndStruct();
  }
  w.Finish();
  return w.bytes();
}

// --- decoding ---------------------------------------------------------------------------------

namespace {

// Reads field f's integer into *out; true (the field was used) or the decoding error.
Result<bool> Take(Reader* r, const Field& f, int32_t* out) {
  DLIO_ASSIGN_OR_RETURN(*out, r->I32(f.type));
  return true;
}
Result<bool> Take(Reader* r, const Field& f, int64_t* out) {
  DLIO_ASSIGN_OR_RETURN(*out, r->Int(f.type));
  return true;
}

// Reads a struct value with `on_field` called for each field (which must consume it or return
// false to have it skipped).
template <typename F>
Status ReadStruct(Reader* r, F on_field) {
  DLIO_RETURN_NOT_OK(r->BeginStruct());
  for (;;) {
    DLIO_ASSIGN_OR_RETURN(Field f, r->NextField());
    if (f.type == thrift::kStop) return Status::OK();
    DLIO_ASSIGN_OR_RETURN(bool used, on_field(f));
    if (!used) DLIO_RETURN_NOT_OK(r->Skip(f.type));
  }
}

// A list of structs, each read by `on_elem`.
template <typename F>
Status ReadStructList(Reader* r, const Field& f, const char* what, F on_elem) {
  if (f.type != thrift::kList) return r->Error(std::string(what) + " is not a list");
  DLIO_ASSIGN_OR_RETURN(thrift::List l, r->BeginList());
  if (l.elem != thrift::kStruct) return r->Error(std::string(what) + " holds no structs");
  for (uint64_t i = 0; i < l.size; ++i) DLIO_RETURN_NOT_OK(on_elem());
  return Status::OK();
}

Status ReadLogical(Reader* r, SchemaElement* e) {
  return ReadStruct(r, [&](const Field& f) -> Result<bool> {
    if (f.type != thrift::kStruct) return false;
    if (f.id != kLogicalInteger && f.id != kLogicalFloat16) return false;
    e->logical = f.id;
    DLIO_RETURN_NOT_OK(ReadStruct(r, [&](const Field& g) -> Result<bool> {
      if (e->logical != kLogicalInteger) return false;
      if (g.id == 1) {
        DLIO_ASSIGN_OR_RETURN(int64_t bits, r->Int(g.type));
        e->int_bits = static_cast<int8_t>(bits);
        return true;
      }
      if (g.id == 2 && (g.type == thrift::kTrue || g.type == thrift::kFalse)) {
        e->int_signed = g.type == thrift::kTrue;
        return true;
      }
      return false;
    }));
    return true;
  });
}

Status ReadSchemaElement(Reader* r, SchemaElement* e) {
  bool named = false;
  DLIO_RETURN_NOT_OK(ReadStruct(r, [&](const Field& f) -> Result<bool> {
    switch (f.id) {
      case 1:
        return Take(r, f, &e->type);
      case 2:
        return Take(r, f, &e->type_length);
      case 3:
        return Take(r, f, &e->repetition);
      case 4: {
        if (f.type != thrift::kBinary) return false;
        DLIO_ASSIGN_OR_RETURN(e->name, r->Binary());
        named = true;
        return true;
      }
      case 5:
        return Take(r, f, &e->num_children);
      case 6:
        return Take(r, f, &e->converted_type);
      case 10:
        if (f.type != thrift::kStruct) return false;
        DLIO_RETURN_NOT_OK(ReadLogical(r, e));
        return true;
      default:
        return false;
    }
  }));
  if (!named) return r->Error("schema element without a name");
  return Status::OK();
}

Status ReadColumnMeta(Reader* r, ColumnMetaData* m) {
  return ReadStruct(r, [&](const Field& f) -> Result<bool> {
    switch (f.id) {
      case 1:
        return Take(r, f, &m->type);
      case 2: {
        if (f.type != thrift::kList) return false;
        DLIO_ASSIGN_OR_RETURN(thrift::List l, r->BeginList());
        for (uint64_t i = 0; i < l.size; ++i) {
          DLIO_ASSIGN_OR_RETURN(int32_t e, r->I32(l.elem));
          m->encodings.push_back(e);
        }
        return true;
      }
      case 3: {
        if (f.type != thrift::kList) return false;
        DLIO_ASSIGN_OR_RETURN(thrift::List l, r->BeginList());
        if (l.elem != thrift::kBinary) return r->Error("path_in_schema holds no strings");
        for (uint64_t i = 0; i < l.size; ++i) {
          DLIO_ASSIGN_OR_RETURN(std::string p, r->Binary());
          m->path.push_back(std::move(p));
        }
        return true;
      }
      case 4:
        return Take(r, f, &m->codec);
      case 5:
        return Take(r, f, &m->num_values);
      case 6:
        return Take(r, f, &m->total_uncompressed_size);
      case 7:
        return Take(r, f, &m->total_compressed_size);
      case 9:
        return Take(r, f, &m->data_page_offset);
      case 11:
        return Take(r, f, &m->dictionary_page_offset);
      default:
        return false;
    }
  });
}

Status ReadColumnChunk(Reader* r, ColumnChunk* c) {
  return ReadStruct(r, [&](const Field& f) -> Result<bool> {
    if (f.id == 2) {
      return Take(r, f, &c->file_offset);
      return true;
    }
    if (f.id == 3 && f.type == thrift::kStruct) {
      c->has_meta = true;
      DLIO_RETURN_NOT_OK(ReadColumnMeta(r, &c->meta));
      return true;
    }
    return false;
  });
}

Status ReadRowGroup(Reader* r, RowGroup* g) {
  return ReadStruct(r, [&](const Field& f) -> Result<bool> {
    switch (f.id) {
      case 1:
        DLIO_RETURN_NOT_OK(ReadStructList(r, f, "RowGroup.columns", [&]() {
          g->columns.emplace_back();
          return ReadColumnChunk(r, &g->columns.back());
        }));
        return true;
      case 2:
        return Take(r, f, &g->total_byte_size);
      case 3:
        return Take(r, f, &g->num_rows);
      default:
        return false;
    }
  });
}

Status ReadDataPageHeader(Reader* r, bool v2, PageHeader* h) {
  h->has_data_header = true;
  return ReadStruct(r, [&](const Field& f) -> Result<bool> {
    const int id = f.id;
    if (id == 1)
      return Take(r, f, &h->num_values);
    else if (!v2 && id == 2)
      return Take(r, f, &h->encoding);
    else if (v2 && id == 2)
      return Take(r, f, &h->num_nulls);
    else if (v2 && id == 4)
      return Take(r, f, &h->encoding);
    else if (v2 && id == 5)
      return Take(r, f, &h->def_levels_bytes);
    else if (v2 && id == 6)
      return Take(r, f, &h->rep_levels_bytes);
    else if (v2 && id == 7 && (f.type == thrift::kTrue || f.type == thrift::kFalse))
      h->v2_compressed = f.type == thrift::kTrue;
    else
      return false;
    return true;
  });
}

}  // namespace

Result<FileMetaData> DecodeFileMetaData(const uint8_t* data, size_t n, const std::string& path,
                                        uint64_t base) {
  Reader r(data, n, path, base);
  FileMetaData m;
  DLIO_RETURN_NOT_OK(ReadStruct(&r, [&](const Field& f) -> Result<bool> {
    switch (f.id) {
      case 1:
        return Take(&r, f, &m.version);
      case 2:
        DLIO_RETURN_NOT_OK(ReadStructList(&r, f, "FileMetaData.schema", [&]() {
          m.schema.emplace_back();
          return ReadSchemaElement(&r, &m.schema.back());
        }));
        return true;
      case 3:
        return Take(&r, f, &m.num_rows);
      case 4:
        DLIO_RETURN_NOT_OK(ReadStructList(&r, f, "FileMetaData.row_groups", [&]() {
          m.row_groups.emplace_back();
          return ReadRowGroup(&r, &m.row_groups.back());
        }));
        return true;
      case 6: {
        if (f.type != thrift::kBinary) return false;
        DLIO_ASSIGN_OR_RETURN(m.created_by, r.Binary());
        return true;
      }
      default:
        return false;
    }
  }));
  if (m.schema.empty()) return r.Error("footer without a schema");
  return m;
}

Result<PageHeader> DecodePageHeader(const uint8_t* data, size_t n, const std::string& path,
                                    uint64_t base, size_t* consumed) {
  Reader r(data, n, path, base);
  PageHeader h;
  DLIO_RETURN_NOT_OK(ReadStruct(&r, [&](const Field& f) -> Result<bool> {
    switch (f.id) {
      case 1:
        return Take(&r, f, &h.type);
      case 2:
        return Take(&r, f, &h.uncompressed_size);
      case 3:
        return Take(&r, f, &h.compressed_size);
      case 5:  // DataPageHeader
      case 7:  // DictionaryPageHeader: num_values and encoding are its fields 1 and 2 too
      case 8:  // DataPageHeaderV2
        if (f.type != thrift::kStruct) return false;
        DLIO_RETURN_NOT_OK(ReadDataPageHeader(&r, f.id == 8, &h));
        return true;
      default:
        return false;
    }
  }));
  if (h.compressed_size < 0 || h.uncompressed_size < 0) {
    return r.Error("page header with a negative size");
  }
  *consumed = r.consumed();
  return h;
}

}  // namespace dlio::format_internal::parquet
