// Write side: one output table as LevelDB's TableBuilder lays it out. Data blocks close when the
// block's size estimate reaches block_size after an entry; the index entry of a block is written when
// the next block's first key is known (shortest separator) or at the end (short successor); a filter
// block when bloom_bits_per_key > 0; metaindex; index; footer. Every block but the filter block is
// Snappy-compressed when asked and kept so only when that saves at least 1/8; trailers carry the
// masked CRC32C. The table grows in an output buffer of fixed capacity (OUTPUT_FULL past it).
#ifndef TABLE_ENGINE_TABLE_WRITER_H
#define TABLE_ENGINE_TABLE_WRITER_H

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "block_builder.h"
#include "cycle_work.h"
#include "filter_block.h"
#include "format.h"
#include "snappy_codec.h"

namespace table_engine {

struct WriterOptions {
  uint64_t block_size = 4096;
  int restart_interval = 16;
  bool snappy = false;
  int bloom_bits_per_key = 0;
  uint64_t buffer_bytes = 0;  // the output buffer's capacity
  // The RTL writer's block buffer (kZipBlockBytes) when the model stands for the RTL (its harnesses, table_model
  // --zip-block-bytes): a Snappy block past it that LevelDB would store compressed is OUTPUT_FULL, as there.
  // 0: no such limit, LevelDB's TableBuilder (the model as LevelDB's back end, tables made for the readers).
  uint64_t zip_block_bytes = 0;
};

struct WriteStats {
  uint64_t blocks = 0, raw_bytes = 0, compressor_in = 0, compressor_out = 0, snappy_kept = 0, entries = 0,
           key_bytes = 0, value_bytes = 0;
  cycle_model::BuildWork build;  // the data blocks' building (index, metaindex, filter: a table-close cost)
  // The blocks through the compressor lanes (Snappy jobs): the compressor's work, the stored bytes the lanes
  // send on (trailers included), and whether the writer waits for each block's size (a filter's offsets).
  snappy_codec::Stats compress;
  uint64_t zip_blocks = 0, zip_stored = 0;
  // Big blocks (past kZipBlockBytes, streamed out raw while their lane counts their Snappy form behind them): the
  // compressor's work on them, their number and raw bytes (not in zip_stored: they leave as they come).
  snappy_codec::Stats big_compress;
  uint64_t big_blocks = 0, big_raw = 0;
  bool zip_serial = false;
  // The tables' closes: filter, metaindex and index blocks (as stored, trailers included) and footers, which the
  // writer sends after a table's last data block while the pipeline waits (doc/model.md "A table's close").
  uint64_t close_bytes = 0;
};

class TableWriter {
 public:
  TableWriter(const WriterOptions& opt, std::string name, WriteStats* stats);
  void Add(std::string_view key, std::string_view value);
  uint64_t FileSize() const { return out_.size(); }  // bytes of the blocks written so far
  uint64_t entries() const { return entries_; }
  // Writes filter, metaindex, index and footer; returns the table's bytes.
  std::string Finish();

 private:
  void Flush();
  BlockHandle WriteBlock(const std::string& contents, bool may_compress);
  void Append(std::string_view bytes);
  WriterOptions opt_;
  std::string name_;
  WriteStats* stats_;
  std::string out_, last_key_, compressed_;
  BlockBuilder data_, index_;
  std::unique_ptr<FilterBlockBuilder> filter_;
  BlockHandle pending_;
  bool pending_index_ = false;
  uint64_t entries_ = 0;
};

}  // namespace table_engine

#endif
