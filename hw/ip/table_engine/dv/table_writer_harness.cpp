// Verilator harness of the table engine's table writer (top `TableWriter`, hw/ip/table_engine/rtl), differential
// against the engine's C++ model: per job, random sorted internal keys (user keys 0 bytes to the key limit,
// values up to --max-value), CUT beats at random places, options (block_size, restart interval, max_file_size)
// drawn per job; the model's TableWriter, driven as DBImpl::DoCompactionWork drives TableBuilder (model/
// compaction.cc: a new table at the first entry, closed after an entry once FileSize() >= max_file_size, or
// before an entry where the merge side cuts), writes the expected tables. The RTL's tables must equal them byte
// for byte, with their boundaries; each table's status (size, entries, key lengths) and its two keys must match,
// and the RTL's tables are read back into the job's entries by the model's TableReader and by stock LevelDB's
// Table (Debian's libleveldb, checksums verified). Random stalls on every
// stream. With --long-key, a job may hold a key over the limit: KEY_TOO_LONG with the entry's number, then a
// soft reset, and the next job must be right; with --bad, jobs the writer must refuse (BAD_JOB) and with
// --index-bytes (a build with a small index buffer) OUTPUT_FULL where the model's index blocks say. An index block
// past the index buffer spills: the harness keeps the spilled beats (--spill-bytes, the region's size told to the
// writer; 0: none) with random stalls, checks the spill protocol and predicts OUTPUT_FULL past buffer and region
// (and past --index-entries index entries of one table, the build's restart RAM).
// --bloom N|random: the jobs' bloom_bits_per_key (random: 0, 1, 10 or 20 per job); each filter block of the RTL's
// tables is also checked with LevelDB's own BloomFilterPolicy (Debian's libleveldb): every filter equals the
// policy's CreateFilter of the user keys of the data blocks starting in its 2 KiB, and KeyMayMatch holds for
// each of them. With --filter-limits B,K,F (a build with a small filter unit) OUTPUT_FULL where a table's filters
// would pass them. --compression snappy|random: jobs with Options::compression kSnappyCompression (random: half of
// them); the model compresses with its libsnappy-exact codec (LevelDB's 1/8 rule) and the RTL's tables must still
// be the same bytes, readable by stock LevelDB (Debian's, with its libsnappy).
//
// Prints one summary line (`jobs=... mismatches=... bytes_per_cycle=...`); exit status 0 all agree, 1 a
// mismatch, a hang or a stream-rule violation, 2 bad usage.
#include "VTableWriter.h"
#include "verilated.h"

#include <leveldb/filter_policy.h>
#include <leveldb/iterator.h>
#include <leveldb/table.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "args.h"
#include "coding.h"
#include "error.h"
#include "format.h"
#include "internal_key.h"
#include "leveldb_tables.h"
#include "limits.h"
#include "random_entries.h"
#include "table_reader.h"
#include "table_writer.h"
#include "entry_stream.h"
#include "tb.h"

namespace te = table_engine;

namespace {

#ifndef BEAT_BYTES
#define BEAT_BYTES 16
#endif
constexpr int W = BEAT_BYTES;
constexpr int kDataWords = W / 4;
constexpr int kSrcWords = kDataWords + 4;   // data, kind, count, keyBytes, valueBytes
constexpr int kSinkWords = kDataWords + 1;  // data, count
using te_dv::kControl;
using te_dv::kHead;
using te_dv::kKey;
using te_dv::kValue;
constexpr uint32_t kCut = 0, kEnd = 1;  // a control beat's count: close the table here, end of the job

using simc::getWords;
using simc::putWords;
inline void putWords(QData& s, const uint32_t* w) { s = w[0] | (QData)w[1] << 32; }
inline void getWords(const QData& s, uint32_t* w) { w[0] = (uint32_t)s, w[1] = (uint32_t)(s >> 32); }

struct Entry {
  std::string key, value;
  bool cutBefore = false;
};

struct Table {
  std::string bytes, smallest, largest;
  uint64_t entries = 0;
};

struct Job {
  std::vector<Entry> entries;
  uint64_t blockSize = 4096, interval = 16, maxFile = 2 << 20, bits = 0;
  bool snappy = false;
  uint64_t snappyKept = 0;  // the model's blocks stored in Snappy form (so the same in equal tables)
  std::vector<Table> expected;
  int64_t longKeyAt = -1;  // the entry with a key over the limit: the job stops there
  int64_t indexFullAt = -1;  // entries taken when an index block passes the RTL's index buffer (--index-bytes)
  int64_t filterFullAt = -1;  // entries taken when a table's filters pass the RTL's filter unit (--filter-limits)
  int64_t badJobAt = -1;     // BAD_JOB expected after this many entries (--bad)
  int64_t bigFullTable = -1;  // the output table whose big block the RTL refuses (OUTPUT_FULL; see BigRefusedTable)
  int64_t strayBefore = -1;  // a VALUE beat where this entry's HEAD is due
};

struct Status {
  bool done = false, error = false;
  unsigned code = 0;
  uint64_t size = 0, entries = 0, smallest = 0, largest = 0;
};

struct Options {
  uint64_t seed = 1, jobs = 20, indexBytes = 0, spillBytes = 0, indexEntries = 0, blockSize = 0, interval = 0, maxFile = 0, maxValue = 4096, maxEntries = 300,
           keyLen = 0, valueLen = 0, entries = 0;
  double pin = 0, pout = 0, cut = 0.02, longKey = 0, bad = 0;
  int64_t bloom = 0;  // bloom_bits_per_key of every job; -1: 0, 1, 10 or 20 at random per job
  int compression = 0;  // 0 none, 1 Snappy, -1 either at random per job
  int64_t letters = -1;  // values' alphabet with random keys (-1: 0, 1 or 2 letters at random)
  uint64_t filterBytes = 0, filterKeys = 0, maxFilters = 0;  // --filter-limits (0: never full in these jobs)
  bool quiet = false, tamper = false, maxFileGiven = false;
  std::string table;  // --table: one job of this LevelDB table's entries
};

// The model's tables for a job, as compaction.cc drives its TableWriter. A big block the engine refuses (the
// model's OUTPUT_FULL, limits.h kZipBlockBytes) ends them: `fullTable` (if given) is then its table, else -1.
std::vector<Table> ModelTables(const Job& j, uint64_t* snappyKept = nullptr, int64_t* fullTable = nullptr) {
  te::WriterOptions opt;
  opt.block_size = j.blockSize;
  opt.restart_interval = int(j.interval);
  opt.bloom_bits_per_key = int(j.bits);
  opt.snappy = j.snappy;
  opt.buffer_bytes = te::kDefaultOutputBufferBytes;
  opt.zip_block_bytes = te::kZipBlockBytes;  // the RTL's block buffer: its OUTPUT_FULL for big compressible blocks
  te::WriteStats stats;
  std::vector<Table> out;
  std::unique_ptr<te::TableWriter> w;
  Table cur;
  auto close = [&] {
    cur.bytes = w->Finish();
    cur.entries = w->entries();
    out.push_back(std::move(cur));
    cur = Table();
    w.reset();
  };
  if (fullTable) *fullTable = -1;
  try {
    for (const Entry& e : j.entries) {
      if (e.cutBefore && w) close();
      if (!w) {
        w = std::make_unique<te::TableWriter>(opt, "expected", &stats);
        cur.smallest = e.key;
      }
      cur.largest = e.key;
      w->Add(e.key, e.value);
      if (w->FileSize() >= j.maxFile) close();
    }
    if (w) close();
  } catch (const te::EngineError& e) {
    if (e.code != te::ErrorCode::kOutputFull || !fullTable) throw;
    *fullTable = int64_t(out.size());
  }
  if (snappyKept) *snappyKept = stats.snappy_kept;
  return out;
}

class Bench {
 public:
  explicit Bench(const Options& o)
      : rng_(o.seed), src_(&rng_, kSrcWords), out_(&rng_, kSinkWords), keys_(&rng_, kSinkWords), cmdPause_(&rng_),
        statusPause_(&rng_), spillPause_(&rng_) {
    src_.pause.set(o.pin);
    cmdPause_.set(o.pin);
    out_.pause.set(o.pout);
    keys_.pause.set(o.pout);
    statusPause_.set(o.pout);
    spillPause_.set(std::max(o.pin, o.pout));
    spillBytes_ = o.spillBytes;
    top_.reset = 1;
    for (int i = 0; i < 4; i++) Tick();
    top_.reset = 0;
  }

