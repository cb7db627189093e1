#include "cycle_model.h"

namespace table_engine {
namespace cycle_model {

static uint64_t Div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

Estimate EstimateJob(const CompactionResult& r, size_t runs, size_t tables_in, int ways, bool verify) {
  Estimate e;
  const ReadStats& rd = r.read;
  const WriteStats& wr = r.write;
  auto stage = [&](const char* name, uint64_t c) { e.stages.emplace_back(name, c); };
  stage("read_dma", Div(rd.blocks.bytes, kStreamBytes));
  stage("crc_check", verify ? Div(rd.blocks.bytes, kStreamBytes) : 0);
  stage("decompress", std::max(Div(rd.blocks.snappy_out, kSnappyDecodeBytes), rd.blocks.elements));
  stage("entry_decode", std::max(rd.entries, Div(rd.entry_bytes, kStreamBytes)));
  stage("merge", std::max(r.entries_in, r.merge_key_beats));
  stage("drop", r.entries_in);
  stage("block_build", std::max(wr.entries, Div(wr.raw_bytes, kStreamBytes)));
  stage("compress", Div(wr.compressor_in, kCompressors * kCompressBytesPerLane));
  stage("crc_out", Div(r.bytes_out, kStreamBytes));
  stage("write_dma", Div(r.bytes_out, kStreamBytes));
  for (const auto& s : e.stages) e.pipeline = std::max(e.pipeline, s.second);
  e.overhead = (rd.blocks.blocks + wr.blocks) * kBlockOverheadCycles + tables_in * kTableOpenCycles +
               r.tables.size() * kTableCloseCycles + kJobOverheadCycles;
  // More runs than ways: every pass but the last writes temporary tables (raw entries) and reads them
  // back, one entry per clock at least.
  uint64_t groups = runs;
  e.passes = 1;
  while (groups > uint64_t(ways)) {
    groups = Div(groups, uint64_t(ways));
    e.passes++;
  }
  e.cascade = (e.passes - 1) * std::max(r.entries_in, 2 * Div(rd.entry_bytes, kStreamBytes));
  e.total = e.pipeline + e.overhead + e.cascade;
  return e;
}

}  // namespace cycle_model
}  // namespace table_engine
