// LevelDB's internal keys: user key + fixed64 tag (sequence << 8 | type), ordered by user key
// (bytewise) ascending, then tag descending; the index block's shortened keys.
#ifndef TABLE_ENGINE_INTERNAL_KEY_H
#define TABLE_ENGINE_INTERNAL_KEY_H

#include <cstdint>
#include <string>
#include <string_view>

namespace table_engine {

enum ValueType : uint8_t { kTypeDeletion = 0, kTypeValue = 1 };
constexpr uint64_t kMaxSequence = (uint64_t(1) << 56) - 1;
// The tag a shortened index key gets: it sorts before every real entry of its user key.
constexpr uint64_t kSeekTag = (kMaxSequence << 8) | kTypeValue;

inline std::string_view UserKey(std::string_view ikey) { return ikey.substr(0, ikey.size() - 8); }
uint64_t Tag(std::string_view ikey);

// The bytewise comparator (memcmp, then length).
int CompareBytes(std::string_view a, std::string_view b);
// Internal-key order; both keys hold at least 8 bytes.
int CompareInternal(std::string_view a, std::string_view b);

// A key k with start <= k < limit, as short as the bytewise rule allows (the index entry between
// two data blocks): replaces *start.
void ShortestSeparator(std::string* start, std::string_view limit);
// A short key >= *key (the index entry after the last data block): replaces *key.
void ShortSuccessor(std::string* key);

}  // namespace table_engine

#endif