  // Runs one job until its `done` status; false on a hang (no such status within `bound` cycles).
  bool Run(const Job& j, std::vector<std::string>* tables, std::vector<std::string>* keys, std::vector<Status>* st,
           uint64_t* cycles, uint64_t bound) {
    src_.clear();
    out_.clear();
    keys_.clear();
    st->clear();
    spill_.clear();
    back_.clear();
    dataValid_ = false;
    for (size_t i = 0; i < j.entries.size(); i++) {
      const Entry& e = j.entries[i];
      if (int64_t(i) == j.strayBefore) PushBeat(kValue, "stray", 5, 0, 0, true);
      if (e.cutBefore) PushBeat(kControl, nullptr, kCut, 0, 0, true);
      PushBeat(kHead, nullptr, 0, e.key.size(), e.value.size(), false);
      for (int part = 0; part < 2; part++) {
        const std::string& s = part ? e.value : e.key;
        for (size_t p = 0; p < s.size(); p += W) {
          size_t n = std::min<size_t>(W, s.size() - p);
          PushBeat(part ? kValue : kKey, s.data() + p, n, 0, 0, p + n == s.size() && (part || e.value.empty()));
        }
      }
    }
    PushBeat(kControl, nullptr, kEnd, 0, 0, true);
    bool cmdSent = false;
    for (uint64_t t = 0; t < bound; t++) {
      top_.io_cmd_valid = !cmdSent && (top_.io_cmd_valid || !cmdPause_());
      top_.io_cmd_payload_blockSize = uint32_t(j.blockSize);
      top_.io_cmd_payload_restartInterval = uint32_t(j.interval);
      top_.io_cmd_payload_maxFileSize = uint32_t(j.maxFile);
      top_.io_cmd_payload_bitsPerKey = uint32_t(j.bits);
      top_.io_cmd_payload_snappy = j.snappy;
      top_.io_cmd_payload_spillBytes = uint32_t(spillBytes_);
      top_.io_spill_push_ready = !spillPause_();
      top_.io_spill_fetch_ready = !spillPause_();
      if (!dataValid_ && !back_.empty() && !spillPause_()) dataValid_ = true;  // once valid, held until taken
      top_.io_spill_data_valid = dataValid_;
      if (dataValid_) putWords(top_.io_spill_data_payload, back_.front().data());
      top_.io_entries_valid = src_.drive();
      if (src_.valid()) {
        const uint32_t* b = src_.beat();
        putWords(top_.io_entries_payload_fragment_data, b);
        top_.io_entries_payload_fragment_kind = b[kDataWords];
        top_.io_entries_payload_fragment_count = b[kDataWords + 1];
        top_.io_entries_payload_fragment_keyBytes = b[kDataWords + 2];
        top_.io_entries_payload_fragment_valueBytes = b[kDataWords + 3];
        top_.io_entries_payload_last = src_.last();
      }
      top_.io_output_ready = out_.drive();
      top_.io_keys_ready = keys_.drive();
      top_.io_status_ready = !statusPause_();
      top_.eval();
      if (top_.io_cmd_valid && top_.io_cmd_ready) cmdSent = true;
      if (top_.io_entries_valid && top_.io_entries_ready) src_.take();
      SpillTick();
      uint32_t w[kSinkWords];
      getWords(top_.io_output_payload_fragment_data, w);
      w[kDataWords] = top_.io_output_payload_fragment_count;
      out_.sample(top_.io_output_valid, w, top_.io_output_payload_last);
      getWords(top_.io_keys_payload_fragment_data, w);
      w[kDataWords] = top_.io_keys_payload_fragment_count;
      keys_.sample(top_.io_keys_valid, w, top_.io_keys_payload_last);
      if (top_.io_status_valid && top_.io_status_ready) {
        Status s;
        s.done = top_.io_status_payload_done;
        s.error = top_.io_status_payload_error;
        s.code = top_.io_status_payload_code;
        s.size = top_.io_status_payload_size;
        s.entries = top_.io_status_payload_entries;
        s.smallest = top_.io_status_payload_smallestBytes;
        s.largest = top_.io_status_payload_largestBytes;
        st->push_back(s);
        if (s.done) {
          Tick();
          *cycles = t + 1;
          if (!s.error && (!spill_.empty() || !back_.empty()))
            spillError = std::to_string(spill_.size() + back_.size()) + " spilled beats never came back";
          Split(out_, tables, "output");
          Split(keys_, keys, "keys");
          return true;
        }
      }
      Tick();
    }
    *cycles = bound;
    return false;
  }

