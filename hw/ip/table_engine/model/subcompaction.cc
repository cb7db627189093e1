#include "subcompaction.h"

#include <algorithm>
#include <memory>

#include "block_reader.h"
#include "coding.h"
#include "cycle_model.h"
#include "error.h"
#include "internal_key.h"
#include "job.h"
#include "limits.h"

namespace table_engine {
namespace {

uint64_t Div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// A data block as its index entry gives it: the user key of the separator after it (every key of
// the block is at or below it) and the run's data-block bytes up to its end.
struct IndexedBlock {
  std::string user;
  uint64_t cum_end = 0;
};

struct RunIndex {
  std::vector<IndexedBlock> blocks;
  std::vector<uint64_t> table_first;  // flat block number of each table's first block
};

// The firmware's user-key comparison, counted: bytes up to and including the first difference.
int CountedCompare(std::string_view a, std::string_view b, PlanCost* c) {
  size_t n = std::min(a.size(), b.size()), i = 0;
  while (i < n && a[i] == b[i]) i++;
  c->comparisons++;
  c->compared_bytes += std::min(i + 1, n);
  return CompareBytes(a, b);
}

// Step 1: footer and index block of every table of the run (the unit's read path), each entry with
// a tag and a handle. A block's index key bounds its keys from above; a table's last key is LevelDB's
// short successor (FindShortSuccessor: "0000123" gives "1"), far above the next table's keys, so the
// last block of a table takes the next table's first bound when that is lower (the run's keys
// ascend): the bounds ascend through the run. The firmware reads each table's first and last index
// entries and makes one comparison per table for it.
RunIndex ReadRunIndex(const std::vector<TableImage>& run, bool verify, PlanCost* cost,
                      std::vector<BlockReadStats>* fetches) {
  RunIndex ri;
  std::string scratch;
  uint64_t base = 0;
  for (const TableImage& t : run) {
    ri.table_first.push_back(ri.blocks.size());
    BlockHandle ih = ReadFooter(t);
    fetches->emplace_back();
    std::string_view idx = ReadBlock(t, ih, verify, &scratch, &fetches->back());
    BlockReader r;
    r.Start(idx, &t.name, ih.offset, idx.data() == scratch.data(), kMaxInternalKeyBytes);
    r.RequireFirstRestartAtZero();
    cost->tables++;
    cost->index_entries += 2;  // the table's first entry and its last (where its data blocks end)
    uint64_t end = 0;
    while (r.Next()) {
      std::string_view k = r.key(), v = r.value();
      if (k.size() < 8)
        throw EngineError(ErrorCode::kBadBlock, t.name, r.entry_offset(),
                          "index key of " + std::to_string(k.size()) + " bytes has no 8-byte tag");
      BlockHandle h = DecodeIndexHandle(v, t.name, r.entry_offset());
      end = h.offset + h.size + kTrailerBytes;
      ri.blocks.push_back(IndexedBlock{std::string(UserKey(k)), base + end});
    }
    base += end;
  }
  // Back to front: a table's last block is bounded by the next table's first block's bound too.
  for (size_t t = ri.table_first.size(); t-- > 1;) {
    uint64_t b = ri.table_first[t];
    if (b == 0 || b >= ri.blocks.size()) continue;  // an empty table before or at this one
    if (CountedCompare(ri.blocks[b].user, ri.blocks[b - 1].user, cost) < 0) ri.blocks[b - 1].user = ri.blocks[b].user;
  }
  return ri;
}

}  // namespace

SubcompactionPlan PlanSubcompactions(const CompactionSpec& spec, int parts) {
  SubcompactionPlan plan;
  PlanCost& cost = plan.cost;
  const size_t K = spec.runs.size();
  std::vector<BlockReadStats> fetches;  // per table: its index block's read
  std::vector<RunIndex> runs;
  for (const auto& run : spec.runs) {
    runs.push_back(ReadRunIndex(run, spec.verify_checksums, &cost, &fetches));
    plan.total_bytes += runs.back().blocks.empty() ? 0 : runs.back().blocks.back().cum_end;
  }
  // Step 1 runs on the P units side by side, table i on unit i mod P: the slowest unit counts.
  std::vector<uint64_t> unit(size_t(parts), cycle_model::kJobOverheadCycles);
  for (size_t i = 0; i < fetches.size(); i++) {
    const BlockReadStats& f = fetches[i];
    cost.index_read_bytes += f.bytes + kFooterBytes;
    cost.index_raw_bytes += f.snappy_out;
    unit[i % unit.size()] += cycle_model::kTableOpenCycles + cycle_model::kBlockOverheadCycles +
                             std::max(Div(f.bytes + kFooterBytes, cycle_model::kStreamBytes),
                                      cycle_model::DecompressCycles(f));
  }
  cost.unit_cycles = *std::max_element(unit.begin(), unit.end());

  // Step 2: samples of each run (about kSamplesPerPart per part, and the run's last block), merged
  // by user key; each distinct key a candidate with the bytes the runs have reached by it.
  struct Sample {
    size_t run;
    uint64_t block;
  };
  std::vector<std::vector<uint64_t>> samples(K);
  for (size_t r = 0; r < K; r++) {
    uint64_t n = runs[r].blocks.size();
    uint64_t stride = std::max<uint64_t>(1, n / (kSamplesPerPart * uint64_t(parts)));
    for (uint64_t b = stride - 1; b < n; b += stride) samples[r].push_back(b);
    if (n > 0 && samples[r].back() != n - 1) samples[r].push_back(n - 1);
    cost.index_entries += samples[r].size();
  }
  auto user = [&](const Sample& s) -> const std::string& { return runs[s.run].blocks[s.block].user; };
  std::vector<Sample> merged;
  std::vector<size_t> head(K, 0);
  for (;;) {
    int best = -1;
    for (size_t r = 0; r < K; r++) {
      if (head[r] >= samples[r].size()) continue;
      if (best < 0 || CountedCompare(runs[r].blocks[samples[r][head[r]]].user,
                                     runs[best].blocks[samples[best][head[best]]].user, &cost) < 0)
        best = int(r);
    }
    if (best < 0) break;
    merged.push_back(Sample{size_t(best), samples[best][head[best]++]});
  }
  struct Candidate {
    const std::string* user;
    uint64_t bytes;
    std::vector<uint64_t> taken;  // samples of each run at or before it in the merge
    size_t run;                   // the run whose sample it is
  };
  std::vector<Candidate> cand;
  // A run's bytes below a key lie between its last sample at or below the key and its next sample:
  // the estimate takes the midpoint for the other runs (K additions per sample, no comparison).
  std::vector<uint64_t> reached(K, 0), taken(K, 0);
  auto next_cum = [&](size_t r) {
    return taken[r] < samples[r].size() ? runs[r].blocks[samples[r][taken[r]]].cum_end : reached[r];
  };
  for (size_t m = 0; m < merged.size(); m++) {
    const Sample& s = merged[m];
    reached[s.run] = runs[s.run].blocks[s.block].cum_end;
    taken[s.run]++;
    uint64_t estimate = reached[s.run];
    for (size_t r = 0; r < K; r++)
      if (r != s.run) estimate += (reached[r] + next_cum(r)) / 2;
    cand.push_back(Candidate{&user(s), estimate, taken, s.run});
  }
  // The last candidate is the largest bound of all: no key lies above it, so it never splits. Equal
  // keys of several runs are separate candidates (no comparison per sample to group them); a split
  // equal to the previous one is dropped when chosen (one comparison per split).
  const std::string* top = cand.empty() ? nullptr : cand.back().user;
  if (!cand.empty()) cand.pop_back();
  size_t next = 0;  // candidates below `next` are taken or passed
  std::vector<std::vector<uint64_t>> split_taken;
  std::vector<size_t> split_run;
  for (int j = 1; j < parts && next < cand.size(); j++) {
    uint64_t target = plan.total_bytes * uint64_t(j) / uint64_t(parts);
    size_t k = next;
    while (k + 1 < cand.size() && cand[k].bytes < target) k++;
    if (k > next && cand[k].bytes >= target && target - cand[k - 1].bytes < cand[k].bytes - target) k--;
    next = k + 1;
    if (!plan.splits.empty() && CountedCompare(*cand[k].user, plan.splits.back(), &cost) <= 0) continue;
    if (CountedCompare(*cand[k].user, *top, &cost) >= 0) continue;
    plan.splits.push_back(*cand[k].user);
    split_taken.push_back(cand[k].taken);
    split_run.push_back(cand[k].run);
  }

  // Step 3: per split and run, the first block whose bound is past the split (binary search between
  // the run's samples around the split): c.
  // Part j's window is [c(j-1), c(j)], and further while c(j) ends a table: the next table's first
  // block may still hold keys at or below the split (a run of one-block tables is shared whole);
  // neighbours share the blocks both may need.
  // c is kept ascending, so the windows tile the run whatever the index says (the reader's checks
  // catch an index that does not bound its blocks).
  const size_t S = plan.splits.size();
  std::vector<std::vector<uint64_t>> past(S, std::vector<uint64_t>(K));
  for (size_t r = 0; r < K; r++)
    for (size_t i = 0; i < S; i++) {
      // The merge placed the split between two samples of the run: search only between them (past
      // the later one too when its bound equals the split: equal keys merge in either order).
      const std::vector<uint64_t>& sr = samples[r];
      uint64_t t = split_taken[i][r];
      uint64_t lo = t > 0 ? sr[t - 1] + 1 : 0, hi = runs[r].blocks.size();
      // The split is a bound of this run's (its sample sr[t - 1]): the block after it is past the split unless
      // its bound equals it (a user key over several blocks), so it is looked at first.
      if (r == split_run[i] && lo < hi) {
        cost.index_entries++;
        if (CountedCompare(runs[r].blocks[lo].user, plan.splits[i], &cost) > 0) {
          past[i][r] = i > 0 ? std::max(lo, past[i - 1][r]) : lo;
          continue;
        }
        lo++;
      }
      if (t < sr.size()) {
        cost.index_entries++;
        if (CountedCompare(runs[r].blocks[sr[t]].user, plan.splits[i], &cost) > 0) hi = sr[t];
      }
      while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        cost.index_entries++;
        if (CountedCompare(runs[r].blocks[mid].user, plan.splits[i], &cost) > 0)
          hi = mid;
        else
          lo = mid + 1;
      }
      past[i][r] = i > 0 ? std::max(lo, past[i - 1][r]) : lo;
    }
  plan.parts.resize(size_t(parts));
  for (size_t j = 0; j <= S; j++) {
    PartPlan& p = plan.parts[j];
    p.has_lo = j > 0;
    p.has_hi = j < S;
    if (p.has_lo) p.lo = plan.splits[j - 1];
    if (p.has_hi) p.hi = plan.splits[j];
    for (size_t r = 0; r < K; r++) {
      const RunIndex& ri = runs[r];
      const uint64_t n = ri.blocks.size();
      // The last block a part ending at this split reads: block c, and past it while c ends a table
      // (a later block's keys are bounded below only by a separator inside a table).
      auto window_end = [&](uint64_t c) {
        while (c + 1 < n && std::binary_search(ri.table_first.begin(), ri.table_first.end(), c + 1)) {
          cost.index_entries++;
          c++;
        }
        return std::min(c, n - 1);
      };
      uint64_t first = p.has_lo ? past[j - 1][r] : 0;
      uint64_t last = p.has_hi ? window_end(past[j][r]) : n - 1;
      if (n == 0 || first >= n) continue;
      RunWindow w;
      w.run = r;
      w.first_table = size_t(std::upper_bound(ri.table_first.begin(), ri.table_first.end(), first) -
                             ri.table_first.begin()) - 1;
      w.last_table = size_t(std::upper_bound(ri.table_first.begin(), ri.table_first.end(), last) -
                            ri.table_first.begin()) - 1;
      w.first_block = first - ri.table_first[w.first_table];
      w.last_block = last - ri.table_first[w.last_table];
      w.lo_blocks = p.has_lo ? window_end(past[j - 1][r]) - first + 1 : 0;
      w.hi_from = p.has_hi ? past[j][r] - first : last - first + 1;
      w.bytes = ri.blocks[last].cum_end - (first ? ri.blocks[first - 1].cum_end : 0);
      p.bytes += w.bytes;
      p.windows.push_back(w);
    }
  }

