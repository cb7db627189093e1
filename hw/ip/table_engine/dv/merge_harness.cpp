// Verilator harness of the table engine's merge and drop stage (top `MergeDrop`, hw/ip/table_engine/rtl/
// Merger.scala), differential against the engine's C++ model: each job's K runs are written as tables by
// the model's TableWriter and merged by its Merger (RunReaders, the order checks included) and dropped by
// its DropRule (compaction.cc); the RTL gets the same entries as entry streams with random stalls on every
// input, the base-level bits and the output, and must give the same kept entries in the same order, the
// same counters, or the model's error (code, run, entry index in the run) after the same entries.
//
// Prints one summary line (`jobs=... mismatches=... hangs=... entries_per_clock=...`); exit status 0 all
// agree, 1 a mismatch, a hang (no status within the cycle bound) or a stream-rule violation, 2 bad usage.
#include "VMergeDrop.h"
#include "verilated.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "args.h"
#include "compaction.h"
#include "error.h"
#include "internal_key.h"
#include "limits.h"
#include "merger.h"
#include "random_entries.h"
#include "table_reader.h"
#include "table_writer.h"
#include "tb.h"

namespace te = table_engine;
using te_dv::Below;

namespace {

#ifndef BEAT_BYTES
#define BEAT_BYTES 16
#endif
#ifndef WAYS
#define WAYS 4
#endif
constexpr int W = BEAT_BYTES;
constexpr int K = WAYS;
constexpr int kDataWords = W / 4;

inline void putWords(QData& s, const uint32_t* w) { s = w[0] | (QData)w[1] << 32; }
inline void getWords(const QData& s, uint32_t* w) { w[0] = (uint32_t)s, w[1] = (uint32_t)(s >> 32); }
using simc::getWords;
using simc::putWords;

struct Entry {
  std::string key, value;  // internal key (user key + 8-byte tag), value
  bool operator==(const Entry& o) const { return key == o.key && value == o.value; }
};

struct Job {
  std::vector<std::vector<Entry>> runs;  // K runs, newest first
  uint64_t snapshot = 0;
  std::vector<std::vector<te::KeyRange>> levels;  // deeper levels' files (user-key ranges)
};

struct Outcome {
  std::vector<Entry> kept;
  std::vector<bool> isBase;  // per merged entry, in merge order (the RTL's isBase stream)
  std::vector<std::string> merged;  // the merged internal keys
  std::vector<size_t> keptAfter;  // kept entries once merged entry i has passed the drop rule
  uint64_t in = 0, out = 0, dropped = 0, baseDrops = 0;
  bool error = false, crossRun = false;  // crossRun: one internal key in two runs (the model's Merger)
  int code = 0, run = 0;
  uint64_t entry = 0;
};

std::string InternalKey(const std::string& user, uint64_t seq, uint8_t type) {
  std::string k = user;
  const uint64_t tag = seq << 8 | type;
  for (int i = 0; i < 8; i++) k.push_back(char(tag >> (8 * i)));
  return k;
}

// The model's verdict: the runs as tables (TableWriter), merged by its Merger, dropped by its DropRule;
// the base-level bit of every merged entry from its BaseLevelCheck asked in order.
Outcome Model(const Job& job) {
  Outcome o;
  te::WriterOptions wo;
  wo.buffer_bytes = uint64_t(1) << 34;
  te::WriteStats ws;
  std::vector<std::string> bytes(job.runs.size());
  std::vector<std::vector<te::TableImage>> images(job.runs.size());
  for (size_t r = 0; r < job.runs.size(); r++) {
    if (job.runs[r].empty()) continue;  // an empty run: no table
    te::TableWriter w(wo, "run" + std::to_string(r), &ws);
    for (const Entry& e : job.runs[r]) w.Add(e.key, e.value);
    bytes[r] = w.Finish();
    images[r].push_back(te::TableImage{"run" + std::to_string(r), bytes[r]});
  }
  te::ReadStats rs;
  try {
    std::vector<std::unique_ptr<te::RunReader>> readers;
    for (auto& im : images) readers.push_back(std::make_unique<te::RunReader>(im, false, &rs));
    te::Merger m(std::move(readers));
    te::BaseLevelCheck walker(job.levels);
    te::DropRule drop(job.snapshot, job.levels);
    for (; m.Valid(); m.Next()) {
      const std::string_view k = m.key();
      o.in++;
      const bool base = walker.IsBase(te::UserKey(k));
      o.isBase.push_back(base);
      o.merged.emplace_back(k);
      const bool dropped = drop.Drop(k);
      o.keptAfter.push_back(o.kept.size() + !dropped);
      if (dropped) {
        o.dropped++;
        const uint64_t tag = te::Tag(k);
        if ((tag & 0xff) == te::kTypeDeletion && base) o.baseDrops++;
        continue;
      }
      o.kept.push_back({std::string(k), std::string(m.value())});
    }
    o.out = o.kept.size();
  } catch (const te::EngineError& e) {
    o.error = true;
    o.code = int(e.code);
    o.run = std::stoi(e.table.substr(3));
    o.crossRun = std::string(e.what()).find("also in run") != std::string::npos;
    // The model names a byte offset in the run's table; the RTL the entry's index in the run.
    te::TableReader tr(&images[o.run][0], false, &rs);
    uint64_t i = 0;
    while (tr.Next() && tr.offset() != e.offset) i++;
    o.entry = i;
  }
  return o;
}

// ---- random jobs ----
struct Options {
  uint64_t seed = 1, jobs = 100, entries = 40, maxValue = 4096, keyLen = 0, valueLen = 0;
  double pin = 0, pout = 0, malformed = 0, inject = 0;
  bool quiet = false, tamper = false;
};

std::string RandomUser(simc::Prng& g) {
  const size_t len = te_dv::KeyLength(g);
  return te_dv::RandomBytes(g, len > 8 ? len - 8 : Below(g, 3), Below(g, 3) == 0 ? 0 : 2 + int(Below(g, 3)));
}

void SortRun(std::vector<Entry>* run) {
  std::sort(run->begin(), run->end(), [](const Entry& a, const Entry& b) { return te::CompareInternal(a.key, b.key) < 0; });
  run->erase(std::unique(run->begin(), run->end(), [](const Entry& a, const Entry& b) { return a.key == b.key; }),
             run->end());
}

Job RandomJob(simc::Prng& g, const Options& o) {
  Job job;
  job.runs.resize(K);
  if (o.keyLen) {  // throughput: db_bench-like keys spread over the runs, nothing dropped
    const uint64_t n = o.entries * K;
    uint64_t key = Below(g, 1000);
    for (uint64_t i = 0; i < n; i++) {
      char b[32];
      std::snprintf(b, sizeof b, "%016llu", static_cast<unsigned long long>(key += 1 + Below(g, 3)));
      std::string user(b);
      user.resize(o.keyLen - 8, '0');
      job.runs[Below(g, K)].push_back({InternalKey(user, 1 + i, te::kTypeValue), te_dv::RandomBytes(g, o.valueLen, 26)});
    }
    return job;
  }
  // A pool of user keys (short alphabets: long shared prefixes) that the runs share.
  std::vector<std::string> pool;
  for (uint64_t i = 1 + Below(g, o.entries); i--;) pool.push_back(RandomUser(g));
  std::sort(pool.begin(), pool.end());
  pool.erase(std::unique(pool.begin(), pool.end()), pool.end());
  uint64_t seq = 1 + Below(g, 4) * (uint64_t(1) << (8 * Below(g, 7)));
  uint64_t maxSeq = seq;
  for (int r = K - 1; r >= 0; r--) {  // older runs first: lower sequences, as LevelDB's levels have them
    const uint64_t n = Below(g, 8) == 0 ? 0 : Below(g, o.entries + 1);
    for (uint64_t i = 0; i < n; i++) {
      const std::string& user = pool[Below(g, pool.size())];
      const uint64_t s = Below(g, 10) == 0 ? 1 + Below(g, maxSeq + 4) : ++seq;  // sometimes out of band
      const uint64_t t = Below(g, 50);
      const uint8_t type = t == 0 ? uint8_t(2 + Below(g, 254)) : t < 14 ? te::kTypeDeletion : te::kTypeValue;
      job.runs[r].push_back({InternalKey(user, s, type), te_dv::RandomBytes(g, te_dv::ValueLength(g, o.maxValue), 0)});
      maxSeq = std::max(maxSeq, s);
    }
    SortRun(&job.runs[r]);
  }
  switch (Below(g, 4)) {
    case 0: job.snapshot = 0; break;  // nothing visible to every snapshot: nothing dropped
    case 1: job.snapshot = te::kMaxSequence; break;
    default: job.snapshot = Below(g, maxSeq + 2);
  }
  // Deeper levels: sorted, disjoint ranges, their bounds from the pool (keys inside, at and between).
  for (uint64_t l = Below(g, 4); l--;) {
    std::vector<std::string> b;
    for (uint64_t i = 2 * Below(g, 5); i--;)
      b.push_back(Below(g, 3) ? pool[Below(g, pool.size())] : RandomUser(g));
    std::sort(b.begin(), b.end());
    b.erase(std::unique(b.begin(), b.end()), b.end());
    std::vector<te::KeyRange> files;
    for (size_t i = 0; i + 1 < b.size(); i += 2) files.push_back({b[i], b[i + 1]});
    if (b.size() % 2) files.push_back({b.back(), b.back()});
    job.levels.push_back(files);
  }
  if (g.chance(o.malformed)) {  // keys out of order in a run, or one internal key in two runs
    std::vector<int> nonEmpty;
    for (int r = 0; r < K; r++)
      if (job.runs[r].size() >= 2) nonEmpty.push_back(r);
    if (!nonEmpty.empty()) {
      auto& run = job.runs[nonEmpty[Below(g, nonEmpty.size())]];
      const size_t i = Below(g, run.size() - 1);
      switch (Below(g, 3)) {
        case 0: std::swap(run[i], run[i + 1]); break;
        case 1: run.insert(run.begin() + i + 1, Entry{run[i].key, "again"}); break;
        default: {
          auto& other = job.runs[(&run - &job.runs[0] + 1 + Below(g, K - 1)) % K];
          other.push_back({run[i].key, "also"});
          SortRun(&other);
        }
      }
    }
  }
  return job;
}

// ---- the RTL ----
struct Beat {
  uint8_t kind = 0;
  uint32_t data[kDataWords] = {};
  uint32_t count = 0, keyBytes = 0, valueBytes = 0;
  bool last = false;
  bool operator==(const Beat& o) const {
    return kind == o.kind && count == o.count && keyBytes == o.keyBytes && valueBytes == o.valueBytes &&
           last == o.last && std::equal(data, data + kDataWords, o.data);
  }
};

void PushBytes(std::deque<Beat>* q, uint8_t kind, const std::string& s, bool lastPart) {
  for (size_t p = 0; p < s.size(); p += W) {
    Beat b;
    b.kind = kind;
    b.count = uint32_t(std::min<size_t>(W, s.size() - p));
    for (uint32_t k = 0; k < b.count; k++) b.data[k / 4] |= uint32_t(uint8_t(s[p + k])) << (8 * (k % 4));
    b.last = lastPart && p + W >= s.size();
    q->push_back(b);
  }
}

// A HEAD beat whose key length the stage must refuse (under 8 bytes, over the limit): the RTL's own
// guards, which the block reader upstream never lets through, so no table can carry them to the model.
struct BadHead {
  int run = -1;
  size_t entry = 0;
  uint32_t keyBytes = 0;
};

std::deque<Beat> RunBeats(const std::vector<Entry>& run, const BadHead& bad, int r) {
  std::deque<Beat> q;
  for (const Entry& e : run) {
    Beat h;
    h.kind = 0;
    h.keyBytes = r == bad.run && size_t(&e - &run[0]) == bad.entry ? bad.keyBytes : uint32_t(e.key.size());
    h.valueBytes = uint32_t(e.value.size());
    h.last = e.key.empty() && e.value.empty();
    q.push_back(h);
    PushBytes(&q, 1, e.key, e.value.empty());
    PushBytes(&q, 2, e.value, true);
  }
  Beat end;
  end.kind = 3;
  end.last = true;
  q.push_back(end);
  return q;
}

// A stream source: a beat, once offered, stays until taken; a pause only delays the next offer.
struct Source {
  std::deque<Beat> q;
  simc::Pause pause;
  bool offering = false;
  explicit Source(simc::Prng* r) : pause(r) {}
  bool drive() {
    if (!offering && !q.empty() && !pause()) offering = true;
    return offering;
  }
  void take() {
    q.pop_front();
    offering = false;
  }
};

#define IN_PORTS(i)                                                                                           \
  {&top_.io_inputs_##i##_valid, &top_.io_inputs_##i##_ready, &top_.io_inputs_##i##_payload_last,              \
   &top_.io_inputs_##i##_payload_fragment_kind, &top_.io_inputs_##i##_payload_fragment_data,                   \
   &top_.io_inputs_##i##_payload_fragment_count, &top_.io_inputs_##i##_payload_fragment_keyBytes,              \
   &top_.io_inputs_##i##_payload_fragment_valueBytes}

class Bench {
 public:
  using Data = std::remove_reference_t<decltype(VMergeDrop().io_inputs_0_payload_fragment_data)>;
  struct Ports {
    CData* valid;
    CData* ready;
    CData* last;
    CData* kind;
    Data* data;
    CData* count;
    SData* keyBytes;
    IData* valueBytes;
  };

  explicit Bench(const Options& o) : rng_(o.seed), basePause_(&rng_), outPause_(&rng_), statusPause_(&rng_) {
    Ports all[8] = {IN_PORTS(0), IN_PORTS(1)
#if WAYS > 2
                    , IN_PORTS(2), IN_PORTS(3)
#endif
#if WAYS > 4
                    , IN_PORTS(4), IN_PORTS(5), IN_PORTS(6), IN_PORTS(7)
#endif
    };
    for (int i = 0; i < K; i++) {
      ports_[i] = all[i];
      src_.emplace_back(&rng_);
      src_.back().pause.set(o.pin);
    }
    basePause_.set(o.pin);
    outPause_.set(o.pout);
    statusPause_.set(o.pout);
    top_.reset = 1;
    top_.io_softReset = 0;
    for (int i = 0; i < 4; i++) Tick();
    top_.reset = 0;
  }

  // One job through the RTL; false on a hang (no status within `bound` clocks). `isBase`: the bits fed.
  bool Run(const Job& job, const std::vector<bool>& isBase, const BadHead& bad, Outcome* rtl, std::string* why,
           uint64_t* cycles, uint64_t bound) {
    for (int i = 0; i < K; i++) {
      src_[i].q = RunBeats(job.runs[i], bad, i);
      src_[i].offering = false;
    }
    std::deque<bool> base(isBase.begin(), isBase.end());
    bool baseOffering = false;
    std::vector<Beat> got;
    bool held = false;
    Beat heldBeat;
    top_.io_smallestSnapshot = job.snapshot;
    for (uint64_t t = 0; t < bound; t++) {
      for (int i = 0; i < K; i++) {
        Ports& p = ports_[i];
        *p.valid = src_[i].drive();
        if (*p.valid) {
          const Beat& b = src_[i].q.front();
          *p.kind = b.kind;
          putWords(*p.data, b.data);
          *p.count = b.count;
          *p.keyBytes = b.keyBytes;
          *p.valueBytes = b.valueBytes;
          *p.last = b.last;
        }
      }
      if (!baseOffering && !base.empty() && !basePause_()) baseOffering = true;
      top_.io_isBase_valid = baseOffering;
      top_.io_isBase_payload = baseOffering && base.front();
      top_.io_output_ready = !outPause_();
      top_.io_status_ready = !statusPause_();
      top_.eval();
      for (int i = 0; i < K; i++)
        if (*ports_[i].valid && *ports_[i].ready) src_[i].take();
      if (top_.io_isBase_valid && top_.io_isBase_ready) {
        base.pop_front();
        baseOffering = false;
      }
      if (top_.io_output_valid) {
        Beat b;
        b.kind = top_.io_output_payload_fragment_kind;
        getWords(top_.io_output_payload_fragment_data, b.data);
        b.count = top_.io_output_payload_fragment_count;
        b.keyBytes = b.kind == 0 ? top_.io_output_payload_fragment_keyBytes : 0;
        b.valueBytes = b.kind == 0 ? top_.io_output_payload_fragment_valueBytes : 0;
        b.last = top_.io_output_payload_last;
        if (held && !(b == heldBeat)) violations_++;  // an offered beat changed before it was taken
        if (top_.io_output_ready) {
          got.push_back(b);
          held = false;
        } else {
          held = true;
          heldBeat = b;
        }
      } else if (held) {
        violations_++;  // an offered beat withdrawn
        held = false;
      }
      if (top_.io_status_valid && top_.io_status_ready) {
        rtl->error = top_.io_status_payload_error;
        rtl->code = top_.io_status_payload_code;
        rtl->run = top_.io_status_payload_run;
        rtl->entry = top_.io_status_payload_entry;
        rtl->in = top_.io_status_payload_entriesIn;
        rtl->out = top_.io_status_payload_entriesOut;
        rtl->dropped = top_.io_status_payload_dropped;
        Tick();
        *cycles = t + 1;
        SoftReset();  // the unit halts after its status
        return Parse(got, rtl, why);
      }
      Tick();
    }
    *cycles = bound;
    SoftReset();
    return false;
  }

  uint64_t violations() const { return violations_; }

 private:
  void Tick() {
    simc::tick(top_);
  }

  void SoftReset() {
    top_.io_softReset = 1;
    for (int i = 0; i < K; i++) *ports_[i].valid = 0;
    top_.io_isBase_valid = 0;
    Tick();
    top_.io_softReset = 0;
  }

  // Output beats back into entries, checking the framing; true when it parses (else `why`).
  static bool Parse(const std::vector<Beat>& beats, Outcome* o, std::string* why) {
    o->kept.clear();
    size_t i = 0;
    // `n` bytes in beats of `kind`: full but the final one, which carries `last` when `lastAtEnd`.
    auto bytes = [&](uint8_t kind, uint32_t n, std::string* s, bool lastAtEnd) {
      for (uint32_t done = 0; done < n; i++) {
        if (i >= beats.size() || beats[i].kind != kind) return false;
        const uint32_t c = beats[i].count;
        if (c == 0 || c > uint32_t(W) || (c != uint32_t(W) && done + c != n)) return false;
        for (uint32_t k = 0; k < c; k++) s->push_back(char(beats[i].data[k / 4] >> (8 * (k % 4))));
        done += c;
        if (beats[i].last != (done == n && lastAtEnd)) return false;
      }
      return true;
    };
    while (i < beats.size() && beats[i].kind == 0) {
      const Beat h = beats[i++];
      Entry e;
      if (h.last || !bytes(1, h.keyBytes, &e.key, h.valueBytes == 0) || !bytes(2, h.valueBytes, &e.value, true)) {
        *why = "output entry " + std::to_string(o->kept.size()) + ": bad framing at beat " + std::to_string(i);
        return true;
      }
      o->kept.push_back(e);
    }
    const bool end = i < beats.size() && beats[i].kind == 3 && beats[i].last;
    if (end) i++;
    if (i != beats.size()) *why = "output beat " + std::to_string(i) + " after the END or out of frame";
    else if (end == o->error) *why = o->error ? "END beat after an error" : "no END beat";
    return true;
  }

  VMergeDrop top_;
  simc::Prng rng_;
  Ports ports_[K];
  std::vector<Source> src_;
  simc::Pause basePause_, outPause_, statusPause_;
  uint64_t violations_ = 0;
};

uint64_t Beats(uint64_t n) { return (n + W - 1) / W; }

}  // namespace

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  simc::setProgram("merge_harness");
  Options o;
  simc::Args args("merge_harness [options]: the merge and drop stage against the engine's model (Merger, DropRule)");
  args.number("--seed", &o.seed, "PRNG seed (jobs and stalls)");
  args.number("--jobs", &o.jobs, "jobs to run");
  args.number("--entries", &o.entries, "entries per run (random jobs: at most)", "N", uint64_t(1), uint64_t(100000));
  args.number("--max-value", &o.maxValue, "longest value in bytes", "N", uint64_t(0), uint64_t(1) << 20);
  args.number("--key-len", &o.keyLen, "throughput jobs: every internal key this long (user key + 8)", "N", uint64_t(0),
              uint64_t(te::kMaxInternalKeyBytes));
  args.number("--value-len", &o.valueLen, "throughput jobs: every value this long", "N", uint64_t(0),
              uint64_t(1) << 20);
  args.probability("--pin", &o.pin, "stall probability of every input and the isBase stream", true);
  args.probability("--pout", &o.pout, "stall probability of the output and status streams", true);
  args.probability("--malformed", &o.malformed,
                   "fraction of jobs with keys out of order (in a run, or one key in two runs)");
  args.probability("--bad-head", &o.inject, "fraction of jobs with one HEAD's key length under 8 or over the limit");
  args.flag("--tamper", &o.tamper, "change a byte of the model's first kept entry (the comparison must fail)");
  args.flag("--quiet", &o.quiet, "no line per mismatch");
  args.parse(argc, argv);
  if (o.keyLen && o.keyLen < 24) {
    std::fprintf(stderr, "merge_harness: --key-len %" PRIu64 " is under 24 (16-digit user key + tag)\n", o.keyLen);
    return 2;
  }

