#include "table_writer.h"

#include "coding.h"
#include "crc32c.h"
#include "error.h"
#include "internal_key.h"
#include "limits.h"
#include "snappy_codec.h"

namespace table_engine {

TableWriter::TableWriter(const WriterOptions& opt, std::string name, WriteStats* stats)
    : opt_(opt), name_(std::move(name)), stats_(stats), data_(opt.restart_interval), index_(1) {
  if (opt_.bloom_bits_per_key > 0) filter_ = std::make_unique<FilterBlockBuilder>(opt_.bloom_bits_per_key);
  if (opt_.snappy && filter_) stats_->zip_serial = true;
}

void TableWriter::Append(std::string_view bytes) {
  if (bytes.size() > opt_.buffer_bytes - out_.size())
    throw EngineError(ErrorCode::kOutputFull, name_, out_.size(),
                      "output table would pass its buffer of " + std::to_string(opt_.buffer_bytes) + " bytes");
  out_.append(bytes);
}

void TableWriter::Add(std::string_view key, std::string_view value) {
  if (pending_index_) {
    ShortestSeparator(&last_key_, key);
    std::string h;
    pending_.AppendTo(&h);
    index_.Add(last_key_, h);
    pending_index_ = false;
  }
  if (filter_) filter_->AddKey(UserKey(key));
  last_key_.assign(key);
  entries_++;
  data_.Add(key, value);
  stats_->build.Entry(data_.last_shared(), key.size(), value.size());
  stats_->entries++;
  stats_->key_bytes += key.size();
  stats_->value_bytes += value.size();
  if (data_.SizeEstimate() >= opt_.block_size) Flush();
}

void TableWriter::Flush() {
  if (data_.empty()) return;
  const size_t restarts = data_.restarts();
  const std::string& contents = data_.Finish();
  stats_->build.Block(contents.size(), restarts);
  pending_ = WriteBlock(contents, true);
  data_.Reset();
  pending_index_ = true;
  if (filter_) filter_->StartBlock(out_.size());
}

BlockHandle TableWriter::WriteBlock(const std::string& raw, bool may_compress) {
  std::string_view contents = raw;
  uint8_t type = kRawBlock;
  stats_->blocks++;
  stats_->raw_bytes += raw.size();
  if (may_compress && opt_.snappy) {
    compressed_.clear();
    const bool big = raw.size() + kTrailerBytes > kZipBlockBytes;  // the RTL streams it raw (limits.h)
    snappy_codec::Compress(reinterpret_cast<const uint8_t*>(raw.data()), raw.size(), &compressed_,
                           big ? &stats_->big_compress : &stats_->compress);
    stats_->compressor_in += raw.size();
    stats_->zip_blocks++;
    stats_->compressor_out += compressed_.size();
    const bool kept = compressed_.size() < raw.size() - raw.size() / 8;
    if (big) {
      if (opt_.zip_block_bytes != 0 && raw.size() + kTrailerBytes > opt_.zip_block_bytes &&
          (kept || raw.size() > kMaxBlockBytes))
        throw EngineError(ErrorCode::kOutputFull, name_, out_.size(),
                          "a block of " + std::to_string(raw.size()) + " bytes past the " +
                              std::to_string(opt_.zip_block_bytes) + "-byte block buffer " +
                              (kept ? "that Snappy would store compressed" : "and the engine's largest block"));
      stats_->big_blocks++;
      stats_->big_raw += raw.size();
    }
    if (kept) {
      contents = compressed_;
      type = kSnappyBlock;
      stats_->snappy_kept++;
    }
    if (!big) stats_->zip_stored += contents.size() + kTrailerBytes;
  }
  BlockHandle h{out_.size(), contents.size()};
  char trailer[kTrailerBytes];
  trailer[0] = char(type);
  uint32_t crc = crc32c::Extend(crc32c::Value(reinterpret_cast<const uint8_t*>(contents.data()), contents.size()),
                                &type, 1);
  uint32_t m = crc32c::Mask(crc);
  for (int i = 0; i < 4; i++) trailer[1 + i] = char(m >> (8 * i));
  Append(contents);
  Append(std::string_view(trailer, kTrailerBytes));
  return h;
}

std::string TableWriter::Finish() {
  Flush();
  const uint64_t data_end = out_.size();  // what follows is the table's close: filter, metaindex, index, footer
  BlockHandle filter_handle, meta_handle, index_handle;
  if (filter_) filter_handle = WriteBlock(filter_->Finish(), false);
  BlockBuilder meta(opt_.restart_interval);
  if (filter_) {
    std::string h;
    filter_handle.AppendTo(&h);
    meta.Add(std::string("filter.") + kBloomPolicyName, h);
  }
  meta_handle = WriteBlock(meta.Finish(), true);
  if (pending_index_) {
    ShortSuccessor(&last_key_);
    std::string h;
    pending_.AppendTo(&h);
    index_.Add(last_key_, h);
    pending_index_ = false;
  }
  index_handle = WriteBlock(index_.Finish(), true);
  Append(EncodeFooter(meta_handle, index_handle));
  stats_->close_bytes += out_.size() - data_end;
  return std::move(out_);
}

}  // namespace table_engine