  cost.cpu_cycles = fw_cost::kPlanCycles + cost.index_entries * fw_cost::kIndexEntryCycles +
                    cost.comparisons * fw_cost::kCompareCycles +
                    cost.compared_bytes * fw_cost::kCompareByteCycles;
  return plan;
}

CompactionResult RunPart(const CompactionSpec& spec, const PartPlan& p, uint64_t first_file_number) {
  CompactionResult part;
  std::vector<std::unique_ptr<RunReader>> readers;
  for (const RunWindow& w : p.windows) {
    const auto& run = spec.runs[w.run];
    std::vector<TableImage> tables(run.begin() + long(w.first_table), run.begin() + long(w.last_table) + 1);
    ReadWindow rw{w.first_block, w.last_block, p.has_lo ? &p.lo : nullptr, p.has_hi ? &p.hi : nullptr,
                  w.lo_blocks, w.hi_from};
    readers.push_back(std::make_unique<RunReader>(std::move(tables), spec.verify_checksums, &part.read, rw));
  }
  part.bytes_in = p.bytes;
  CompactRuns(spec, std::move(readers), first_file_number, &part);
  return part;
}

SubcompactionResult RunSubcompactions(const CompactionSpec& spec, int parts, int ways, uint64_t merge_bytes) {
  SubcompactionResult res;
  const size_t P = size_t(parts);
  res.parts.resize(P);
  res.tables_in.assign(P, 0);
  res.runs_in.assign(P, 0);
  uint64_t number = spec.first_file_number;
  if (parts == 1) {
    // One part is the job itself: no plan, no windows.
    res.plan.parts.resize(1);
    res.parts[0] = RunCompaction(spec);
    for (const auto& run : spec.runs) res.tables_in[0] += run.size();
    res.runs_in[0] = spec.runs.size();
  } else {
    res.plan = PlanSubcompactions(spec, parts);
    for (size_t j = 0; j < P; j++) {
      const PartPlan& p = res.plan.parts[j];
      if (p.windows.empty()) continue;  // nothing of the job lies in it: not dispatched
      for (const RunWindow& w : p.windows) res.tables_in[j] += w.last_table - w.first_table + 1;
      res.runs_in[j] = p.windows.size();
      res.parts[j] = RunPart(spec, p, number);
      number += res.parts[j].tables.size();
    }
  }

  CompactionResult& w = res.whole;
  for (const auto& run : spec.runs)
    for (const auto& t : run) w.bytes_in += t.bytes.size();
  WholeJobEstimate& e = res.estimate;
  e.plan = res.plan.cost.unit_cycles + res.plan.cost.cpu_cycles;
  uint64_t dispatched = e.plan, finish = e.plan;
  for (size_t j = 0; j < P; j++) {
    const CompactionResult& part = res.parts[j];
    for (const OutputTable& t : part.tables) {
      w.tables.push_back(t);
      e.metadata += fw_cost::kTableMetaCycles + (t.smallest.size() + t.largest.size()) * fw_cost::kKeyCopyByteCycles;
    }
    w.entries_in += part.entries_in;
    w.entries_out += part.entries_out;
    w.dropped += part.dropped;
    w.bytes_out += part.bytes_out;
    uint64_t c = 0;
    if (res.runs_in[j] > 0) {
      c = cycle_model::EstimateJob(part, res.runs_in[j], res.tables_in[j], ways, spec.verify_checksums, {},
                                    merge_bytes).total;
      uint64_t d = fw_cost::kDispatchPartCycles + res.runs_in[j] * fw_cost::kDispatchRunCycles;
      e.dispatch += d;
      dispatched += d;
      e.completion += fw_cost::kCompletionCycles;
      finish = std::max(finish, dispatched + c);  // parts start one after the other, run side by side
    }
    e.part_cycles.push_back(c);
    e.bracket = std::max(e.bracket, c);
  }
  // Completions and the tables' metadata are counted after the last part ends: an upper bound (the
  // early parts' would overlap the later parts' work).
  e.total = finish + e.completion + e.metadata;
  return res;
}

