#include "snappy_codec.h"

#include <cstring>
#include <vector>

#include "coding.h"
#include "limits.h"

namespace table_engine {
namespace snappy_codec {
namespace {

void EmitLiteral(const uint8_t* p, size_t n, std::string* out, Stats* st) {
  if (n == 0) return;
  size_t v = n - 1;
  if (v < 60) {
    out->push_back(char(v << 2));
  } else {
    int bytes = v < (1u << 8) ? 1 : v < (1u << 16) ? 2 : v < (1u << 24) ? 3 : 4;
    out->push_back(char((59 + bytes) << 2));
    for (int i = 0; i < bytes; i++) out->push_back(char(v >> (8 * i)));
  }
  out->append(reinterpret_cast<const char*>(p), n);
  if (st) {
    st->literal_bytes += n;
    st->elements++;
    st->literals++;
    st->literal_chunks += (n + st->chunk_bytes - 1) / st->chunk_bytes;
  }
}

// One copy element of 4..64 bytes: the 2-byte form (offset < 2^11, length 4..11) when it fits.
void EmitCopyElement(size_t offset, size_t len, std::string* out) {
  if (len <= 11 && offset < 2048) {
    out->push_back(char(1 | ((len - 4) << 2) | ((offset >> 8) << 5)));
    out->push_back(char(offset & 0xff));
  } else {
    out->push_back(char(2 | ((len - 1) << 2)));
    out->push_back(char(offset & 0xff));
    out->push_back(char(offset >> 8));
  }
}

void CountCopyElements(size_t len, Stats* st) {
  if (!st) return;
  size_t n = 0;
  for (; len >= 68; len -= 64) n++;
  if (len > 64) n++;
  st->copy_elements += n + 1;
}

void EmitCopy(size_t offset, size_t len, std::string* out, Stats* st) {
  if (st) st->extend_beats += 2 + (len - 4) / st->chunk_bytes;
  // Split long matches so that no piece is shorter than 4 bytes (the 1-byte-offset form's minimum).
  while (len >= 68) {
    EmitCopyElement(offset, 64, out);
    len -= 64;
    if (st) st->elements++;
  }
  if (len > 64) {
    EmitCopyElement(offset, 60, out);
    len -= 60;
    if (st) st->elements++;
  }
  EmitCopyElement(offset, len, out);
  if (st) {
    st->elements++;
    st->copies++;
  }
}

// The hash table's size for a fragment of n bytes: the next power of two >= n, within
// [2^kSnappyMinHashBits, 2^kSnappyMaxHashBits] (a ~4 KiB LevelDB block: 4096 entries).
size_t TableSize(size_t n) {
  size_t t = size_t(1) << kSnappyMinHashBits;
  while (t < n && t < (size_t(1) << kSnappyMaxHashBits)) t <<= 1;
  return t;
}

// Compresses one fragment. Scan: from one byte past the pending literal's start, every position is
// looked up for 16 positions, then the step between lookups grows by one every 32 bytes without a
// match (incompressible data is crossed quickly). Each looked-up position replaces its table entry
// (entries start at 0: position 0 is everyone's first candidate). A 4-byte match is extended as far
// as it goes and emitted after the pending literal; the positions just before and at its end are
// entered, and a match found at its end is emitted at once. The last 15 bytes only end literals.
void CompressFragment(const uint8_t* in, size_t n, uint16_t* table, std::string* out, Stats* st) {
  const size_t size = TableSize(n);
  const uint32_t mask = uint32_t(size - 1);
  std::memset(table, 0, size * sizeof(uint16_t));
  Stats unused;
  Stats& c = st ? *st : unused;
  c.fragments++;
  c.load_beats += (n + c.chunk_bytes - 1) / c.chunk_bytes;
  auto hash = [&](size_t pos) { return ((LoadFixed32(in + pos) * 0x1e35a7bdu) >> (32 - kSnappyMaxHashBits)) & mask; };
  auto same4 = [&](size_t a, size_t b) { return LoadFixed32(in + a) == LoadFixed32(in + b); };
  constexpr size_t kMargin = 15;
  size_t ip = 0;
  if (n >= kMargin) {
    const size_t limit = n - kMargin;
    for (;;) {
      const size_t literal_start = ip++;
      size_t cand = 0;
      bool found = false;
      uint32_t skip = 32;
      if (ip + 16 <= limit) {
        for (size_t i = 0; i < 16 && !found; i++) {
          c.scan_ops++;
          uint32_t h = hash(ip + i);
          cand = table[h];
          table[h] = uint16_t(ip + i);
          if (same4(cand, ip + i)) {
            ip += i;
            found = true;
          }
        }
        if (!found) {
          ip += 16;
          skip += 16;
        }
      }
      while (!found) {
        c.scan_ops++;
        uint32_t h = hash(ip);
        uint32_t step = skip >> 5;
        skip += step;
        size_t next = ip + step;
        if (next > limit) {
          c.scan_runs++;
          ip = literal_start;
          goto remainder;
        }
        cand = table[h];
        table[h] = uint16_t(ip);
        if (same4(cand, ip)) break;
        ip = next;
      }
      c.scan_runs++;
      c.extend_beats++;  // the extension waits a clock for the literal's last chunk (one history port)
      EmitLiteral(in + literal_start, ip - literal_start, out, st);
      do {
        size_t len = 4;
        while (ip + len < n && in[cand + len] == in[ip + len]) len++;
        EmitCopy(ip - cand, len, out, st);
        CountCopyElements(len, st);
        ip += len;
        if (ip >= limit) goto remainder;
        table[hash(ip - 1)] = uint16_t(ip - 1);
        uint32_t h = hash(ip);
        cand = table[h];
        table[h] = uint16_t(ip);
        c.scan_ops += 2;
        if (same4(cand, ip)) c.scan_runs++;
      } while (same4(cand, ip));
    }
  }
remainder:
  EmitLiteral(in + ip, n - ip, out, st);
}

}  // namespace

void Compress(const uint8_t* data, size_t n, std::string* out, Stats* stats) {
  AppendVarint32(out, uint32_t(n));
  // One table a thread: each fragment clears the part it uses, so it is never zeroed whole (a vector a
  // call zeroed 32 KiB for every ~4 KiB block and was a fifth of the model's instructions).
  thread_local std::vector<uint16_t> table(size_t(1) << kSnappyMaxHashBits);
  for (size_t off = 0; off < n; off += kSnappyFragmentBytes) {
    size_t len = n - off < kSnappyFragmentBytes ? n - off : kSnappyFragmentBytes;
    CompressFragment(data + off, len, table.data(), out, stats);
  }
}

bool Decompress(const uint8_t* src, size_t n, size_t max_len, std::string* out, size_t* error_pos,
                const char** why, Stats* stats) {
  const uint8_t* p = src;
  const uint8_t* end = src + n;
  uint32_t want;
  const uint8_t* q = ParseVarint32(p, end, &want);
  auto fail = [&](const uint8_t* at, const char* msg) {
    *error_pos = size_t(at - src);
    *why = msg;
    return false;
  };
  if (q == nullptr) return fail(p, "uncompressed length varint does not end");
  if (want > max_len) return fail(p, "uncompressed length exceeds the block buffer");
  out->assign(want, '\0');
  uint8_t* o = reinterpret_cast<uint8_t*>(out->data());
  size_t made = 0;
  p = q;
  while (p < end) {
    const uint8_t* elem = p;
    uint8_t tag = *p++;
    size_t len, offset = 0;
    if ((tag & 3) == 0) {
      len = tag >> 2;
      if (len >= 60) {
        size_t bytes = len - 59;
        if (size_t(end - p) < bytes) return fail(elem, "literal length runs past the stream");
        len = 0;
        for (size_t i = 0; i < bytes; i++) len |= size_t(p[i]) << (8 * i);
        p += bytes;
      }
      len += 1;
      if (size_t(end - p) < len) return fail(elem, "literal runs past the stream");
      if (want - made < len) return fail(elem, "literal overruns the declared length");
      std::memcpy(o + made, p, len);
      p += len;
      made += len;
      if (stats) stats->literal_bytes += len;
    } else {
      size_t extra = (tag & 3) == 1 ? 1 : (tag & 3) == 2 ? 2 : 4;
      if (size_t(end - p) < extra) return fail(elem, "copy offset runs past the stream");
      if ((tag & 3) == 1) {
        len = ((tag >> 2) & 7) + 4;
        offset = (size_t(tag >> 5) << 8) | p[0];
      } else {
        len = (tag >> 2) + 1;
        for (size_t i = 0; i < extra; i++) offset |= size_t(p[i]) << (8 * i);
      }
      p += extra;
      if (offset == 0 || offset > made) return fail(elem, "copy offset outside the bytes produced");
      if (want - made < len) return fail(elem, "copy overruns the declared length");
      // Byte by byte: an offset shorter than the length repeats a pattern.
      for (size_t i = 0; i < len; i++) o[made + i] = o[made + i - offset];
      made += len;
      if (stats) stats->copies++;
    }
    if (stats) {
      stats->elements++;
      stats->chunks += (len + stats->chunk_bytes - 1) / stats->chunk_bytes;
    }
  }
  if (made != want) return fail(end, "stream ends before the declared length");
  return true;
}

}  // namespace snappy_codec
}  // namespace table_engine
