#include "cycle_model.h"

namespace table_engine {
namespace cycle_model {

static uint64_t Div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

uint64_t DecodeCycles(const DecodeWork& w) {
  const uint64_t work = w.header_clocks + w.key_write_beats + w.key_read_beats + w.value_beats + w.drain_beats;
  // The input is taken at most W bytes a clock.
  return std::max(work, Beats(w.bytes)) + w.blocks * kDecodeBlockCycles;
}

uint64_t DecompressCycles(const BlockReadStats& b) {
  return std::max(b.snappy_chunks, Beats(b.snappy_in)) + b.snappy_blocks * kDecompressBlockCycles;
}

uint64_t BuildCycles(const BuildWork& w) {
  return w.entries + w.key_beats + w.key_out_beats + w.value_beats + w.restarts + w.blocks * kBuildBlockCycles;
}

Estimate EstimateJob(const CompactionResult& r, size_t runs, size_t tables_in, int ways, bool verify) {
  Estimate e;
  const ReadStats& rd = r.read;
  const WriteStats& wr = r.write;
  auto stage = [&](const char* name, uint64_t c) { e.stages.emplace_back(name, c); };
  stage("read_dma", Div(rd.blocks.bytes, kStreamBytes));
  stage("crc_check", verify ? Div(rd.blocks.bytes, kStreamBytes) : 0);
  stage("decompress", DecompressCycles(rd.blocks));
  stage("entry_decode", DecodeCycles(rd.decode));
  stage("merge", r.entries_in * kMergeEntryCycles + r.merge_key_beats + rd.decode.value_beats);
  stage("drop", r.entries_in);
  stage("block_build", BuildCycles(wr.build));
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
