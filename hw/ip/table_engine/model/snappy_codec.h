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
  // Compress, what rtl/SnappyCompressor.scala spends clocks on (cycle_model::CompressCycles): fragments and
  // their load beats of chunk_bytes; the scanner's ops (a lookup, the entry of a copy's end - 1, the end of
  // the scan: one a clock) and its runs (each ends at a match or the fragment's end: the pipeline's 3 clocks
  // to the compare); literals (a tag clock) and their chunks; per match its extension (the first read, then
  // a compare of chunk_bytes a clock until a difference) and a clock per copy element.
  uint64_t fragments = 0, load_beats = 0, scan_ops = 0, scan_runs = 0, literals = 0, literal_chunks = 0,
           extend_beats = 0, copy_elements = 0;
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
