// Little-endian fixed-width integers and LevelDB's varints. Decoders take an explicit limit and
// return nullptr when the value runs past it (or past 5 / 10 bytes): the hardware's varint unit
// sees only the bytes of the block it is in.
#ifndef TABLE_ENGINE_CODING_H
#define TABLE_ENGINE_CODING_H

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace table_engine {

inline uint32_t LoadFixed32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
inline uint64_t LoadFixed64(const uint8_t* p) { return LoadFixed32(p) | uint64_t(LoadFixed32(p + 4)) << 32; }

void AppendFixed32(std::string* dst, uint32_t v);
void AppendFixed64(std::string* dst, uint64_t v);
void AppendVarint32(std::string* dst, uint32_t v);
void AppendVarint64(std::string* dst, uint64_t v);
int VarintLength(uint64_t v);

const uint8_t* ParseVarint32(const uint8_t* p, const uint8_t* limit, uint32_t* v);
const uint8_t* ParseVarint64(const uint8_t* p, const uint8_t* limit, uint64_t* v);

// Lower-case hex, two digits a byte: how the job and result files (job.h) and the host's job folders
// (host/src/table_engine.cpp) spell keys.
std::string Hex(std::string_view bytes);

}  // namespace table_engine

#endif