  simc::Prng gen(o.seed ^ 0x3e76e);
  Bench bench(o);
  uint64_t mismatches = 0, ok = 0, errors = 0, hangs = 0, in = 0, out = 0, dropped = 0, baseDrops = 0;
  uint64_t cycles = 0, bytesOut = 0, sameUser = 0;
  uint64_t codes[16] = {}, crossRun = 0;
  for (uint64_t j = 0; j < o.jobs; j++) {
    const Job job = RandomJob(gen, o);
    Outcome want = Model(job);
    if (o.tamper && !want.kept.empty()) want.kept[0].key[0] ^= 1;
    uint64_t beats = 0;
    for (const auto& run : job.runs) {
      for (const Entry& e : run) {
        beats += 1 + Beats(e.key.size()) + Beats(e.value.size());
        if (&e != &run[0] && te::CompareBytes(te::UserKey(e.key), te::UserKey((&e)[-1].key)) == 0) sameUser++;
      }
    }
    const uint64_t bound = 2000 + 40 * beats / (1 - std::max(o.pin, o.pout));
    BadHead bad;
    if (!want.error && gen.chance(o.inject)) {
      // The stage refuses the entry when its run loads it: after the run's previous entry left (at the
      // start, before any output), so the model's merge up to that entry gives what leaves before.
      std::vector<int> runs;
      for (int r = 0; r < K; r++)
        if (!job.runs[r].empty()) runs.push_back(r);
      if (!runs.empty()) {
        bad.run = runs[Below(gen, runs.size())];
        bad.entry = Below(gen, job.runs[bad.run].size());
        const bool shortKey = Below(gen, 2);
        bad.keyBytes = shortKey ? uint32_t(Below(gen, 8)) : uint32_t(te::kMaxInternalKeyBytes + 1 + Below(gen, 900));
        size_t kept = 0;
        if (bad.entry > 0) {
          const std::string& prev = job.runs[bad.run][bad.entry - 1].key;
          const size_t p = std::find(want.merged.begin(), want.merged.end(), prev) - want.merged.begin();
          kept = want.keptAfter[p];
        }
        want.kept.resize(kept);
        want.error = true;
        want.code = int(shortKey ? te::ErrorCode::kBadBlock : te::ErrorCode::kKeyTooLong);
        want.run = bad.run;
        want.entry = bad.entry;
      }
    }
    Outcome got;
    std::string why;
    uint64_t c = 0;
    if (!bench.Run(job, want.isBase, bad, &got, &why, &c, bound)) {
      hangs++;
      if (!o.quiet) std::printf("job %" PRIu64 ": no status within %" PRIu64 " clocks\n", j, bound);
      continue;
    }
    if (want.error) {
      if (got.error != want.error || got.code != want.code || got.run != want.run || got.entry != want.entry)
        why = "error differs";
      else if (got.kept != want.kept)
        why = "entries before the error differ";
    } else if (why.empty()) {
      if (got.error) why = "rtl error";
      else if (got.kept != want.kept) why = "kept entries differ";
      else if (got.in != want.in || got.out != want.out || got.dropped != want.dropped) why = "counters differ";
    }
    if (!why.empty()) {
      mismatches++;
      if (!o.quiet) {
        std::printf("job %" PRIu64 ": %s: rtl %s code %d run %d entry %" PRIu64 " in %" PRIu64 " out %" PRIu64
                    " kept %zu; model %s code %d run %d entry %" PRIu64 " in %" PRIu64 " kept %zu\n",
                    j, why.c_str(), got.error ? "error" : "ok", got.code, got.run, got.entry, got.in, got.out,
                    got.kept.size(), want.error ? "error" : "ok", want.code, want.run, want.entry, want.in,
                    want.kept.size());
        for (size_t k = 0; k < std::min(got.kept.size(), want.kept.size()); k++)
          if (!(got.kept[k] == want.kept[k])) {
            std::printf("  first difference at kept entry %zu (key %zu/%zu B)\n", k, got.kept[k].key.size(),
                        want.kept[k].key.size());
            break;
          }
      }
      continue;
    }
    if (want.error) {
      errors++;
      codes[want.code & 15]++;
      crossRun += want.crossRun;
    } else {
      ok++;
    }
    in += got.in;
    out += got.out;
    dropped += got.dropped;
    baseDrops += want.baseDrops;
    cycles += c;
    for (const Entry& e : got.kept) bytesOut += e.key.size() + e.value.size();
  }
  std::printf("jobs=%" PRIu64 " ok=%" PRIu64 " errors=%" PRIu64 " key_order=%" PRIu64 " bad_block=%" PRIu64 " key_too_long=%" PRIu64 " cross_run=%" PRIu64 " mismatches=%" PRIu64
              " hangs=%" PRIu64 " violations=%" PRIu64 " entries_in=%" PRIu64 " entries_out=%" PRIu64
              " dropped=%" PRIu64 " base_drops=%" PRIu64 " same_user_in_run=%" PRIu64 " cycles=%" PRIu64
              " entries_per_clock=%.4f bytes_per_clock=%.3f\n",
              o.jobs, ok, errors, codes[int(te::ErrorCode::kKeyOrder)],
              codes[int(te::ErrorCode::kBadBlock)], codes[int(te::ErrorCode::kKeyTooLong)], crossRun, mismatches, hangs, bench.violations(), in,
              out, dropped, baseDrops, sameUser, cycles, cycles ? double(out) / cycles : 0.0,
              cycles ? double(bytesOut) / cycles : 0.0);
  return mismatches || hangs || bench.violations() ? 1 : 0;
}
