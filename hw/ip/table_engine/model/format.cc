#include "format.h"

#include "coding.h"
#include "crc32c.h"
#include "cycle_work.h"
#include "error.h"
#include "limits.h"

namespace table_engine {

void BlockHandle::AppendTo(std::string* dst) const {
  AppendVarint64(dst, offset);
  AppendVarint64(dst, size);
}

BlockHandle DecodeIndexHandle(std::string_view value, const std::string& table, uint64_t entry_offset) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(value.data());
  const uint8_t* lim = p + value.size();
  BlockHandle h;
  p = ParseVarint64(p, lim, &h.offset);
  if (p != nullptr) p = ParseVarint64(p, lim, &h.size);
  if (p == nullptr)
    throw EngineError(ErrorCode::kBadVarint, table, entry_offset, "index entry's block handle varint runs past its value");
  return h;
}

std::string EncodeFooter(const BlockHandle& metaindex, const BlockHandle& index) {
  std::string f;
  metaindex.AppendTo(&f);
  index.AppendTo(&f);
  f.resize(kFooterBytes - 8, '\0');
  AppendFixed64(&f, kTableMagic);
  return f;
}

BlockHandle ReadFooter(const TableImage& t) {
  const size_t n = t.bytes.size();
  if (n < kFooterBytes)
    throw EngineError(ErrorCode::kTruncated, t.name, n,
                      "file of " + std::to_string(n) + " bytes is shorter than the 48-byte footer");
  const uint8_t* f = reinterpret_cast<const uint8_t*>(t.bytes.data()) + n - kFooterBytes;
  if (LoadFixed64(f + 40) != kTableMagic)
    throw EngineError(ErrorCode::kBadMagic, t.name, n - 8, "footer magic is not 0xdb4775248b80fb57");
  BlockHandle meta, index;
  const uint8_t* p = f;
  const uint8_t* lim = f + 40;
  for (uint64_t* v : {&meta.offset, &meta.size, &index.offset, &index.size}) {
    const uint8_t* q = ParseVarint64(p, lim, v);
    if (q == nullptr)
      throw EngineError(ErrorCode::kBadVarint, t.name, n - kFooterBytes + uint64_t(p - f),
                        "footer block handle varint runs past the footer's 40 bytes");
    p = q;
  }
  return index;
}

std::string_view ReadBlock(const TableImage& t, const BlockHandle& h, bool verify_crc, std::string* scratch,
                           BlockReadStats* stats, size_t max_decompressed) {
  const uint64_t n = t.bytes.size();
  if (h.offset > n || h.size > n - h.offset || kTrailerBytes > n - h.offset - h.size)
    throw EngineError(ErrorCode::kTruncated, t.name, h.offset < n ? h.offset : n,
                      "block at " + std::to_string(h.offset) + " of " + std::to_string(h.size) +
                          " bytes + trailer runs past the end of the file (" + std::to_string(n) + " bytes)");
  if (h.size > kMaxBlockBytes)
    throw EngineError(ErrorCode::kBadBlock, t.name, h.offset,
                      "block of " + std::to_string(h.size) + " bytes exceeds the engine's block buffer (" +
                          std::to_string(kMaxBlockBytes) + ")");
  const uint8_t* data = reinterpret_cast<const uint8_t*>(t.bytes.data()) + h.offset;
  const uint8_t type = data[h.size];
  if (stats) {
    stats->blocks++;
    stats->bytes += h.size + kTrailerBytes;
  }
  if (verify_crc) {
    uint32_t crc = crc32c::Extend(crc32c::Value(data, h.size), data + h.size, 1);
    uint32_t stored = crc32c::Unmask(LoadFixed32(data + h.size + 1));
    if (crc != stored)
      throw EngineError(ErrorCode::kBadCrc, t.name, h.offset,
                        "block CRC32C mismatch (block of " + std::to_string(h.size) + " bytes)");
  }
  if (type == kRawBlock) return std::string_view(reinterpret_cast<const char*>(data), h.size);
  if (type != kSnappyBlock)
    throw EngineError(ErrorCode::kBadBlock, t.name, h.offset + h.size,
                      "block type " + std::to_string(type) + " is neither raw (0) nor Snappy (1)");
  size_t at = 0;
  const char* why = "";
  snappy_codec::Stats st;
  st.chunk_bytes = cycle_model::kStreamBytes;
  if (!snappy_codec::Decompress(data, h.size, max_decompressed, scratch, &at, &why, &st))
    throw EngineError(ErrorCode::kBadSnappy, t.name, h.offset + at, std::string("Snappy block: ") + why);
  if (stats) {
    stats->snappy_blocks++;
    stats->snappy_in += h.size;
    stats->snappy_out += scratch->size();
    stats->elements += st.elements;
    stats->snappy_chunks += st.chunks;
  }
  return *scratch;
}

}  // namespace table_engine
