// The table engine's two stream shapes as the unit harnesses drive and check them (doc/rtl.md, "entry
// stream"): an entry stream of HEAD / KEY / VALUE beats (the block reader's and table reader's output,
// the block builder's and table writer's input) and a byte stream of full beats but the last (the Snappy
// units, the block builder's output). One copy, so a harness cannot check a framing rule the others do not.
//
// A beat is `W` data bytes in W/4 little-endian words followed by its side words: an entry beat carries
// kind, count, key bytes, value bytes (the last two on HEAD only); a byte beat carries its count.
#ifndef TE_DV_ENTRY_STREAM_H
#define TE_DV_ENTRY_STREAM_H

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tb.h"

namespace te_dv {

// Entry-stream beat kinds (EntryKind in rtl/BlockReader.scala); the writer's control beat is kind 3.
enum BeatKind : uint32_t { kHead = 0, kKey = 1, kValue = 2, kControl = 3 };

inline uint8_t BeatByte(const uint32_t* d, size_t k) { return uint8_t(d[k / 4] >> (8 * (k % 4))); }

// Pushes one entry-stream beat of `n` (<= W) bytes at `p` (null: none), with HEAD's lengths `kl`, `vl`.
template <int W>
void PushEntryBeat(simc::StreamSource& src, uint32_t kind, const char* p, size_t n, uint64_t kl, uint64_t vl,
                   bool last) {
  constexpr int kDataWords = W / 4;
  uint32_t w[kDataWords + 4] = {};
  uint8_t bytes[W] = {};
  if (p) std::copy(p, p + n, bytes);
  for (int j = 0; j < kDataWords; j++) w[j] = simc::le32(&bytes[4 * j]);
  w[kDataWords] = kind;
  w[kDataWords + 1] = uint32_t(n);
  w[kDataWords + 2] = uint32_t(kl);
  w[kDataWords + 3] = uint32_t(vl);
  src.push(w, last);
}

// Pushes one entry: HEAD, then its key and its value in full beats but each part's last; `last` on the
// entry's final beat (HEAD itself for an empty key and value).
template <int W, class Entry>
void PushEntry(simc::StreamSource& src, const Entry& e) {
  PushEntryBeat<W>(src, kHead, nullptr, 0, e.key.size(), e.value.size(), e.key.empty() && e.value.empty());
  for (int part = 0; part < 2; part++) {
    const std::string& s = part ? e.value : e.key;
    for (size_t p = 0; p < s.size(); p += W) {
      const size_t n = std::min<size_t>(W, s.size() - p);
      PushEntryBeat<W>(src, part ? kValue : kKey, s.data() + p, n, 0, 0, p + n == s.size() && (part || e.value.empty()));
    }
  }
}

// Entry beats back into entries (anything with `key` and `value` strings), checking the framing: each
// entry a HEAD, then exactly its key's and value's bytes in full beats but each part's last, zero lanes
// above a beat's count, `last` on the entry's final beat only. False with `why` (the beat named) when a
// rule is broken.
template <int W, class Entry>
bool ParseEntries(const simc::StreamSink& sink, std::vector<Entry>* out, std::string* why) {
  constexpr int kDataWords = W / 4;
  size_t i = 0;
  const size_t beats = sink.beats();
  auto bad = [&](const std::string& what) {
    *why = "beat " + std::to_string(i) + ": " + what;
    return false;
  };
  while (i < beats) {
    const uint32_t* b = sink.beat(i);
    if (b[kDataWords] != kHead) return bad("entry does not start with a HEAD beat");
    const uint64_t kl = b[kDataWords + 2], vl = b[kDataWords + 3];
    bool last = sink.lasts[i++];
    Entry e;
    for (int part = 0; part < 2; part++) {
      const uint64_t want = part ? vl : kl;
      std::string& dst = part ? e.value : e.key;
      while (dst.size() < want) {
        if (last) return bad("entry ended early");
        if (i >= beats) return bad("stream ended inside an entry");
        const uint32_t* d = sink.beat(i);
        const uint64_t cnt = d[kDataWords + 1];
        if (d[kDataWords] != (part ? kValue : kKey) || cnt != std::min<uint64_t>(W, want - dst.size()))
          return bad("kind/count " + std::to_string(d[kDataWords]) + "/" + std::to_string(cnt));
        for (uint64_t k = 0; k < uint64_t(W); k++) {
          if (k < cnt) dst.push_back(char(BeatByte(d, k)));
          else if (BeatByte(d, k)) return bad("nonzero lane above count");
        }
        last = sink.lasts[i++];
      }
    }
    if (!last) return bad("entry's final beat without last");
    out->push_back(std::move(e));
  }
  return true;
}

// Byte beats back into bytes: every beat full but the final one, which alone carries `last` and holds
// at least one byte unless `emptyOk`. With `cutOk` (a stream an error stopped) a missing final `last` is
// allowed. Returns the first broken rule ("" when none); `out` gets every byte shown either way.
template <int W>
std::string ParseBytes(const simc::StreamSink& sink, std::string* out, bool cutOk = false, bool emptyOk = false) {
  constexpr int kDataWords = W / 4;
  std::string why;
  out->clear();
  const size_t beats = sink.beats();
  for (size_t i = 0; i < beats; i++) {
    const uint32_t* b = sink.beat(i);
    const uint32_t count = b[kDataWords];
    const bool last = sink.lasts[i];
    if (why.empty() && (count > uint32_t(W) || (count == 0 && !emptyOk) || (!last && count != uint32_t(W))))
      why = "beat " + std::to_string(i) + " holds " + std::to_string(count) + " bytes";
    if (why.empty() && last != (i + 1 == beats) && !cutOk) why = "`last` on beat " + std::to_string(i);
    for (uint32_t k = 0; k < count && k < uint32_t(W); k++) out->push_back(char(BeatByte(b, k)));
  }
  if (why.empty() && !cutOk && (beats == 0 || !sink.lasts[beats - 1])) why = "no final beat with `last`";
  return why;
}

}  // namespace te_dv

#endif
