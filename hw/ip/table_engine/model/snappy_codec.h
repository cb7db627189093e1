// Snappy (the raw block format of google/snappy's format_description.txt), written as the engine's
// compressor and decompressor work:
// - compressor: greedy, one hash table of 16-bit positions per 64 KiB fragment, lookups spaced out
//   where matches are scarce; the same choices as libsnappy 1.1.9 (Debian 12's), so the same bytes:
//   a LevelDB table's block sizes, and so its file boundaries, do not depend on which side compressed;
// - decompressor: the whole format (literals, 1-, 2- and 4-byte-offset copies), every length and
//   offset checked against the declared size and the bytes produced so far.
#ifndef TABLE_ENGINE_SNAPPY_CODEC_H
#define TABLE_ENGINE_SNAPPY_CODEC_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace table_engine {
namespace snappy_codec {

struct Stats {
  uint64_t literal_bytes = 0, copies = 0, elements = 0;
  // Decompress: the elements' chunks of up to chunk_bytes (the RTL decompressor's output clocks).
  uint64_t chunk_bytes = 16, chunks = 0;
};

// Appends the compressed form of data[0, n) to *out.
void Compress(const uint8_t* data, size_t n, std::string* out, Stats* stats = nullptr);

// Decodes src[0, n) into *out (replacing it). Returns true on success; on failure *error_pos holds the
// offset in src of the element that does not decode and *why says what is wrong. Refuses a declared
// length above max_len before allocating.
bool Decompress(const uint8_t* src, size_t n, size_t max_len, std::string* out, size_t* error_pos,
                const char** why, Stats* stats = nullptr);

}  // namespace snappy_codec
}  // namespace table_engine

#endif