  // One clock of softReset: the unit back to its reset state (after an error), nothing left on offer.
  void SoftReset() {
    top_.io_softReset = 1;
    top_.io_cmd_valid = 0;
    top_.io_entries_valid = 0;
    Tick();
    top_.io_softReset = 0;
    src_.clear();
    out_.dropPending();
    keys_.dropPending();
    spill_.clear();
    back_.clear();
    dataValid_ = false;
  }

  uint64_t violations() const { return out_.violations + keys_.violations; }
  std::string framingError, trailing, spillError;
  uint64_t spilledTables = 0, spilledBeats = 0;

 private:
  void PushBeat(uint32_t kind, const char* p, size_t n, uint64_t kl, uint64_t vl, bool last) {
    te_dv::PushEntryBeat<W>(src_, kind, p, n, kl, vl, last);
  }

  void Tick() {
    simc::tick(top_);
  }

  // The spill region after an eval: a push past it, a fetch of other than the table's pushed beats (or before the
  // last table's came back) are protocol errors; a payload that changes under a stalled push is one too.
  void SpillTick() {
    using Beat = std::array<uint32_t, kDataWords>;
    Beat b{};
    getWords(top_.io_spill_push_payload, b.data());
    if (pushHeld_ && (!top_.io_spill_push_valid || b != heldBeat_)) spillError = "spill push dropped or changed while stalled";
    pushHeld_ = top_.io_spill_push_valid && !top_.io_spill_push_ready;
    heldBeat_ = b;
    if (top_.io_spill_push_valid && top_.io_spill_push_ready) {
      if (spill_.size() >= spillBytes_ / W) spillError = "a spill push past the region's " + std::to_string(spillBytes_) + " bytes";
      spill_.push_back(b);
      spilledBeats++;
    }
    if (top_.io_spill_fetch_valid && top_.io_spill_fetch_ready) {
      if (top_.io_spill_fetch_payload != spill_.size() || !back_.empty())
        spillError = "fetch of " + std::to_string(top_.io_spill_fetch_payload) + " beats with " +
                     std::to_string(spill_.size()) + " pushed and " + std::to_string(back_.size()) + " not yet back";
      back_.assign(spill_.begin(), spill_.end());
      spill_.clear();
      spilledTables++;
    }
    if (dataValid_ && top_.io_spill_data_ready) {
      back_.pop_front();
      dataValid_ = false;
    }
  }

  // A sink's beats into byte strings, one per `last`, checking the framing: full beats but each string's final.
  void Split(const simc::StreamSink& s, std::vector<std::string>* out, const char* what) {
    out->clear();
    std::string cur;
    for (size_t i = 0; i < s.beats(); i++) {
      const uint32_t* b = s.beat(i);
      uint32_t cnt = b[kDataWords];
      bool last = s.lasts[i];
      if ((!last && cnt != W) || cnt == 0 || cnt > W)
        framingError = std::string(what) + " beat " + std::to_string(i) + ": count " + std::to_string(cnt);
      for (uint32_t k = 0; k < std::min<uint32_t>(cnt, W); k++) cur.push_back(char(uint8_t(b[k / 4] >> (8 * (k % 4)))));
      if (last) out->push_back(std::move(cur)), cur.clear();
    }
    // A job that stopped on an error leaves its table unfinished (no status names it): only then allowed.
    if (!cur.empty()) trailing = std::string(what) + ": bytes after the final last";
  }

