// CRC32C (Castagnoli, reflected polynomial 0x82f63b78) and LevelDB's masking of stored CRCs. The RTL's
// CRC unit takes one stream beat (16 bytes) per clock; the model folds 8 bytes per step.
#ifndef TABLE_ENGINE_CRC32C_H
#define TABLE_ENGINE_CRC32C_H

#include <cstddef>
#include <cstdint>

namespace table_engine {
namespace crc32c {

// CRC of data appended to a stream whose CRC so far is `crc` (0 for an empty stream): SSE4.2's crc32
// instruction where the CPU has it, else ExtendPortable.
uint32_t Extend(uint32_t crc, const uint8_t* data, size_t n);
// The same by tables (slicing by 8), on any CPU: the tests hold Extend to it.
uint32_t ExtendPortable(uint32_t crc, const uint8_t* data, size_t n);
inline uint32_t Value(const uint8_t* data, size_t n) { return Extend(0, data, n); }

// A stored CRC is rotated and offset so that a CRC over bytes holding CRCs stays well distributed.
constexpr uint32_t kMaskDelta = 0xa282ead8u;
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t Unmask(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace crc32c
}  // namespace table_engine

#endif
