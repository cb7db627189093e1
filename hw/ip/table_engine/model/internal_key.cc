#include "internal_key.h"

#include <cstring>

#include "coding.h"

namespace table_engine {

uint64_t Tag(std::string_view ikey) {
  return LoadFixed64(reinterpret_cast<const uint8_t*>(ikey.data()) + ikey.size() - 8);
}

int CompareBytes(std::string_view a, std::string_view b) {
  size_t n = a.size() < b.size() ? a.size() : b.size();
  int r = n ? std::memcmp(a.data(), b.data(), n) : 0;
  if (r != 0) return r;
  return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
}

int CompareInternal(std::string_view a, std::string_view b) {
  int r = CompareBytes(UserKey(a), UserKey(b));
  if (r != 0) return r;
  uint64_t ta = Tag(a), tb = Tag(b);
  return ta > tb ? -1 : ta < tb ? 1 : 0;
}

void ShortestSeparator(std::string* start, std::string_view limit) {
  std::string_view us = UserKey(*start), ul = UserKey(limit);
  size_t n = us.size() < ul.size() ? us.size() : ul.size();
  size_t i = 0;
  while (i < n && us[i] == ul[i]) i++;
  if (i >= n) return;  // one user key is a prefix of the other: no shorter key between them
  uint8_t b = uint8_t(us[i]);
  // Only a user part that gets physically shorter replaces the key (LevelDB's internal comparator).
  if (b == 0xff || b + 1 >= uint8_t(ul[i]) || i + 1 >= us.size()) return;
  // The user part grows by one at byte i and ends there: shorter than the start's and larger.
  std::string k(us.substr(0, i + 1));
  k[i] = char(b + 1);
  AppendFixed64(&k, kSeekTag);
  start->swap(k);
}

void ShortSuccessor(std::string* key) {
  std::string_view u = UserKey(*key);
  for (size_t i = 0; i < u.size(); i++) {
    if (uint8_t(u[i]) != 0xff) {
      if (i + 1 >= u.size()) return;  // not shorter: the key stays as it is
      std::string k(u.substr(0, i + 1));
      k[i] = char(uint8_t(u[i]) + 1);
      AppendFixed64(&k, kSeekTag);
      key->swap(k);
      return;
    }
  }
}

}  // namespace table_engine