std::string SubcompactionJson(const SubcompactionResult& r) {
  std::string o = ResultJson(r.whole);
  o.resize(o.size() - 3);  // "\n}\n"
  auto u = [](uint64_t x) { return std::to_string(x); };
  o += ",\n  \"parts\": [";
  size_t first_table = 0;
  for (size_t j = 0; j < r.parts.size(); j++) {
    const PartPlan& p = r.plan.parts[j];
    const CompactionResult& c = r.parts[j];
    o += j ? ",\n    " : "\n    ";
    o += std::string("{\"lo\": ") + (p.has_lo ? "\"" + Hex(p.lo) + "\"" : "null") +
         ", \"hi\": " + (p.has_hi ? "\"" + Hex(p.hi) + "\"" : "null") + ", \"bytes\": " + u(p.bytes) +
         ", \"first_table\": " + u(first_table) + ", \"tables_out\": " + u(c.tables.size()) +
         ", \"entries_in\": " + u(c.entries_in) + ", \"entries_out\": " + u(c.entries_out) +
         ", \"cycles\": " + u(r.estimate.part_cycles[j]) + "}";
    first_table += c.tables.size();
  }
  const PlanCost& k = r.plan.cost;
  o += "\n  ],\n  \"plan\": {\"data_bytes\": " + u(r.plan.total_bytes) + ", \"tables\": " + u(k.tables) + ", \"index_read_bytes\": " + u(k.index_read_bytes) +
       ", \"index_entries\": " + u(k.index_entries) + ", \"comparisons\": " + u(k.comparisons) +
       ", \"compared_bytes\": " + u(k.compared_bytes) + ", \"unit_cycles\": " + u(k.unit_cycles) +
       ", \"cpu_cycles\": " + u(k.cpu_cycles) + "},\n";
  const WholeJobEstimate& e = r.estimate;
  o += "  \"cycles\": {\"whole_job\": " + u(e.total) + ", \"bracket\": " + u(e.bracket) + ", \"plan\": " + u(e.plan) +
       ", \"dispatch\": " + u(e.dispatch) + ", \"completion\": " + u(e.completion) + ", \"metadata\": " +
       u(e.metadata) + "}\n}\n";
  return o;
}

}  // namespace table_engine