  simc::Prng rng_;
  VTableWriter top_;
  simc::StreamSource src_;
  simc::StreamSink out_, keys_;
  simc::Pause cmdPause_, statusPause_, spillPause_;
  uint64_t spillBytes_ = 0;
  std::vector<std::array<uint32_t, kDataWords>> spill_;
  std::deque<std::array<uint32_t, kDataWords>> back_;
  std::array<uint32_t, kDataWords> heldBeat_{};
  bool dataValid_ = false, pushHeld_ = false;
};

using te_dv::Below;
using te_dv::KeyLength;
using te_dv::RandomBytes;
using te_dv::ValueLength;

std::string InternalKey(std::string user, uint64_t seq, int type) {
  te::AppendFixed64(&user, (seq << 8) | uint64_t(type));
  return user;
}

// Where the model's tables would pass an index buffer of `cap` bytes, as the RTL checks it before each index
// entry (the entries and restarts so far, this entry, then the count and the trailer): the job's entries taken
// by then (an index entry between blocks goes in after the next block's first entry, the last one at the
// table's end), or -1.
int64_t IndexFullAt(const Job& j, uint64_t cap, uint64_t maxEntries) {
  uint64_t before = 0;
  for (const Table& t : j.expected) {
    te::TableImage img{"expected", t.bytes};
    const std::vector<te::BlockHandle> blocks = te_dv::DataBlockHandles(img);
    te::BlockHandle ih = te::ReadFooter(img);
    std::string scratch, dataScratch;
    std::string_view index = te::ReadBlock(img, ih, false, &scratch, nullptr);
    te::BlockReader ir;
    ir.Start(index, &img.name, ih.offset, false, te::kMaxInternalKeyBytes + 1);
    uint64_t used = 0, inTable = 0;
    for (size_t k = 0; ir.Next(); k++) {
      te::BlockReader br;
      br.Start(te::ReadBlock(img, blocks[k], false, &dataScratch, nullptr), &img.name, blocks[k].offset, false,
               te::kMaxInternalKeyBytes + 1);
      while (br.Next()) inTable++;
      const uint64_t kb = ir.key().size(), bytes = kb + (kb < 128 ? 1 : 2) + 2 + ir.value().size() + 4;
      if (used + bytes + 4 + te::kTrailerBytes > cap || (maxEntries && k >= maxEntries)) return int64_t(before + inTable + (k + 1 < blocks.size() ? 1 : 0));
      used += bytes;
    }
    before += t.entries;
  }
  return -1;
}

// The index block's bytes the RTL holds: its index buffer and the spill region's whole beats.
uint64_t IndexCap(const Options& o) {
  return o.indexBytes + o.spillBytes / W * W;
}

// With Snappy, the model's data blocks past the RTL's block buffer of `cap` bytes (contents and trailer): the
// big blocks, which it streams out raw (LevelDB keeps them raw: the model refuses the others).
uint64_t BigBlocks(const Job& j, uint64_t cap) {
  if (!j.snappy) return 0;
  uint64_t n = 0;
  for (const Table& t : j.expected) {
    te::TableImage img{"expected", t.bytes};
    std::string scratch;
    for (const te::BlockHandle& h : te_dv::DataBlockHandles(img))
      n += te::ReadBlock(img, h, false, &scratch, nullptr).size() + te::kTrailerBytes > cap;
  }
  return n;
}

// The entries of each data block of a table, in order (the blocks as the index lists them).
std::vector<std::vector<std::string>> BlockKeys(const te::TableImage& img, const std::vector<te::BlockHandle>& blocks) {
  std::vector<std::vector<std::string>> out;
  std::string scratch;
  for (const te::BlockHandle& h : blocks) {
    te::BlockReader br;
    br.Start(te::ReadBlock(img, h, false, &scratch, nullptr), &img.name, h.offset, false, te::kMaxInternalKeyBytes + 1);
    out.emplace_back();
    while (br.Next()) out.back().emplace_back(br.key());
  }
  return out;
}

// Where the RTL's filter unit must stop the job (OUTPUT_FULL) with limits `fb` filter-buffer bytes, `fk` keys in
// one filter and `mf` filters in one table, as it checks them: a HEAD when the open filter already has `fk` keys
// (the entries before it); a data block's FLUSH that closes a filter (its end in a later 2 KiB) and the table's
// end when the filter's bit array and count byte would pass the buffer or the filters the offset RAM (the entries
// up to the block's last). The job's entries taken by then, or -1.
int64_t FilterFullAt(const Job& j, uint64_t fb, uint64_t fk, uint64_t mf) {
  if (!j.bits) return -1;
  uint64_t before = 0;
  for (const Table& t : j.expected) {
    te::TableImage img{"expected", t.bytes};
    const std::vector<te::BlockHandle> blocks = te_dv::DataBlockHandles(img);
    const std::vector<std::vector<std::string>> keys = BlockKeys(img, blocks);
    uint64_t open = 0, issued = 0, used = 0, taken = 0;
    auto over = [&](uint64_t target) {
      const uint64_t bytes = (std::max<uint64_t>(64, open * j.bits) + 7) / 8;
      return target > mf || (open && used + bytes + 1 > fb);
    };
    auto issue = [&](uint64_t target) {
      if (open) used += (std::max<uint64_t>(64, open * j.bits) + 7) / 8 + 1;
      issued = target, open = 0;
    };
    for (size_t b = 0; b < blocks.size(); b++) {
      for (size_t e = 0; e < keys[b].size(); e++, taken++, open++)
        if (open == fk) return int64_t(before + taken);
      const uint64_t idx = (blocks[b].offset + blocks[b].size + te::kTrailerBytes) >> 11;
      if (idx > issued) {
        if (over(idx)) return int64_t(before + taken);
        issue(idx);
      }
    }
    if (open && over(issued + 1)) return int64_t(before + taken);
    before += t.entries;
  }
  return -1;
}

// The filter block of an RTL table checked with LevelDB's own BloomFilterPolicy (`bits` per key): located by the
// metaindex's "filter.leveldb.BuiltinBloomFilter2" entry (its CRC checked), kFilterBaseLg 11, every filter equal
// to the policy's CreateFilter of the user keys of the data blocks whose offsets fall in its 2 KiB (empty when
// none), each of those keys matching it. "" when right.
std::string CheckFilter(const std::string& bytes, uint64_t bits) {
  try {
    te::TableImage img{"rtl table", bytes};
    const std::vector<te::BlockHandle> blocks = te_dv::DataBlockHandles(img);
    const std::vector<std::vector<std::string>> keys = BlockKeys(img, blocks);
    const uint8_t* foot = reinterpret_cast<const uint8_t*>(bytes.data()) + bytes.size() - te::kFooterBytes;
    uint64_t mo = 0, ms = 0;
    const uint8_t* p = te::ParseVarint64(foot, foot + te::kFooterBytes, &mo);
    if (p) p = te::ParseVarint64(p, foot + te::kFooterBytes, &ms);
    if (!p) return "footer: bad metaindex handle";
    std::string scratch, fscratch;
    std::string_view meta = te::ReadBlock(img, te::BlockHandle{mo, ms}, true, &scratch, nullptr);
    te::BlockReader mr;
    mr.Start(meta, &img.name, mo, false, te::kMaxInternalKeyBytes + 1);
    if (!mr.Next() || mr.key() != std::string("filter.") + te::kBloomPolicyName) return "metaindex: no filter entry";
    const te::BlockHandle fh = te::DecodeIndexHandle(mr.value(), img.name, mo);
    if (mr.Next()) return "metaindex: more than one entry";
    const std::string block(te::ReadBlock(img, fh, true, &fscratch, nullptr));
    if (block.size() < 5 || block.back() != 11) return "filter block: no base lg 11";
    const uint8_t* u = reinterpret_cast<const uint8_t*>(block.data());
    const uint32_t array = te::LoadFixed32(u + block.size() - 5);
    if (array > block.size() - 5 || (block.size() - 5 - array) % 4) return "filter block: bad offset array";
    const size_t n = (block.size() - 5 - array) / 4;
    std::vector<std::vector<std::string>> perFilter(n);
    for (size_t b = 0; b < blocks.size(); b++) {
      const size_t i = blocks[b].offset >> 11;
      if (i >= n) return "filter block: no filter for the block at " + std::to_string(blocks[b].offset);
      for (const std::string& k : keys[b]) perFilter[i].emplace_back(te::UserKey(k));
    }
    std::unique_ptr<const leveldb::FilterPolicy> policy(leveldb::NewBloomFilterPolicy(int(bits)));
    for (size_t i = 0; i < n; i++) {
      const uint32_t from = te::LoadFixed32(u + array + 4 * i);
      const uint32_t to = i + 1 < n ? te::LoadFixed32(u + array + 4 * i + 4) : array;
      if (from > to || to > array) return "filter " + std::to_string(i) + ": bad offsets";
      const leveldb::Slice filter(block.data() + from, to - from);
      std::string want;
      if (!perFilter[i].empty()) {
        std::vector<leveldb::Slice> ks(perFilter[i].begin(), perFilter[i].end());
        policy->CreateFilter(ks.data(), int(ks.size()), &want);
      }
      if (filter.ToString() != want) return "filter " + std::to_string(i) + " differs from LevelDB's CreateFilter";
      for (const std::string& k : perFilter[i])
        if (!policy->KeyMayMatch(k, filter)) return "filter " + std::to_string(i) + ": LevelDB's KeyMayMatch misses a key";
    }
  } catch (const te::EngineError& e) {
    return std::string("filter check: ") + e.Line();
  }
  return "";
}

// A job's bloom_bits_per_key: --bloom, or 0, 1, 10 or 20 at random.
uint64_t JobBits(simc::Prng& r, const Options& o) {
  static const uint64_t kBits[] = {0, 1, 10, 20};
  return o.bloom >= 0 ? uint64_t(o.bloom) : kBits[Below(r, 4)];
}

// A job's compression: --compression, or either at random (no draw otherwise: the other options' jobs unchanged).
bool JobSnappy(simc::Prng& r, const Options& o) { return o.compression >= 0 ? o.compression == 1 : Below(r, 2) == 1; }

// --table PATH: the entries of a LevelDB table file (read by the model's TableReader, checksums verified), one
// job with the options given (random ones drawn as for random jobs); no cuts.
Job TableJob(simc::Prng& r, const Options& o) {
  Job j;
  static const uint64_t kBlocks[] = {64, 256, 1024, 4096};
  j.blockSize = o.blockSize ? o.blockSize : kBlocks[Below(r, 4)];
  j.interval = o.interval ? o.interval : (Below(r, 2) ? 16 : 1);
  j.maxFile = o.maxFileGiven ? o.maxFile : 2 << 20;
  j.bits = JobBits(r, o);
  j.snappy = JobSnappy(r, o);
  const std::vector<uint8_t> f = simc::readFile(o.table, "--table");
  const std::string bytes(f.begin(), f.end());
  te::TableImage img{o.table, bytes};
  te::ReadStats stats;
  try {
    te::TableReader tr(&img, true, &stats);
    while (tr.Next()) j.entries.push_back(Entry{std::string(tr.key()), std::string(tr.value()), false});
  } catch (const te::EngineError& e) {
    simc::die("--table %s", e.Line().c_str());
  }
  j.expected = ModelTables(j, &j.snappyKept, &j.bigFullTable);
  if (o.indexBytes) j.indexFullAt = IndexFullAt(j, IndexCap(o), o.indexEntries);
  if (o.filterBytes) j.filterFullAt = FilterFullAt(j, o.filterBytes, o.filterKeys, o.maxFilters);
  return j;
}

Job RandomJob(simc::Prng& r, const Options& o) {
  Job j;
  static const uint64_t kBlocks[] = {64, 256, 1024, 4096};
  static const uint64_t kFiles[] = {0, 1024, 4096, 16384, 2 << 20};
  j.blockSize = o.blockSize ? o.blockSize : kBlocks[Below(r, 4)];
  j.interval = o.interval ? o.interval : (Below(r, 2) ? 16 : 1);
  j.maxFile = o.maxFileGiven ? o.maxFile : kFiles[Below(r, 5)];
  j.bits = JobBits(r, o);
  j.snappy = JobSnappy(r, o);
  std::vector<std::string> keys;
  if (o.keyLen) {  // fixed lengths (throughput): consecutive numbers, as db_bench's keys
    // Zero-padded to the length, as printf's "%0*" would: any length (a fixed buffer read past its end gave
    // keys of stack bytes beyond 31 that changed with the compiler's optimisation level).
    for (uint64_t i = 0; i < o.entries; i++) {
      const std::string num = std::to_string(i);
      const std::string user =
          num.size() >= o.keyLen ? num.substr(0, o.keyLen) : std::string(o.keyLen - num.size(), '0') + num;
      keys.push_back(InternalKey(user, o.entries - i, 1));
    }
  } else {
    const int alphabet = int(1 + Below(r, 4));  // few letters: long shared prefixes, near separators
    const size_t n = o.entries ? o.entries : 1 + Below(r, o.maxEntries);
    for (size_t i = 0; i < n; i++) {
      size_t len = KeyLength(r);
      len = len > 8 ? len - 8 : Below(r, 3);
      std::string user;
      if (Below(r, 8) == 0) user.assign(Below(r, len + 1), '\xff');  // ShortSuccessor's and the separator's 0xff rule
      user += RandomBytes(r, len - user.size(), Below(r, 3) ? alphabet : 0);
      if (Below(r, 6) == 0 && !keys.empty()) user = te::UserKey(keys[Below(r, keys.size())]);  // same user key, another sequence
      keys.push_back(InternalKey(user, Below(r, uint64_t(1) << 56), int(Below(r, 2))));
    }
    std::sort(keys.begin(), keys.end(), [](const std::string& a, const std::string& b) { return te::CompareInternal(a, b) < 0; });
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  }
  for (size_t i = 0; i < keys.size(); i++) {
    Entry e;
    e.key = keys[i];
    // The alphabet drawn before the length: the order GCC evaluated them in as RandomBytes' arguments before
    // --value-len and --letters existed, so the same seeds draw the same jobs.
    const int letters = o.keyLen ? 0 : o.letters >= 0 ? int(o.letters) : int(Below(r, 3));
    const size_t vlen = o.keyLen || o.valueLen ? o.valueLen : ValueLength(r, o.maxValue);
    e.value = RandomBytes(r, vlen, letters);
    e.cutBefore = r.chance(o.cut);
    j.entries.push_back(std::move(e));
  }
  if (r.chance(o.longKey)) {  // one key 1 to 16 bytes over the limit: the job stops at it
    j.longKeyAt = int64_t(Below(r, j.entries.size()));
    Entry& e = j.entries[size_t(j.longKeyAt)];
    e.key = InternalKey(RandomBytes(r, te::kMaxUserKeyBytes + 1 + Below(r, 16), 0), 1, 1);
    e.cutBefore = false;
  }
  if (j.longKeyAt < 0 && r.chance(o.bad)) {  // a job the writer refuses: BAD_JOB, then a soft reset
    const size_t at = Below(r, j.entries.size());
    switch (Below(r, 4)) {
      case 0: j.interval = 0, j.badJobAt = 0; break;          // LevelDB asserts an interval >= 1
      case 1: j.blockSize = uint64_t(1) << 31, j.badJobAt = 0; break;  // past the restart RAM's guarantee
      case 2: j.strayBefore = int64_t(at), j.badJobAt = int64_t(at); break;  // not a HEAD where one is due
      default:  // not an internal key: shorter than its 8-byte tag
        j.entries[at].key.resize(Below(r, 8));
        j.entries[at].cutBefore = false;
        j.badJobAt = int64_t(at);
    }
    return j;
  }
  if (j.longKeyAt < 0) j.expected = ModelTables(j, &j.snappyKept, &j.bigFullTable);
  if (j.longKeyAt < 0 && o.indexBytes) j.indexFullAt = IndexFullAt(j, IndexCap(o), o.indexEntries);
  if (j.longKeyAt < 0 && o.filterBytes) j.filterFullAt = FilterFullAt(j, o.filterBytes, o.filterKeys, o.maxFilters);
  return j;
}

// The RTL's table read back by the model's TableReader: exactly the entries [from, from + n) of the job.
std::string ReadBack(const std::string& bytes, const Job& j, size_t from, size_t n) {
  te::TableImage img{"rtl table", bytes};
  te::ReadStats stats;
  try {
    te::TableReader tr(&img, true, &stats);
    size_t i = 0;
    while (tr.Next()) {
      if (i >= n || from + i >= j.entries.size()) return "read back: more entries than written";
      const Entry& e = j.entries[from + i];
      if (tr.key() != e.key || tr.value() != e.value) return "read back: entry " + std::to_string(i) + " differs";
      i++;
    }
    if (i != n) return "read back: " + std::to_string(i) + " entries of " + std::to_string(n);
  } catch (const te::EngineError& e) {
    return std::string("read back: ") + e.Line();
  }
  return "";
}

// The RTL's table opened by stock LevelDB's Table (Debian's libleveldb; block checksums verified) from a scratch
// file: its iterator must give exactly the entries [from, from + n) of the job.
std::string LevelDbReadBack(const std::string& bytes, const Job& j, size_t from, size_t n, const std::string& path) {
  {
    FILE* f = fopen(path.c_str(), "wb");
    if (!f || fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || fclose(f) != 0)
      simc::die("scratch table %s: cannot write", path.c_str());
  }
  leveldb::RandomAccessFile* file = nullptr;
  leveldb::Status st = leveldb::Env::Default()->NewRandomAccessFile(path, &file);
  if (!st.ok()) simc::die("scratch table %s: %s", path.c_str(), st.ToString().c_str());
  std::unique_ptr<leveldb::RandomAccessFile> fileOwner(file);
  leveldb::Table* table = nullptr;
  leveldb::Options opt;
  opt.paranoid_checks = true;
  std::unique_ptr<const leveldb::FilterPolicy> policy(j.bits ? leveldb::NewBloomFilterPolicy(int(j.bits)) : nullptr);
  opt.filter_policy = policy.get();  // Table::Open then reads the filter block the metaindex names
  st = leveldb::Table::Open(opt, file, bytes.size(), &table);
  if (!st.ok()) return "LevelDB Table::Open: " + st.ToString();
  std::unique_ptr<leveldb::Table> tableOwner(table);
  leveldb::ReadOptions ro;
  ro.verify_checksums = true;
  std::unique_ptr<leveldb::Iterator> it(table->NewIterator(ro));
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), i++) {
    if (i >= n) return "LevelDB reads more entries than written";
    const Entry& e = j.entries[from + i];
    if (it->key().ToString() != e.key || it->value().ToString() != e.value)
      return "LevelDB reads entry " + std::to_string(i) + " differently";
  }
  if (!it->status().ok()) return "LevelDB iterator: " + it->status().ToString();
  if (i != n) return "LevelDB reads " + std::to_string(i) + " entries of " + std::to_string(n);
  return "";
}

