// What the stages that have RTL do, counted in the beats their pipelines spend clocks on: the reading
// and writing paths count it as they go, cycle_model.cc turns it into cycles (doc/model.md, doc/calibration.md).
// Header-only: the read and write paths include it without depending on the estimate.
#ifndef TABLE_ENGINE_CYCLE_WORK_H
#define TABLE_ENGINE_CYCLE_WORK_H

#include <cstdint>

namespace table_engine {
namespace cycle_model {

constexpr uint64_t kStreamBytes = 16;  // bytes per clock on every stream (the RTL's W, Generate --bytes)

inline uint64_t Beats(uint64_t bytes) { return (bytes + kStreamBytes - 1) / kStreamBytes; }

// The entry decoder of rtl/BlockReader.scala, per data block (its clocks per entry, doc/rtl.md "Decoder
// states"): a header clock unless the three varints were decoded with the previous entry's last value
// beat; the non-shared key bytes into the key RAM, one W-byte write a clock (at least one clock, the
// header checks); the key read back word by word, one more when the read-ahead was blocked (the last
// write was to word 0); the value in W-byte beats. After the entries: the restart array, count and
// trailer drained at W bytes a clock.
struct DecodeWork {
  uint64_t blocks = 0, entries = 0, header_clocks = 0, key_write_beats = 0, key_read_beats = 0, value_beats = 0,
           drain_beats = 0, bytes = 0;
  bool value_pending_ = false;  // the previous entry of this block ended with a value beat

  void Block(uint64_t contents_bytes, uint64_t restarts) {
    blocks++;
    drain_beats += Beats(4 * restarts + 4 + 5);
    bytes += contents_bytes + 5;
    value_pending_ = false;
  }
  void Entry(uint64_t shared, uint64_t non_shared, uint64_t value_bytes) {
    entries++;
    header_clocks += value_pending_ ? 0 : 1;
    const uint64_t writes = non_shared ? Beats(non_shared) : 1;
    key_write_beats += writes;
    const bool blocked = non_shared != 0 && writes == 1 && shared < kStreamBytes;
    key_read_beats += Beats(shared + non_shared) + (blocked ? 1 : 0);
    value_beats += Beats(value_bytes);
    value_pending_ = value_bytes != 0;
  }
};

// The merge stage of rtl/Merger.scala, per merged entry: its key and its value in beats of the stage's own width,
// W (kStreamBytes) or 2W (the wider stage, MergeConfig's bytes twice its ports', doc/merge.md). Index: the width's
// log2 over W (0: W, 1: 2W).
constexpr int kMergeWidths = 2;
struct MergeWork {
  uint64_t entries = 0, key_beats[kMergeWidths] = {}, value_beats[kMergeWidths] = {};

  void Entry(uint64_t key_bytes, uint64_t value_bytes) {
    entries++;
    for (int i = 0; i < kMergeWidths; i++) {
      const uint64_t w = kStreamBytes << i;
      key_beats[i] += (key_bytes + w - 1) / w;
      value_beats[i] += (value_bytes + w - 1) / w;
    }
  }
};

// The Snappy decompressor of rtl/SnappyDecompressor.scala: one element's chunks of up to W bytes, one a
// clock, the first in the tag's clock; per block the raw-length varint, the final chunk and the status.
struct DecompressWork {
  uint64_t blocks = 0, elements = 0, chunks = 0, bytes_in = 0, bytes_out = 0;
};

// The block builder of rtl/BlockBuilder.scala, per data block: the HEAD beat; the key's beats (compared
// with the previous key, the header pushed with the last); the non-shared bytes out of the key RAM from
// the word holding the first of them; the value's beats. Per block: FLUSH, one clock per restart offset,
// count, type, CRC and the status once the packer has drained.
struct BuildWork {
  uint64_t blocks = 0, entries = 0, key_beats = 0, key_out_beats = 0, value_beats = 0, restarts = 0, bytes = 0;

  void Entry(uint64_t shared, uint64_t key_bytes, uint64_t value_bytes) {
    entries++;
    key_beats += key_bytes ? Beats(key_bytes) : 1;
    if (key_bytes != shared) key_out_beats += Beats(key_bytes) - shared / kStreamBytes;
    value_beats += Beats(value_bytes);
  }
  void Block(uint64_t contents_bytes, uint64_t restart_count) {
    blocks++;
    restarts += restart_count;
    bytes += contents_bytes + 5;
  }
};

}  // namespace cycle_model
}  // namespace table_engine

#endif
