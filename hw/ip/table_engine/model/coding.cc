#include "coding.h"

namespace table_engine {

void AppendFixed32(std::string* dst, uint32_t v) {
  char b[4] = {char(v), char(v >> 8), char(v >> 16), char(v >> 24)};
  dst->append(b, 4);
}

void AppendFixed64(std::string* dst, uint64_t v) {
  AppendFixed32(dst, uint32_t(v));
  AppendFixed32(dst, uint32_t(v >> 32));
}

void AppendVarint64(std::string* dst, uint64_t v) {
  while (v >= 0x80) {
    dst->push_back(char(v | 0x80));
    v >>= 7;
  }
  dst->push_back(char(v));
}

void AppendVarint32(std::string* dst, uint32_t v) { AppendVarint64(dst, v); }

int VarintLength(uint64_t v) {
  int n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

static const uint8_t* ParseVarint(const uint8_t* p, const uint8_t* limit, uint64_t* v, int max_bytes) {
  uint64_t r = 0;
  for (int i = 0; i < max_bytes && p < limit; i++) {
    uint64_t b = *p++;
    r |= (b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      *v = r;
      return p;
    }
  }
  return nullptr;
}

const uint8_t* ParseVarint32(const uint8_t* p, const uint8_t* limit, uint32_t* v) {
  uint64_t r;
  const uint8_t* q = ParseVarint(p, limit, &r, 5);
  if (q == nullptr || r > 0xffffffffu) return nullptr;
  *v = uint32_t(r);
  return q;
}

const uint8_t* ParseVarint64(const uint8_t* p, const uint8_t* limit, uint64_t* v) {
  return ParseVarint(p, limit, v, 10);
}

std::string Hex(std::string_view bytes) {
  static const char* d = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes.size());
  for (unsigned char c : bytes) {
    out.push_back(d[c >> 4]);
    out.push_back(d[c & 15]);
  }
  return out;
}

}  // namespace table_engine