// What differs between the RTL's job and the model's, or "".
std::string Check(const Job& j, const std::vector<std::string>& tables, const std::vector<std::string>& keys,
                  const std::vector<Status>& st, const std::string& scratch) {
  const Status& done = st.back();
  if (j.longKeyAt >= 0) {
    if (!done.error || done.code != unsigned(te::ErrorCode::kKeyTooLong) || done.entries != uint64_t(j.longKeyAt))
      return "expected KEY_TOO_LONG at entry " + std::to_string(j.longKeyAt) + ", got error=" + std::to_string(done.error) +
             " code=" + std::to_string(done.code) + " entries=" + std::to_string(done.entries);
    return "";
  }
  if (j.badJobAt >= 0) {
    if (!done.error || done.code != unsigned(te::ErrorCode::kBadJob) || done.entries != uint64_t(j.badJobAt))
      return "expected BAD_JOB after " + std::to_string(j.badJobAt) + " entries, got error=" + std::to_string(done.error) +
             " code=" + std::to_string(done.code) + " entries=" + std::to_string(done.entries);
    return "";
  }
  if (j.bigFullTable >= 0) {  // the entries taken by then are not predicted (as for other Snappy OUTPUT_FULLs)
    if (!done.error || done.code != unsigned(te::ErrorCode::kOutputFull))
      return "expected OUTPUT_FULL in table " + std::to_string(j.bigFullTable) + " (a big Snappy block), got error=" +
             std::to_string(done.error) + " code=" + std::to_string(done.code);
    if (st.size() != size_t(j.bigFullTable) + 1) return "OUTPUT_FULL after " + std::to_string(st.size() - 1) + " tables";
    for (size_t t = 0; t + 1 < st.size(); t++)
      if (tables[t] != j.expected[t].bytes) return "table before OUTPUT_FULL differs";
    return "";
  }
  if (j.indexFullAt >= 0 || j.filterFullAt >= 0) {
    const int64_t at = j.indexFullAt < 0 ? j.filterFullAt
                       : j.filterFullAt < 0 ? j.indexFullAt : std::min(j.indexFullAt, j.filterFullAt);
    if (!done.error || done.code != unsigned(te::ErrorCode::kOutputFull) || done.entries != uint64_t(at))
      return "expected OUTPUT_FULL after " + std::to_string(at) + " entries, got error=" +
             std::to_string(done.error) + " code=" + std::to_string(done.code) + " entries=" + std::to_string(done.entries);
    for (size_t t = 0; t + 1 < st.size(); t++)  // the tables before it are whole and right
      if (t >= j.expected.size() || t >= tables.size() || tables[t] != j.expected[t].bytes) return "table before OUTPUT_FULL differs";
    return "";
  }
  if (done.error) return "error status, code " + std::to_string(done.code);
  if (tables.size() != j.expected.size() || st.size() != j.expected.size() + 1)
    return std::to_string(tables.size()) + " tables (" + std::to_string(st.size() - 1) + " statuses), model " +
           std::to_string(j.expected.size());
  if (keys.size() != 2 * tables.size()) return std::to_string(keys.size()) + " keys for " + std::to_string(tables.size()) + " tables";
  uint64_t total = 0, from = 0;
  for (size_t t = 0; t < tables.size(); t++) {
    const Table& e = j.expected[t];
    const std::string& got = tables[t];
    const std::string at = "table " + std::to_string(t) + ": ";
    if (got != e.bytes) {
      size_t p = 0;
      while (p < got.size() && p < e.bytes.size() && got[p] == e.bytes[p]) p++;
      if (getenv("TW_DUMP")) {
        for (size_t q = p >= 32 ? p - 32 : 0; q < std::min(got.size(), p + 48); q++)
          fprintf(stderr, "%zu: %02x %02x%s\n", q, uint8_t(got[q]), uint8_t(e.bytes[q]), got[q] != e.bytes[q] ? " *" : "");
      }
      return at + "bytes differ at " + std::to_string(p) + " (RTL " + std::to_string(got.size()) + " bytes, model " +
             std::to_string(e.bytes.size()) + ")";
    }
    const Status& s = st[t];
    if (s.done || s.size != got.size() || s.entries != e.entries || s.smallest != e.smallest.size() ||
        s.largest != e.largest.size())
      return at + "status size " + std::to_string(s.size) + " entries " + std::to_string(s.entries) + " keys " +
             std::to_string(s.smallest) + "/" + std::to_string(s.largest);
    if (keys[2 * t] != e.smallest || keys[2 * t + 1] != e.largest) return at + "smallest or largest key differs";
    std::string rb = ReadBack(got, j, from, e.entries);
    if (rb.empty()) rb = LevelDbReadBack(got, j, from, e.entries, scratch);
    if (rb.empty() && j.bits) rb = CheckFilter(got, j.bits);
    if (!rb.empty()) return at + rb;
    from += e.entries;
    total += got.size();
  }
  if (done.entries != j.entries.size() || done.size != total)
    return "done status entries " + std::to_string(done.entries) + " bytes " + std::to_string(done.size);
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  simc::setProgram("table_writer_harness");
  Options o;
  simc::Args args("table_writer_harness [options]: the table writer against the model's TableWriter");
  args.number("--seed", &o.seed, "PRNG seed (entries, options, stalls)");
  args.number("--jobs", &o.jobs, "jobs to run");
  args.number("--block-size", &o.blockSize, "block_size (0: 64, 256, 1 KiB or 4 KiB at random per job)", "N", uint64_t(0),
              uint64_t(15000));
  args.number("--interval", &o.interval, "restart interval (0: 1 or 16 at random per job)", "N", uint64_t(0), uint64_t(1024));
  args.custom("--max-file", "N", "max_file_size, 0 to 2^31 (default: 0, 1 KiB, 4 KiB, 16 KiB or 2 MiB at random per job)",
              [&](const std::string& opt, const std::string& v) {
                std::string why;
                if (!simc::parseUnsigned(v, uint64_t(1) << 31, &o.maxFile, &why)) simc::die("%s: %s", opt.c_str(), why.c_str());
                o.maxFileGiven = true;
              });
  args.number("--max-value", &o.maxValue, "longest random value in bytes", "N", uint64_t(0), uint64_t(1) << 20);
  args.number("--max-entries", &o.maxEntries, "most entries of a random job", "N", uint64_t(1), uint64_t(1) << 20);
  args.number("--entries", &o.entries, "entries per job (0: 1 to --max-entries at random)", "N", uint64_t(0), uint64_t(1) << 24);
  args.number("--key-len", &o.keyLen, "every user key this long (consecutive numbers), with --entries (0: random keys)", "N",
              uint64_t(0), uint64_t(te::kMaxUserKeyBytes));
  args.number("--value-len", &o.valueLen, "every value this long (random keys: 0 draws lengths)", "N", uint64_t(0),
              uint64_t(1) << 20);
  args.number("--letters", &o.letters, "random keys' values of this many letters (0: random bytes; default 0, 1 or 2 "
              "at random: random bytes do not compress, few letters do)", "N", int64_t(0), int64_t(26));
  args.probability("--cut", &o.cut, "chance of a CUT beat before each entry");
  args.probability("--pin", &o.pin, "stall probability of the command and entry streams", true);
  args.probability("--pout", &o.pout, "stall probability of the output, key and status streams", true);
  args.probability("--long-key", &o.longKey,
                   "fraction of jobs with one key over the limit (KEY_TOO_LONG, then a soft reset)");
  args.probability("--bad", &o.bad, "fraction of jobs the writer must refuse (BAD_JOB: restart interval 0, block_size "
                   "2^31, a VALUE beat where a HEAD is due, a key under 8 bytes), then a soft reset");
  args.number("--index-bytes", &o.indexBytes, "the RTL's index buffer as generated (0: never full in these jobs)");
  args.number("--spill-bytes", &o.spillBytes, "the spill region told to the writer, bytes (0: none)", "N", uint64_t(0),
              uint64_t(0xffffffff));
  args.number("--index-entries", &o.indexEntries, "the RTL's index restart RAM as generated (0: never full in these jobs)");
  args.custom("--bloom", "N|random", "bloom_bits_per_key of every job, 0 to 1000 (0: no filter block; default 0), or "
              "random: 0, 1, 10 or 20 per job",
              [&](const std::string& opt, const std::string& v) {
                uint64_t n = 0;
                std::string why;
                if (v == "random") o.bloom = -1;
                else if (simc::parseUnsigned(v, 1000, &n, &why)) o.bloom = int64_t(n);
                else simc::die("%s: %s", opt.c_str(), why.c_str());
              });
  args.custom("--filter-limits", "B,K,F", "the RTL's filter unit as generated: buffer bytes, keys of one filter, "
              "filters of one table (default: never full in these jobs)",
              [&](const std::string& opt, const std::string& v) {
                uint64_t* dst[] = {&o.filterBytes, &o.filterKeys, &o.maxFilters};
                size_t at = 0;
                for (int i = 0; i < 3; i++) {
                  const size_t comma = i < 2 ? v.find(',', at) : v.size();
                  std::string why;
                  if (comma == std::string::npos || !simc::parseUnsigned(v.substr(at, comma - at), uint64_t(1) << 30, dst[i], &why) ||
                      *dst[i] == 0)
                    simc::die("%s: '%s' is not three positive numbers B,K,F%s%s", opt.c_str(), v.c_str(), why.empty() ? "" : ": ",
                              why.c_str());
                  at = comma + 1;
                }
              });
  args.custom("--compression", "none|snappy|random", "Options::compression of every job (default none), or either "
              "at random per job",
              [&](const std::string& opt, const std::string& v) {
                if (v == "none") o.compression = 0;
                else if (v == "snappy") o.compression = 1;
                else if (v == "random") o.compression = -1;
                else simc::die("%s: '%s' is not none, snappy or random", opt.c_str(), v.c_str());
              });
  args.custom("--table", "PATH", "one job (--jobs times) of the entries of this LevelDB table file",
              [&](const std::string&, const std::string& v) { o.table = v; });
  args.flag("--tamper", &o.tamper, "change a byte of each job's first expected table (the comparison must fail)");
  args.flag("--quiet", &o.quiet, "no line per mismatch");
  args.parse(argc, argv);
  if (o.keyLen && !o.entries) simc::die("--key-len needs --entries");

  simc::Prng gen(o.seed ^ 0x7ab1e);
  const std::string scratch = te_dv::ScratchTablePath("table_writer_harness");
  Bench bench(o);
  uint64_t mismatches = 0, hangs = 0, entries = 0, tables = 0, cycles = 0, bytesIn = 0, bytesOut = 0, longKeys = 0,
           indexFull = 0, filterFull = 0, badJobs = 0, filtered = 0, compressed = 0, snappyBlocks = 0,
           bigRaw = 0, bigFull = 0;
  for (uint64_t i = 0; i < o.jobs; i++) {
    Job j = o.table.empty() ? RandomJob(gen, o) : TableJob(gen, o);
    const bool stops = j.longKeyAt >= 0 || j.indexFullAt >= 0 || j.filterFullAt >= 0 || j.badJobAt >= 0 || j.bigFullTable >= 0;  // the job ends in an error status
    if (o.tamper && !j.expected.empty()) j.expected[0].bytes[j.expected[0].bytes.size() / 2] ^= 1;
    uint64_t payload = 0;
    for (auto& e : j.entries) payload += e.key.size() + e.value.size();
    // Snappy: the compressor's power-up clear of its hash table (16,384 clocks) and about a byte a clock.
    const uint64_t bound = 20000 + 40 * (payload / W + 16 * j.entries.size()) + (j.snappy ? 40000 + 40 * payload : 0);
    std::vector<std::string> gotTables, gotKeys;
    std::vector<Status> st;
    uint64_t used = 0;
    std::string why;
    bench.framingError.clear();
    bench.trailing.clear();
    bench.spillError.clear();
    if (!bench.Run(j, &gotTables, &gotKeys, &st, &used, bound)) {
      hangs++;
      why = "no done status within " + std::to_string(bound) + " cycles";
    } else if (!bench.framingError.empty() || (!stops && !bench.trailing.empty()) || !bench.spillError.empty()) {
      why = bench.framingError + bench.trailing + bench.spillError;
    } else {
      why = Check(j, gotTables, gotKeys, st, scratch);
    }
    if (stops || !why.empty()) bench.SoftReset();
    if (!why.empty()) {
      mismatches++;
      if (!o.quiet)
        fprintf(stderr, "job %" PRIu64 " (%zu entries, block_size %" PRIu64 ", interval %" PRIu64 ", max_file %" PRIu64 "): %s\n",
                i, j.entries.size(), j.blockSize, j.interval, j.maxFile, why.c_str());
      continue;
    }
    if (stops) {
      longKeys += j.longKeyAt >= 0;
      indexFull += j.indexFullAt >= 0 && (j.filterFullAt < 0 || j.indexFullAt <= j.filterFullAt);
      filterFull += j.filterFullAt >= 0 && (j.indexFullAt < 0 || j.filterFullAt < j.indexFullAt);
      badJobs += j.badJobAt >= 0;
      bigFull += j.bigFullTable >= 0;
      continue;
    }
    entries += j.entries.size();
    tables += gotTables.size();
    if (j.bits) filtered += gotTables.size();
    if (j.snappy) compressed += gotTables.size();
    snappyBlocks += j.snappyKept;
    bigRaw += BigBlocks(j, te::kZipBlockBytes);
    cycles += used;
    bytesIn += payload;
    for (auto& t : gotTables) bytesOut += t.size();
  }
  unlink(scratch.c_str());
  printf("jobs=%" PRIu64 " mismatches=%" PRIu64 " hangs=%" PRIu64 " violations=%" PRIu64 " entries=%" PRIu64 " tables=%" PRIu64
         " filtered_tables=%" PRIu64 " snappy_tables=%" PRIu64 " snappy_blocks=%" PRIu64 " long_keys=%" PRIu64 " index_full=%" PRIu64 " filter_full=%" PRIu64 " bad_jobs=%" PRIu64
         " big_raw_blocks=%" PRIu64 " big_full=%" PRIu64 " spilled_tables=%" PRIu64 " spilled_beats=%" PRIu64 " cycles=%" PRIu64 " bytes_in=%" PRIu64 " bytes_out=%" PRIu64
         " bytes_per_cycle=%.3f out_bytes_per_cycle=%.3f\n",
         o.jobs, mismatches, hangs, bench.violations(), entries, tables, filtered, compressed, snappyBlocks, longKeys, indexFull, filterFull, badJobs,
         bigRaw, bigFull, bench.spilledTables, bench.spilledBeats, cycles, bytesIn, bytesOut,
         cycles ? double(bytesIn) / cycles : 0.0, cycles ? double(bytesOut) / cycles : 0.0);
  return mismatches || hangs || bench.violations() ? 1 : 0;
}
