#include "cycle_model.h"

#include <cmath>

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

uint64_t CompressCycles(const snappy_codec::Stats& w, uint64_t blocks) {
  // Per fragment: the step to it, the table-size choice and the end besides its load beats.
  return w.load_beats + 3 * w.fragments + w.scan_ops + 3 * w.scan_runs + w.literals + w.literal_chunks +
         w.extend_beats + w.copy_elements + blocks * kCompressBlockCycles;
}

uint64_t ZipCycles(const WriteStats& w, uint64_t upstream) {
  if (w.zip_blocks == 0) return 0;
  const uint64_t busy = CompressCycles(w.compress, w.zip_blocks - w.big_blocks) + Beats(w.zip_stored) + w.zip_blocks * kZipBlockCycles;
  // A block holds its lane from its first beat, which comes at the pace of the stages before (`upstream`: the
  // slowest of them), until its stored bytes have left; L lanes take the blocks in turn. A writer that waits for
  // each block's size (a filter block) has them in a row.
  const uint64_t lanes = w.zip_serial ? 1 : uint64_t(kZipLanes);
  return Div(upstream + busy, lanes);
}

uint64_t BigBlockLag(const WriteStats& w) {
  // A big block streams out as it comes while its lane's compressor counts its Snappy form behind it in the
  // ring: the whole pipeline waits only for what that pass takes beyond the block's own beats.
  const uint64_t pass = w.big_blocks ? CompressCycles(w.big_compress, w.big_blocks) : 0, beats = Beats(w.big_raw);
  return pass > beats ? pass - beats : 0;
}

std::vector<RunSize> RunSizes(const CompactionSpec& spec) {
  std::vector<RunSize> sizes;
  for (const auto& run : spec.runs) {
    RunSize s;
    for (const auto& t : run) s.bytes += t.bytes.size();
    s.tables = run.size();
    sizes.push_back(s);
  }
  return sizes;
}

