// Program and data loading for the harnesses: ELF32 little-endian RISC-V (PT_LOAD segments to their
// physical addresses, .bss zeroed) or raw binaries, and the `--load` / `--dump` specifications.
// Where bytes go is the harness's business: it passes a `put(addr, data-or-null, len, what)` function
// that copies (or zeroes, data == nullptr) and dies when the range is outside its memories.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace simc {

using PutFn = std::function<void(uint32_t addr, const uint8_t* data, size_t len, const std::string& what)>;

// Load an ELF32 RISC-V file's PT_LOAD segments through `put`; dies naming the file on any malformation.
void loadElf(const std::string& path, const std::vector<uint8_t>& file, const PutFn& put);

struct LoadSpec {
  uint32_t addr;
  std::string path;
};
struct DumpSpec {
  uint32_t addr, len;
  std::string path;
};
// "ADDR=FILE" or "FILE@ADDR" (the file is checked: present, readable, not a folder, not empty).
LoadSpec parseLoad(const std::string& opt, const std::string& v);
// "ADDR:LEN=FILE" or "ADDR:LEN@FILE" (the output path is checked writable now, written after the run).
DumpSpec parseDump(const std::string& opt, const std::string& v);

}  // namespace simc
