// See loader.h.
#include "loader.h"

#include <cstring>

#include "args.h"

namespace simc {

void loadElf(const std::string& path, const std::vector<uint8_t>& f, const PutFn& put) {
  auto u16 = [&](size_t o) { return (uint32_t)f[o] | (uint32_t)f[o + 1] << 8; };
  auto u32 = [&](size_t o) { return u16(o) | u16(o + 2) << 16; };
  const char* p = path.c_str();
  if (f.size() < 52 || memcmp(f.data(), "\x7f" "ELF", 4) != 0) die("%s: not an ELF file", p);
  if (f[4] != 1 || f[5] != 1) die("%s: not a 32-bit little-endian ELF", p);
  if (u16(18) != 243) die("%s: not a RISC-V ELF (e_machine %u)", p, u16(18));
  uint32_t phoff = u32(28), phentsize = u16(42), phnum = u16(44);
  if (phnum == 0 || phentsize < 32 || (uint64_t)phoff + (uint64_t)phnum * phentsize > f.size())
    die("%s: bad program header table", p);
  unsigned loaded = 0;
  for (uint32_t i = 0; i < phnum; i++) {
    size_t ph = phoff + (size_t)i * phentsize;
    if (u32(ph) != 1) continue;  // PT_LOAD
    uint32_t off = u32(ph + 4), paddr = u32(ph + 12), filesz = u32(ph + 16), memsz = u32(ph + 20);
    if ((uint64_t)off + filesz > f.size()) die("%s: segment %u runs past the end of the file", p, i);
    if (memsz < filesz) die("%s: segment %u has memsz < filesz", p, i);
    if ((uint64_t)paddr + memsz > 0x100000000ull) die("%s: segment %u runs past the 32-bit address space", p, i);
    if (filesz) put(paddr, &f[off], filesz, path);
    if (memsz > filesz) put(paddr + filesz, nullptr, memsz - filesz, path);
    loaded++;
  }
  if (!loaded) die("%s: no loadable segment", p);
}

LoadSpec parseLoad(const std::string& opt, const std::string& v) {
  LoadSpec s;
  size_t at = v.rfind('@'), eq = v.find('=');
  std::string addr;
  if (at != std::string::npos && (eq == std::string::npos || eq > at)) {
    s.path = v.substr(0, at);
    addr = v.substr(at + 1);
  } else if (eq != std::string::npos) {
    addr = v.substr(0, eq);
    s.path = v.substr(eq + 1);
  } else {
    die("%s wants ADDR=FILE (or FILE@ADDR), got '%s'", opt.c_str(), v.c_str());
  }
  s.addr = (uint32_t)toUnsigned(addr, opt + " address", UINT32_MAX);
  checkInputFile(s.path, opt);
  return s;
}

DumpSpec parseDump(const std::string& opt, const std::string& v) {
  size_t colon = v.find(':'), sep = v.find_first_of("=@");
  if (colon == std::string::npos || sep == std::string::npos || sep < colon)
    die("%s wants ADDR:LEN=FILE (or ADDR:LEN@FILE), got '%s'", opt.c_str(), v.c_str());
  DumpSpec d;
  d.addr = (uint32_t)toUnsigned(v.substr(0, colon), opt + " address", UINT32_MAX);
  d.len = (uint32_t)toUnsigned(v.substr(colon + 1, sep - colon - 1), opt + " length", UINT32_MAX);
  d.path = v.substr(sep + 1);
  if ((uint64_t)d.addr + d.len > 0x100000000ull) die("%s: 0x%08x+%u runs past the 32-bit address space", opt.c_str(), d.addr, d.len);
  checkOutputFile(d.path, opt);
  return d;
}

}  // namespace simc