Estimate EstimateJob(const CompactionResult& r, size_t runs, size_t tables_in, int ways, bool verify,
                     const std::vector<RunSize>& run_sizes, uint64_t merge_bytes) {
  Estimate e;
  const ReadStats& rd = r.read;
  const WriteStats& wr = r.write;
  auto stage = [&](const char* name, uint64_t c) { e.stages.emplace_back(name, c); };
  // The K table readers (each with its CRC check, Snappy decompressor and entry decoder) run in parallel, one a
  // run: their stages are the busiest reader's, taken as its run's share of the bytes read (runs of equal size
  // when not given). A cascade's passes keep the whole (its final pass is estimated as the job, below).
  double share = 1;
  if (runs > 1 && runs <= size_t(ways)) {
    share = 1.0 / double(runs);
    if (run_sizes.size() == runs) {
      uint64_t all = 0, most = 0;
      for (const auto& s : run_sizes) {
        all += s.bytes;
        most = std::max(most, s.bytes);
      }
      if (all) share = double(most) / double(all);
    }
  }
  auto reader = [&](uint64_t c) { return uint64_t(double(c) * share + 0.5); };
  stage("read_dma", Div(rd.blocks.bytes, kStreamBytes));
  stage("crc_check", verify ? reader(Div(rd.blocks.bytes, kStreamBytes)) : 0);
  stage("decompress", reader(DecompressCycles(rd.blocks)));
  // The wider merge stage queues kMergeInputFifoBeats of its beats a run, so a reader decodes ahead of the merger by
  // that much: entries that fit several times over are decoded in parallel with the other runs', an entry larger
  // than the queue mostly in a row with them (1 KiB keys and values: 65 beats an entry; RTL 648,532 clocks where the
  // readers in parallel would take 418,922, doc/table_engine_top.md "Index spill").
  const int m = merge_bytes == 2 * kStreamBytes ? 1 : 0;
  // the job's mean entry in the merge stage's beats
  const double entry_beats =
      r.entries_in ? double(r.merge.key_beats[m] + r.merge.value_beats[m]) / double(r.entries_in) : 0;
  const double ahead = m && entry_beats > kMergeInputFifoBeats ? kMergeInputFifoBeats / entry_beats : 1.0;
  const uint64_t decode_all = DecodeCycles(rd.decode);
  const uint64_t entry_decode =
      uint64_t(ahead * double(reader(decode_all)) + (1 - ahead) * double(decode_all) + 0.5);
  stage("entry_decode", entry_decode);
  // At W the value beats are the decoder's (the same entries for a whole job); the wider stage counts its own.
  // At W the readers feed the merger with no FIFO between (rtl/Merger.scala: only the wider stage queues each
  // run's beats), so a reader decodes its run's next entry only as the merger takes it: the decoders do not run
  // ahead in parallel there, and the merge stage is no shorter than all the runs' decoding in a row (64-byte
  // keys: 4 x 10,000 entries, RTL 744,601 clocks; 631,152 with the readers in parallel, 711,004 in a row).
  const uint64_t merge = r.entries_in * kMergeEntryCycles + r.merge.key_beats[m] +
                         (m ? r.merge.value_beats[m] : rd.decode.value_beats);
  stage("merge", m ? merge : std::max(merge, decode_all));
  stage("drop", r.entries_in);
  const uint64_t block_build = BuildCycles(wr.build);
  stage("block_build", block_build);
  const size_t compress = e.stages.size();
  stage("compress", 0);
  stage("crc_out", Div(r.bytes_out, kStreamBytes));
  stage("write_dma", Div(r.bytes_out, kStreamBytes));
  uint64_t pace = 0;  // the slowest stage before the compressor lanes: the pace the lanes keep up with
  for (const auto& s : e.stages) pace = std::max(pace, s.second);
  e.stages[compress].second = ZipCycles(wr, pace);
  double norm = 0;
  for (const auto& s : e.stages) norm += std::pow(double(s.second), kStageNorm);
  e.pipeline = uint64_t(std::pow(norm, 1.0 / kStageNorm) + 0.5);
  // The merge side (the readers' decoding, the merger) runs ahead of the writer by the drop filter's queue only: an
  // entry larger than the queue is decoded and built mostly in a row, the part of it past the queue overlapping
  // nothing (1 KiB keys and values: 65 merge beats an entry against a queue of 37). The shorter side's share past
  // the queue adds to the norm; entries that fit it (db_bench's, 64-byte keys') add nothing.
  const double drop_queue =
      double(Div(kMaxInternalKeyBytes, m ? 2 * kStreamBytes : kStreamBytes) + kDropQueueExtraBeats);
  if (entry_beats > drop_queue)
    e.pipeline += uint64_t((1 - drop_queue / entry_beats) * double(std::min(entry_decode, block_build)) + 0.5);
  e.overhead = (rd.blocks.blocks + wr.blocks) * kBlockOverheadCycles + tables_in * kTableOpenCycles +
               r.tables.size() * kTableCloseCycles + Div(wr.close_bytes, kStreamBytes) + kJobOverheadCycles +
               BigBlockLag(wr);
  // More runs than ways (CascadePlan): each intermediate pass merges its runs' share of the input into
  // temporary tables, dropping nothing; the final pass is the job as estimated above. A pass costs its share
  // of the pipeline (the writing stages scaled to every entry kept), its blocks, the tables it opens and
  // closes, and a job's start.
  const std::vector<std::vector<int>> plan = CascadePlan(runs, ways);
  e.passes = plan.size();
  if (e.passes > 1) {
    std::vector<RunSize> sizes = run_sizes;
    if (sizes.size() != runs) sizes.assign(runs, RunSize{1, 0});
    uint64_t all = 0;
    for (const auto& s : sizes) all += s.bytes;
    const double keep = r.entries_out ? double(r.entries_in) / double(r.entries_out) : 1.0;
    double full = 0;  // the whole input through one pass that drops nothing
    for (const auto& s : e.stages) {
      const bool writes = s.first == "block_build" || s.first == "crc_out" || s.first == "write_dma";
      if (s.first != "compress") full = std::max(full, double(s.second) * (writes ? keep : 1.0));
    }
    const double blocks = double(rd.blocks.blocks) + double(wr.blocks) * keep;
    std::vector<double> share;  // each temporary run's fraction of the input, and its tables
    std::vector<double> temp_tables;
    double cascade = 0;
    for (size_t j = 0; j + 1 < plan.size(); j++) {
      double f = 0, opened = 0;
      for (int i : plan[j]) {
        if (i >= 0) {
          const double fi = all ? double(sizes[size_t(i)].bytes) / double(all) : 0;
          f += fi;
          opened += run_sizes.size() == runs ? double(sizes[size_t(i)].tables) : fi * double(tables_in);
        } else {
          f += share[size_t(-1 - i)];
          opened += temp_tables[size_t(-1 - i)];
        }
      }
      // One temporary table (more only for long keys or large shares: a table-close each, negligible).
      const double written = 1;
      share.push_back(f);
      temp_tables.push_back(written);
      cascade += f * (full + blocks * kBlockOverheadCycles) + opened * kTableOpenCycles +
                 written * kTableCloseCycles + kJobOverheadCycles;
    }
    e.cascade = uint64_t(cascade + 0.5);
  }
  e.total = e.pipeline + e.overhead + e.cascade;
  return e;
}

}  // namespace cycle_model
}  // namespace table_engine
