// The table file's framing: block handles, the 48-byte footer, and a block with its 5-byte trailer
// (type byte: 0 raw, 1 Snappy; masked CRC32C over contents and type).
#ifndef TABLE_ENGINE_FORMAT_H
#define TABLE_ENGINE_FORMAT_H

#include <cstdint>
#include <string>
#include <string_view>

#include "limits.h"
#include "snappy_codec.h"

namespace table_engine {

constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;
constexpr size_t kFooterBytes = 48;
constexpr size_t kTrailerBytes = 5;
enum BlockType : uint8_t { kRawBlock = 0, kSnappyBlock = 1 };

struct BlockHandle {
  uint64_t offset = 0, size = 0;
  void AppendTo(std::string* dst) const;
};

std::string EncodeFooter(const BlockHandle& metaindex, const BlockHandle& index);

// An index entry's value: the data block's handle (two varint64s). BAD_VARINT at `entry_offset` of table
// `table` when they run past the value.
BlockHandle DecodeIndexHandle(std::string_view value, const std::string& table, uint64_t entry_offset);

// A table in memory (the DDR image the host placed) and the name errors give it.
struct TableImage {
  std::string name;
  std::string_view bytes;
};

// Footer: magic checked, the index handle decoded (BAD_MAGIC, TRUNCATED, BAD_VARINT).
BlockHandle ReadFooter(const TableImage& t);

// What one block read cost, for the cycle estimate.
struct BlockReadStats {
  uint64_t blocks = 0, bytes = 0, snappy_blocks = 0, snappy_in = 0, snappy_out = 0, elements = 0;
  uint64_t snappy_chunks = 0;  // the elements' W-byte chunks (cycle_work.h's kStreamBytes)
};

// One block's contents: a view into the image (raw) or into *scratch (decompressed). TRUNCATED when
// the handle points past the file, BAD_CRC, BAD_BLOCK (type, size), BAD_SNAPPY (a raw length above
// max_decompressed among them: the RTL table reader's on-chip block buffer is smaller than the model's).
std::string_view ReadBlock(const TableImage& t, const BlockHandle& h, bool verify_crc, std::string* scratch,
                           BlockReadStats* stats, size_t max_decompressed = kMaxBlockBytes);

}  // namespace table_engine

#endif
