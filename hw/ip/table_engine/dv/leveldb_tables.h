// Tables written by LevelDB's own TableBuilder (Debian's libleveldb) for the table engine's harnesses, and
// their data blocks located the way a reader finds them: footer, then index block (the model's code).
#pragma once

#include <leveldb/env.h>
#include <leveldb/options.h>
#include <leveldb/table_builder.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "args.h"
#include "block_reader.h"
#include "coding.h"
#include "crc32c.h"
#include "error.h"
#include "format.h"
#include "limits.h"

namespace te_dv {

// A scratch file for one harness process: $TMPDIR (or /tmp)/<tag>.<pid>.ldb.
inline std::string ScratchTablePath(const std::string& tag) {
  const char* dir = getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/" + tag + "." + std::to_string(getpid()) + ".ldb";
}

// The bytes of a table TableBuilder writes from `keys` (sorted) with `value()` called once per key, in
// order; the file at `path` is removed again. Any LevelDB error ends the harness with its message.
inline std::string WriteLevelDbTable(const leveldb::Options& opt, const std::vector<std::string>& keys,
                                     const std::function<std::string()>& value, const std::string& path) {
  leveldb::WritableFile* file = nullptr;
  leveldb::Status st = leveldb::Env::Default()->NewWritableFile(path, &file);
  if (!st.ok()) simc::die("LevelDB table %s: %s", path.c_str(), st.ToString().c_str());
  {
    leveldb::TableBuilder b(opt, file);
    for (auto& k : keys) b.Add(k, value());
    st = b.Finish();
  }
  if (st.ok()) st = file->Close();
  delete file;
  std::string bytes;
  if (st.ok()) st = leveldb::ReadFileToString(leveldb::Env::Default(), path, &bytes);
  unlink(path.c_str());
  if (!st.ok()) simc::die("LevelDB table %s: %s", path.c_str(), st.ToString().c_str());
  return bytes;
}

// The handles of a table's data blocks, in index order (each block's contents; its trailer follows).
inline std::vector<table_engine::BlockHandle> DataBlockHandles(const table_engine::TableImage& img) {
  namespace te = table_engine;
  te::BlockHandle ih = te::ReadFooter(img);
  std::string scratch;
  std::string_view index = te::ReadBlock(img, ih, true, &scratch, nullptr);
  te::BlockReader ir;
  ir.Start(index, &img.name, ih.offset, false, te::kMaxInternalKeyBytes + 1);
  std::vector<te::BlockHandle> out;
  while (ir.Next()) {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(ir.value().data());
    const uint8_t* end = p + ir.value().size();
    uint64_t off = 0, size = 0;
    p = te::ParseVarint64(p, end, &off);
    if (p) p = te::ParseVarint64(p, end, &size);
    if (!p || off + size + te::kTrailerBytes > img.bytes.size()) simc::die("LevelDB table: bad index entry");
    out.push_back(te::BlockHandle{off, size});
  }
  return out;
}

// A block's contents with the trailer of a raw block (type 0, masked CRC32C over contents and type), as
// TableBuilder::WriteRawBlock writes it with no compression.
inline std::string WithRawTrailer(std::string contents) {
  contents.push_back(char(table_engine::kRawBlock));
  const uint32_t crc = table_engine::crc32c::Mask(
      table_engine::crc32c::Value(reinterpret_cast<const uint8_t*>(contents.data()), contents.size()));
  for (int i = 0; i < 4; i++) contents.push_back(char(crc >> (8 * i)));
  return contents;
}

// A table file's blocks for a timing run (`--table PATH` of the harnesses): each data block in index
// order, and with `withIndex` the index block first, as the engine's read path meets them. `type` is
// the trailer's (0 raw, 1 Snappy); `stored` the contents as in the file, `contents` as the entry decoder
// sees them (decompressed by the model). Any malformation ends the harness naming the file.
struct TableBlock {
  table_engine::BlockHandle handle;
  int type = 0;
  std::string stored, contents;
};

inline std::vector<TableBlock> ReadTableBlocks(const std::string& path, bool withIndex) {
  namespace te = table_engine;
  const std::vector<uint8_t> f = simc::readFile(path, "--table");
  const std::string bytes(f.begin(), f.end());
  te::TableImage img{path, bytes};
  std::vector<TableBlock> out;
  try {
    std::vector<te::BlockHandle> handles;
    if (withIndex) handles.push_back(te::ReadFooter(img));
    for (const te::BlockHandle& h : DataBlockHandles(img)) handles.push_back(h);
    for (const te::BlockHandle& h : handles) {
      TableBlock b;
      b.handle = h;
      b.type = uint8_t(bytes[h.offset + h.size]);
      b.stored = bytes.substr(h.offset, h.size);
      std::string scratch;
      b.contents = std::string(te::ReadBlock(img, h, true, &scratch, nullptr));
      out.push_back(std::move(b));
    }
  } catch (const te::EngineError& e) {
    simc::die("--table %s: %s", path.c_str(), e.what());
  }
  return out;
}

}  // namespace te_dv
