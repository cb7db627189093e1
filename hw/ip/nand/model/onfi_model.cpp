// ONFI asynchronous NAND model: behaviour and timing checker. See onfi_model.h and hw/ip/nand/doc/nand.md.
#include "onfi_model.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

namespace onfi {

// ONFI 2.x/3.x asynchronous SDR timing modes 0..5 (ns). Field order as in struct Timing.
static const Timing kModes[ONFI_ASYNC_MODE_COUNT] = ONFI_ASYNC_MODES;  // hw/ip/nand/data/onfi_timing.json

const Timing& onfi_timing(int mode) { return kModes[std::clamp(mode, 0, ONFI_ASYNC_MODE_COUNT - 1)]; }

static const NvddrTiming kNvddr[ONFI_NVDDR_MODE_COUNT] = ONFI_NVDDR_MODES;       // ps
static const NvddrTck kNvddrTck[ONFI_NVDDR_TCK_MODE_COUNT] = ONFI_NVDDR_TCK_MODES;  // 1/100 tCK
const NvddrTiming& nvddr_timing(int mode) { return kNvddr[std::clamp(mode, 0, ONFI_NVDDR_MODE_COUNT - 1)]; }
const NvddrTck& nvddr_tck(int mode) { return kNvddrTck[std::clamp(mode, 0, ONFI_NVDDR_TCK_MODE_COUNT - 1)]; }

Config mt29f16g08ababa() {
  Config c;
  c.page_bytes = 4096; c.spare_bytes = 224; c.pages_per_block = 128; c.blocks = 4096;
  const uint8_t id[5] = {0x2C, 0x48, 0x00, 0x26, 0x89};
  std::copy(id, id + 5, c.id);
  c.manufacturer = "MICRON"; c.model = "MT29F16G08ABABAWP";
  c.tR_ns = 25000; c.tPROG_ns = 230000; c.tBERS_ns = 2000000; c.tFEAT_ns = 1000;
  c.tRST_read_ns = 5000; c.tRST_prog_ns = 10000; c.tRST_erase_ns = 500000;
  c.nop = 4; c.max_mode = 5; c.nvddr_max_mode = 5;
  c.ecc_bits = 4; c.ecc_note = "4 bits per 540 bytes";
  c.planes = 2;
  return c;
}

uint16_t onfi_crc16(const uint8_t* p, size_t n) {
  uint16_t crc = 0x4F4E;
  for (size_t i = 0; i < n; i++) {
    crc ^= uint16_t(p[i]) << 8;
    for (int b = 0; b < 8; b++) crc = (crc & 0x8000) ? uint16_t((crc << 1) ^ 0x8005) : uint16_t(crc << 1);
  }
  return crc;
}

static const int64_t kLongAgo = -1000000;

NandModel::NandModel(const Config& c, const std::string& name) : cfg(c), name_(name), rng_(c.seed) {
  set_interface(false, cfg.initial_mode);
  if (cfg.pages_per_block == 0 || (cfg.pages_per_block & (cfg.pages_per_block - 1)))
    violation(0, "config: pages_per_block must be a power of two");
  if (cfg.planes == 0 || (cfg.planes & (cfg.planes - 1)) || cfg.blocks % cfg.planes)
    violation(0, "config: planes must be a power of two that divides the blocks");
  reg_.assign(page_size(), 0xFF);
  for (uint32_t b : cfg.bad_blocks) {
    if (b >= cfg.blocks) continue;
    for (uint32_t p = 0; p < 2; p++) {
      auto& pg = page(b * cfg.pages_per_block + p);
      pg[cfg.page_bytes] = 0x00;  // factory bad-block marker: first spare byte not FFh
    }
  }
  build_param_page();
  if (cfg.tRST_poweron_ns) start_busy(0, cfg.tRST_poweron_ns);
}

void NandModel::violation(uint64_t t, const std::string& msg) {
  char buf[512];
  snprintf(buf, sizeof buf, "NAND VIOLATION [%s] t=%llu ns, timing mode %d: %s", name_.c_str(),
           (unsigned long long)t, mode_, msg.c_str());
  if (cfg.on_violation) {
    cfg.on_violation(buf);
  } else {
    fprintf(stderr, "%s\n", buf);
    fflush(stdout);
    std::exit(3);
  }
}

std::vector<uint8_t>& NandModel::page(uint32_t row) {
  auto it = pages_.find(row);
  if (it == pages_.end()) it = pages_.emplace(row, std::vector<uint8_t>(page_size(), 0xFF)).first;
  return it->second;
}

std::vector<uint8_t> NandModel::peek(uint32_t row) const {
  auto it = pages_.find(row);
  return it == pages_.end() ? std::vector<uint8_t>(page_size(), 0xFF) : it->second;
}

void NandModel::poke(uint32_t row, const std::vector<uint8_t>& d) {
  auto& pg = page(row);
  std::copy_n(d.begin(), std::min<size_t>(d.size(), pg.size()), pg.begin());
}

bool NandModel::is_bad(uint32_t block) const {
  return grown_bad_.count(block) || std::find(cfg.bad_blocks.begin(), cfg.bad_blocks.end(), block) != cfg.bad_blocks.end();
}

void NandModel::tear(std::vector<uint8_t>& arr, const std::vector<uint8_t>& target) {
  for (size_t i = 0; i < arr.size(); i++) arr[i] ^= (arr[i] ^ target[i]) & uint8_t(rng_());
}

void NandModel::set_interface(bool ddr, int mode) {
  mode_ = mode;
  T_ = &onfi_timing(ddr ? 0 : mode);
  nvddr_ = ddr;
  N_ = &nvddr_timing(mode);
  K_ = &nvddr_tck(mode);
  ck_ps_ = 0;
  bus_ = Bus::Idle;
  beats_.clear();
}

void NandModel::power_on(uint64_t t) {
  off_ = false;
  cache_read_ = false; array_until_ = 0; array_prog_ = cache_prog_fail_ = false;
  set_interface(false, cfg.initial_mode);
  memset(features_, 0, sizeof features_);
  op_ = Op::None; have_cmd_ = false; out_ = Out::None; fail_ = failc_ = false; stuck_ = false;
  mp_clear();
  busy_until_ = rb_low_from_ = t + cfg.tRST_poweron_ns; busy_start_ = t;
  now_ = t; first_ = true;
}

static void put16(std::vector<uint8_t>& p, int o, uint32_t v) { p[o] = v; p[o + 1] = v >> 8; }
static void put32(std::vector<uint8_t>& p, int o, uint32_t v) { for (int i = 0; i < 4; i++) p[o + i] = v >> (8 * i); }

void NandModel::build_param_page() {
  std::vector<uint8_t> p(256, 0);
  memcpy(&p[0], "ONFI", 4);
  bool ddr = cfg.nvddr_max_mode >= 0;
  put16(p, 4, ddr ? 0x001E : 0x0002);  // ONFI 2.2 (and 2.1, 2.0, 1.0) with NV-DDR, else ONFI 1.0
  // Advertise exactly what this model implements (the real part also has read status enhanced,
  // copyback and unique ID; a host that trusted those bits would get violations).
  bool mp = cfg.planes > 1;
  // features: bit 5 = NV-DDR (source synchronous), bit 3 = multi-plane operations; nothing else
  put16(p, 6, (ddr ? 0x0020 : 0x0000) | (mp ? 0x0008 : 0x0000));
  // optional commands: bit 0 program cache (15h), bit 1 read cache (31h/3Fh), bit 2 GET/SET FEATURES,
  // bit 6 CHANGE READ COLUMN ENHANCED (06h-E0h: how a host picks a plane's page register, multi-plane only)
  put16(p, 8, 0x0007 | (mp ? 0x0040 : 0x0000));
  auto str = [&](int off, int len, const std::string& s) {
    for (int i = 0; i < len; i++) p[off + i] = i < (int)s.size() ? s[i] : ' ';
  };
  str(32, 12, cfg.manufacturer);
  str(44, 20, cfg.model);
  p[64] = cfg.id[0];
  put32(p, 80, cfg.page_bytes);
  put16(p, 84, cfg.spare_bytes);
  put32(p, 86, cfg.page_bytes / 4);
  put16(p, 90, cfg.spare_bytes / 4);
  put32(p, 92, cfg.pages_per_block);
  put32(p, 96, cfg.blocks);
  p[100] = 1;      // LUNs per target
  p[101] = 0x23;   // 2 column, 3 row address cycles
  p[102] = 1;      // bits per cell
  put16(p, 103, std::max<uint32_t>(1, cfg.blocks / 50));  // max bad blocks per LUN (80 of 4096)
  p[105] = 1; p[106] = 5;  // block endurance 1 x 10^5
  p[107] = 1;      // guaranteed valid blocks at the beginning
  p[110] = cfg.nop;
  p[112] = uint8_t(cfg.ecc_bits);  // ECC bits required per codeword (both parts: 4)
  if (mp) {
    int bits = 0;
    while ((1u << bits) < cfg.planes) bits++;
    p[113] = uint8_t(bits);  // multi-plane addressing: plane address bits (the low block address bits)
    // multi-plane attributes: bit 1 clear = block address restriction (the blocks may differ in the plane
    // bits only), bit 2 = program cache with multi-plane (80h..11h..80h..15h), bit 4 clear = no cache read
    p[114] = 0x04;
  }
  p[128] = 10;     // I/O pin capacitance pF
  put16(p, 129, (1u << (cfg.max_mode + 1)) - 1);  // async timing modes supported
  put16(p, 133, 600);   // tPROG max us
  put16(p, 135, 3000);  // tBERS max us
  put16(p, 137, uint32_t(cfg.tR_ns / 1000));
  put16(p, 139, kModes[0].tCCS);
  if (ddr) {
    put16(p, 141, (1u << (cfg.nvddr_max_mode + 1)) - 1);  // NV-DDR timing modes supported
    p[143] = 0;  // NV-DDR features: no CLK stop for data input, no typical capacitances
  }
  put16(p, 254, onfi_crc16(p.data(), 254));
  param_.clear();
  for (int c = 0; c < 3; c++) param_.insert(param_.end(), p.begin(), p.end());
}

uint8_t NandModel::status(uint64_t t) const {
  bool b = busy(t);
  // RDY (bit 6): the cache register / R/B#; ARDY (bit 5): the array too (differs during a cache read).
  bool ardy = !b && t >= array_until_;
  uint8_t s = (prev_.wp_n ? 0x80 : 0) | (b ? 0 : 0x40) | (ardy ? 0x20 : 0);
  // FAIL is valid once the array is done (ARDY), FAILC (the page before, cache program) once RDY.
  if (!b) s |= (fail_ && ardy ? 1 : 0) | (failc_ ? 2 : 0);
  return s;
}

void NandModel::start_busy(uint64_t t, uint64_t dur) {
  busy_start_ = t;
  uint64_t wb = nvddr_ ? uint64_t(N_->tWB / 1000) : uint64_t(T_->tWB);
  rb_low_from_ = t + wb;
  busy_until_ = t + wb + dur;
  busy_ns_total += dur;
  if (cfg.stuck_busy) stuck_ = true;
}

void NandModel::finish_ops(uint64_t t) {
  if (op_ == Op::None || busy(t)) return;
  if (op_ == Op::SetFeat && op_feat_ == 0x01) set_interface((feat_in_[0] >> 4 & 3) == 1, feat_in_[0] & 0x0F);
  if (op_ == Op::Reset) {  // FFh returns to the SDR interface, mode 0 (ONFI)
    set_interface(false, cfg.initial_mode);
    memset(features_, 0, sizeof features_);
  }
  op_ = Op::None;
}

std::vector<uint8_t> NandModel::array_read(uint32_t row) {
  std::vector<uint8_t> reg = peek(row);
  // Bit errors land in the page register after tR (spread per sector or anywhere), then nandsim's faults.
  if (cfg.bit_errors_per_read > 0) {
    uint32_t nsec = std::max<uint32_t>(1, cfg.page_bytes / 512);
    std::set<uint32_t> used;
    for (int i = 0; i < cfg.bit_errors_per_read; i++) {
      uint32_t bitpos;
      do {
        uint32_t sec = cfg.bit_error_spread ? i % nsec : rng_() % nsec;
        uint32_t secbytes = std::min<uint32_t>(512, cfg.page_bytes);
        bitpos = (sec * secbytes + rng_() % secbytes) * 8 + rng_() % 8;
      } while (used.count(bitpos));
      used.insert(bitpos);
      reg[bitpos / 8] ^= uint8_t(1u << (bitpos % 8));
      n_bit_errors++;
    }
  }
  if (cfg.bit_flips_max > 0) {  // nandsim's bitflips: a random count, anywhere in page + spare
    int n = int(rng_() % uint32_t(cfg.bit_flips_max + 1));
    for (int i = 0; i < n; i++) { uint32_t b = rng_() % (page_size() * 8); reg[b / 8] ^= uint8_t(1u << (b % 8)); }
    n_bit_errors += n;
  }
  {
    auto g = cfg.read_limit.find(row);
    if (g != cfg.read_limit.end() && ++read_ops_[row] > g->second) {  // grave page: worn out by reads
      for (uint32_t i = 0; i < page_size() * 8 / 100; i++) { uint32_t b = rng_() % (page_size() * 8); reg[b / 8] ^= uint8_t(1u << (b % 8)); }
      n_faults++;
    }
  }
  n_reads++;
  return reg;
}

// 31h: the page in the data register moves to the cache register (output from column 0) once the array
// is done with it, and the array starts reading the next page (same block) into the data register:
// R/B# low for tRCBSY or until the array is done, ARDY low for tR. 3Fh: the move only, nothing new read.
void NandModel::cache_read(uint64_t t, bool last) {
  uint64_t wait = std::max<uint64_t>(cfg.tRCBSY_ns, array_until_ > t ? array_until_ - t : 0);
  reg_ = data_reg_;
  op_ = Op::Read;
  start_busy(t, wait);
  out_ = Out::Page; col_ = 0;
  if (last) { cache_read_ = false; array_until_ = busy_until_; return; }
  uint32_t next = cache_row_ + 1;
  if (next % cfg.pages_per_block == 0 || !row_ok(next)) {
    violation(t, "31h past the last page of block " + std::to_string(cache_row_ / cfg.pages_per_block) + " (end with 3Fh)");
    cache_read_ = false; array_until_ = busy_until_; return;
  }
  data_reg_ = array_read(next);
  cache_row_ = next;
  array_until_ = busy_until_ + cfg.tR_ns;
}

void NandModel::latch_command(uint64_t t, uint8_t c) {
  n_commands++;
  bool b = busy(t);
  if (b && c != 0x70 && c != 0xFF)
    violation(t, "command " + std::to_string(c) + " (dec) latched while busy (only 70h/FFh allowed)");
  // An open multi-plane sequence takes only the next plane's first command (80h / 00h / 60h), 70h or FFh.
  static const uint8_t kSecond[] = {0x10, 0x11, 0x15, 0x30, 0x31, 0x32, 0x3F, 0xD0, 0xD1, 0xE0};
  bool second = std::find(std::begin(kSecond), std::end(kSecond), c) != std::end(kSecond);
  if (mp_cmd_ && !second && c != 0x70 && c != 0xFF) {
    uint8_t next = mp_cmd_ == 0x11 ? 0x80 : mp_cmd_ == 0x32 ? 0x00 : 0x60;
    if (c != next) {
      char m[128];
      snprintf(m, sizeof m, "command %02Xh inside a multi-plane sequence (after %02Xh only %02Xh, 70h or FFh)", c, mp_cmd_, next);
      violation(t, m);
    }
  }
  auto expect = [&](uint8_t first, size_t naddr) {
    if (!have_cmd_ || cmd_ != first || addr_.size() != naddr) {
      char m[96];
      snprintf(m, sizeof m, "command %02Xh out of sequence (expected after %02Xh + %zu address cycles)", c, first, naddr);
      violation(t, m);
      return false;
    }
    return true;
  };
  switch (c) {
    case 0xFF:
    {
      bool during = busy(t);
      uint64_t d = !during ? cfg.tRST_read_ns
                 : op_ == Op::Erase ? cfg.tRST_erase_ns : op_ == Op::Program ? cfg.tRST_prog_ns : cfg.tRST_read_ns;
      op_ = Op::Reset;
      start_busy(t, d);
    }
      have_cmd_ = false; out_ = Out::None; fail_ = failc_ = false;
      cache_read_ = false; array_until_ = 0; array_prog_ = cache_prog_fail_ = false;  // a reset ends cache operations
      mp_clear();
      break;
    case 0x70:
      out_ = Out::Status; out_idx_ = 0;
      // keep an in-progress command (e.g. 70h then 00h to resume data output)
      break;
    case 0x00: case 0x80: case 0x60: case 0x05: case 0x06: case 0x90: case 0xEC: case 0xEF: case 0xEE:
      if (c == 0x06 && cfg.planes < 2) { violation(t, "unsupported command 06h"); break; }
      // While the array reads ahead (cache read), only the cache register may be used: 00h (output
      // resume), 05h-E0h, 70h, 31h, 3Fh, FFh; while it programs (cache program) 80h (the next page), 70h, FFh.
      if (t < array_until_ && (array_prog_ ? c != 0x80 : (c != 0x00 && c != 0x05 && c != 0x06)))
        violation(t, "command " + std::to_string(c) + " (dec) while the array is busy with a cache " +
                     (array_prog_ ? "program" : "read") + " (ARDY = 0)");
      if (c != 0x00 && c != 0x05 && c != 0x06) cache_read_ = false;
      if (c == 0x80 || c == 0x60) read_valid_ = false;
      cmd_ = c; have_cmd_ = true; addr_.clear(); data_in_count_ = 0;
      if (c == 0x80) { reg_.assign(page_size(), 0xFF); loaded_.assign(page_size(), false); }
      if (c == 0x00) out_ = Out::None;  // 00h without address resumes page output (see RE# fall)
      break;
    case 0x30:
      if (!expect(0x00, 5)) break;
      op_ = Op::Read;
      if (!row_ok(row_)) violation(t, "page read row " + std::to_string(row_) + " outside the device");
      plane_regs_.clear();
      read_row_ = row_; read_valid_ = true;
      if (mp_cmd_ == 0x32) {  // every plane addressed reads in this one tR; output starts in this plane
        check_planes(t, row_, "read");
        for (auto& q : mp_queue_) plane_regs_[plane_of(q.row)] = {q.row, array_read(q.row)};
        reg_ = array_read(row_);
        plane_regs_[plane_of(row_)] = {row_, reg_};
        mp_queue_.clear(); mp_cmd_ = 0;
        start_busy(t, cfg.tR_ns);
        out_ = Out::Page; have_cmd_ = false;
        cache_read_ = false; array_until_ = busy_until_;  // no cache read after a multi-plane read (byte 114)
        break;
      }
      reg_ = array_read(row_);
      start_busy(t, cfg.tR_ns);
      out_ = Out::Page; have_cmd_ = false;
      data_reg_ = reg_; cache_read_ = true; cache_row_ = row_; array_until_ = busy_until_;
      break;
    case 0x31: case 0x3F:  // READ CACHE SEQUENTIAL / READ CACHE END (ONFI 2.x; R/B# must be high)
      // A bare 00h before it only resumed data output (e.g. the cache register read after an earlier
      // 31h): no command is open. Anything with address cycles is.
      if (have_cmd_ && !(cmd_ == 0x00 && addr_.empty())) violation(t, "31h/3Fh in the middle of a command");
      have_cmd_ = false;
      if (!cache_read_) violation(t, "31h/3Fh without a single-plane page read (00h-30h or 31h) before it");
      else cache_read(t, c == 0x3F);
      read_valid_ = false;
      break;
    case 0xE0:
      if (have_cmd_ && cmd_ == 0x06) {  // CHANGE READ COLUMN ENHANCED: the row's plane register, from column col_
        if (!expect(0x06, 5)) break;
        auto it = plane_regs_.find(plane_of(row_));
        if (it != plane_regs_.end() && it->second.first == row_) reg_ = it->second.second;
        else if (!(plane_regs_.empty() && read_valid_ && read_row_ == row_))
          violation(t, "06h-E0h: row " + std::to_string(row_) + " is in no page register (read it first)");
      } else if (!expect(0x05, 2)) {
        break;
      }
      t_cmd_e0_ = t; out_ = Out::Page; have_cmd_ = false;
      break;
    case 0x11: case 0x32: case 0xD1: {  // multi-plane: this plane queued, the next plane's command follows
      if (cfg.planes < 2) {
        char m[64];
        snprintf(m, sizeof m, "unsupported command %02Xh", c);
        violation(t, m);
        break;
      }
      uint8_t first = c == 0x11 ? 0x80 : c == 0x32 ? 0x00 : 0x60;
      if (!expect(first, c == 0xD1 ? 3 : 5)) break;
      have_cmd_ = false; out_ = Out::None;
      const char* what = c == 0x11 ? "program" : c == 0x32 ? "read" : "erase";
      if (!row_ok(row_)) violation(t, std::string("multi-plane ") + what + " row " + std::to_string(row_) + " outside the device");
      check_planes(t, row_, what);
      if (mp_queue_.size() + 1 >= cfg.planes)
        violation(t, std::string("multi-plane ") + what + ": every plane is addressed, the last one ends with 10h/30h/D0h");
      mp_queue_.push_back(PlanePage{row_, c == 0x11 ? reg_ : std::vector<uint8_t>(), c == 0x11 ? loaded_ : std::vector<bool>()});
      mp_cmd_ = c;
      if (c == 0x32) { cache_read_ = false; read_valid_ = false; }
      start_busy(t, cfg.tDBSY_ns);
      break;
    }
    case 0x10: case 0x15: {  // PAGE PROGRAM / PAGE CACHE PROGRAM (multi-plane: with the planes before, all
                             // of them handed to the array together)
      if (!expect(0x80, 5)) break;
      have_cmd_ = false; op_ = Op::Program;
      if (mp_cmd_ == 0x11) check_planes(t, row_, "program");
      fail_ = false;
      bool cut = false;
      for (auto& q : mp_queue_) {
        fail_ |= program_row(t, q.row, q.reg, q.loaded, cut);
        if (cut) break;
      }
      if (!cut) fail_ |= program_row(t, row_, reg_, loaded_, cut);
      mp_queue_.clear(); mp_cmd_ = 0;
      if (cut) { off_ = true; out_ = Out::None; have_cmd_ = false; break; }
      // The array content changes at once; the busy times follow ONFI: 15h frees the cache register when
      // the array has taken the page (tCBSY, or until the previous cache program is done) and programs in
      // the background (ARDY low for tPROG); 10h after 15h waits for the previous page, then tPROG.
      // FAILC reports the page handed over before this one.
      uint64_t prev = array_prog_ && array_until_ > t ? array_until_ - t : 0;
      failc_ = array_prog_ && cache_prog_fail_;
      if (c == 0x15) {
        start_busy(t, std::max<uint64_t>(cfg.tCBSY_ns, prev));
        array_until_ = busy_until_ + cfg.tPROG_ns;
        array_prog_ = true; cache_prog_fail_ = fail_;
      } else {
        start_busy(t, prev + cfg.tPROG_ns);
        array_until_ = 0; array_prog_ = cache_prog_fail_ = false;
      }
      out_ = Out::None;
      break;
    }
    case 0xD0: {  // BLOCK ERASE (multi-plane: with the planes before)
      if (!expect(0x60, 3)) break;
      have_cmd_ = false; op_ = Op::Erase;
      if (mp_cmd_ == 0xD1) check_planes(t, row_, "erase");
      fail_ = false;
      bool cut = false;
      for (auto& q : mp_queue_) {
        fail_ |= erase_row(t, q.row, cut);
        if (cut) break;
      }
      if (!cut) fail_ |= erase_row(t, row_, cut);
      mp_queue_.clear(); mp_cmd_ = 0;
      if (cut) { off_ = true; out_ = Out::None; have_cmd_ = false; break; }
      failc_ = false;  // FAILC only reports cache operations, which the model does not implement
      start_busy(t, cfg.tBERS_ns);
      out_ = Out::None;
      break;
    }
    default: {
      char m[64];
      snprintf(m, sizeof m, "unsupported command %02Xh", c);
      violation(t, m);
    }
  }
}

// Multi-plane addressing (the parameter page's byte 113/114 promise): one row per plane, the same page
// address in each, and blocks that differ only in the plane bits.
void NandModel::check_planes(uint64_t t, uint32_t row, const char* what) {
  uint32_t ppb = cfg.pages_per_block, blk = row / ppb;
  for (auto& q : mp_queue_) {
    uint32_t qb = q.row / ppb;
    char m[200];
    if (qb % cfg.planes == blk % cfg.planes)
      snprintf(m, sizeof m, "multi-plane %s: blocks %u and %u are both in plane %u", what, qb, blk, blk % cfg.planes);
    else if (q.row % ppb != row % ppb)
      snprintf(m, sizeof m, "multi-plane %s: page addresses %u and %u differ (they must be equal)", what, q.row % ppb, row % ppb);
    else if (qb / cfg.planes != blk / cfg.planes)
      snprintf(m, sizeof m, "multi-plane %s: blocks %u and %u differ outside the plane bits (block address restriction, "
               "parameter page byte 114 bit 1 clear)", what, qb, blk);
    else
      continue;
    violation(t, m);
  }
}

bool NandModel::program_row(uint64_t t, uint32_t row, const std::vector<uint8_t>& data, const std::vector<bool>& loaded,
                            bool& cut) {
  n_programs++;
  if (!row_ok(row)) { violation(t, "program row " + std::to_string(row) + " outside the device"); return true; }
  uint32_t blk = row / cfg.pages_per_block, pg = row % cfg.pages_per_block;
  bool fail = !prev_.wp_n || is_bad(blk);
  auto lp = last_prog_page_.find(blk);
  if (lp != last_prog_page_.end() && int(pg) < lp->second) fail = true;  // pages in order within a block
  if (prog_count_[row] >= cfg.nop) fail = true;
  auto& arr = page(row);
  for (uint32_t i = 0; i < page_size(); i++)
    if (loaded[i] && arr[i] != 0xFF) fail = true;  // programming over programmed bytes fails verify
  int hook = !fail && cfg.op_fault ? cfg.op_fault(false, row) : 0;
  cut = cfg.power_cut_after == 0 || hook == 2;
  bool injected = hook == 1;
  if (cfg.power_cut_after >= 0) cfg.power_cut_after--;
  auto wl = cfg.program_limit.find(row);
  if (!fail && wl != cfg.program_limit.end() && ++program_ops_[row] > wl->second) injected = true;
  if (!fail && cfg.fail_programs > 0) { cfg.fail_programs--; injected = true; }
  if (prev_.wp_n && (cut || injected)) {  // torn: the bits to be cleared are left random
    std::vector<uint8_t> target(arr);
    for (uint32_t i = 0; i < page_size(); i++) target[i] &= data[i];
    tear(arr, target);
    prog_count_[row]++;
    n_faults++;
    return true;
  }
  cut = false;
  if (prev_.wp_n) {
    for (uint32_t i = 0; i < page_size(); i++) arr[i] &= data[i];  // program only clears bits
    prog_count_[row]++;
    last_prog_page_[blk] = std::max<int>(pg, lp == last_prog_page_.end() ? 0 : lp->second);
  }
  return fail;
}

bool NandModel::erase_row(uint64_t t, uint32_t row, bool& cut) {
  n_erases++;
  if (!row_ok(row)) { violation(t, "erase row " + std::to_string(row) + " outside the device"); return true; }
  uint32_t blk = row / cfg.pages_per_block;
  bool fail = !prev_.wp_n || is_bad(blk);
  int hook = !fail && cfg.op_fault ? cfg.op_fault(true, row) : 0;
  cut = cfg.power_cut_after == 0 || hook == 2;
  if (cfg.power_cut_after >= 0) cfg.power_cut_after--;
  if (hook == 1) { fail = true; n_faults++; }
  auto wb = cfg.erase_limit.find(blk);
  if (!fail && wb != cfg.erase_limit.end() && ++erase_ops_[blk] > wb->second) {  // weak block wears out
    fail = true; grown_bad_.insert(blk); n_faults++;
  }
  if (!fail && cfg.fail_erases > 0) { cfg.fail_erases--; fail = true; n_faults++; }
  if (!fail && cut) {  // the bits being erased (0 -> 1) are left random in every programmed page
    for (uint32_t p = 0; p < cfg.pages_per_block; p++) {
      auto it = pages_.find(blk * cfg.pages_per_block + p);
      if (it != pages_.end()) tear(it->second, std::vector<uint8_t>(page_size(), 0xFF));
    }
    n_faults++;
    return true;
  }
  cut = false;
  if (!fail) {
    for (uint32_t p = 0; p < cfg.pages_per_block; p++) {
      pages_.erase(blk * cfg.pages_per_block + p);
      prog_count_.erase(blk * cfg.pages_per_block + p);
    }
    last_prog_page_.erase(blk);
  }
  return fail;
}

void NandModel::latch_address(uint64_t t, uint8_t a) {
  if (busy(t)) violation(t, "address cycle while busy");
  if (!have_cmd_) { violation(t, "address cycle without a command"); return; }
  addr_.push_back(a);
  t_last_addr_ = t;
  size_t n = addr_.size();
  switch (cmd_) {
    case 0x00: case 0x80:
      if (n > 5) violation(t, "too many address cycles");
      if (n == 2) col_ = addr_[0] | addr_[1] << 8;
      if (n == 5) row_ = addr_[2] | addr_[3] << 8 | addr_[4] << 16;
      break;
    case 0x06:
      if (n > 5) violation(t, "too many address cycles for 06h");
      if (n == 2) col_ = addr_[0] | addr_[1] << 8;
      if (n == 5) row_ = addr_[2] | addr_[3] << 8 | addr_[4] << 16;
      break;
    case 0x05:
      if (n > 2) violation(t, "too many address cycles for 05h");
      if (n == 2) col_ = addr_[0] | addr_[1] << 8;
      break;
    case 0x60:
      if (n > 3) violation(t, "too many address cycles for 60h");
      if (n == 3) row_ = addr_[0] | addr_[1] << 8 | addr_[2] << 16;
      break;
    case 0x90:
      if (n > 1) violation(t, "READ ID takes one address cycle");
      out_ = a == 0x20 ? Out::OnfiSig : Out::Id; out_idx_ = 0;
      if (a != 0x00 && a != 0x20) violation(t, "READ ID address must be 00h or 20h");
      break;
    case 0xEC:
      if (n > 1 || a != 0) violation(t, "READ PARAMETER PAGE takes one address cycle 00h");
      op_ = Op::Param; out_ = Out::Param; out_idx_ = 0; have_cmd_ = false;
      start_busy(t, cfg.tR_ns);
      break;
    case 0xEF:
      if (n > 1) violation(t, "SET FEATURES takes one address cycle");
      op_feat_ = a;
      break;
    case 0xEE:
      if (n > 1) violation(t, "GET FEATURES takes one address cycle");
      op_feat_ = a; op_ = Op::GetFeat; out_ = Out::Features; out_idx_ = 0; have_cmd_ = false;
      start_busy(t, cfg.tFEAT_ns);
      break;
    default:
      violation(t, "address cycle after a command that takes none");
  }
}

void NandModel::latch_data(uint64_t t, uint8_t d) {
  if (busy(t)) violation(t, "data input cycle while busy");
  if (!have_cmd_ || (cmd_ != 0x80 && cmd_ != 0xEF)) { violation(t, "data input cycle outside PROGRAM/SET FEATURES"); return; }
  size_t need = cmd_ == 0x80 ? 5 : 1;
  if (addr_.size() != need) { violation(t, "data input before the address cycles were complete"); return; }
  if (!nvddr_ && data_in_count_ == 0 && t - t_last_addr_ < (uint64_t)T_->tADL)
    violation(t, "tADL " + std::to_string(t - t_last_addr_) + " ns < " + std::to_string(T_->tADL) + " ns");
  if (cmd_ == 0x80) {
    if (col_ >= page_size()) { violation(t, "data input past the end of the page register"); return; }
    loaded_[col_] = true;
    reg_[col_++] = d;
  } else {
    feat_in_[data_in_count_] = d;
    if (data_in_count_ == 3) {
      memcpy(features_[op_feat_], feat_in_, 4);
      if (op_feat_ == 0x01) {
        int itf = feat_in_[0] >> 4 & 3, m = feat_in_[0] & 0x0F;
        if (itf > 1 || (itf == 1 && cfg.nvddr_max_mode < 0))
          violation(t, "SET FEATURES 01h: data interface " + std::to_string(itf) + " not supported");
        else if (m > (itf == 1 ? cfg.nvddr_max_mode : cfg.max_mode))
          violation(t, "SET FEATURES timing mode " + std::to_string(m) + " not supported");
      }
      op_ = Op::SetFeat; have_cmd_ = false;
      start_busy(t, cfg.tFEAT_ns);
    }
  }
  data_in_count_++;
}

uint8_t NandModel::next_output(uint64_t t) {
  switch (out_) {
    case Out::Id: return out_idx_ < 5 ? cfg.id[out_idx_++] : 0x00;
    case Out::OnfiSig: return out_idx_ < 4 ? "ONFI"[out_idx_++] : 0x00;
    case Out::Param: { uint8_t v = param_[out_idx_ % param_.size()]; out_idx_++; return v; }
    case Out::Status: return status(t);
    case Out::Features: return out_idx_ < 4 ? features_[op_feat_][out_idx_++] : 0x00;
    case Out::Page:
      if (col_ >= page_size()) { violation(t, "data output past the end of the page"); return 0xFF; }
      return reg_[col_++];
    default:
      violation(t, "RE# pulse with no data to output (no read command)");
      return 0xFF;
  }
}

#define CHECK_MIN(name, dt, lim)                                                                       \
  do {                                                                                                 \
    if (cfg.check_timing && (int64_t)(dt) < (int64_t)(lim))                                            \
      violation(t, std::string(name) + " " + std::to_string((long long)(dt)) + " ns < " +              \
                       std::to_string(lim) + " ns");                                                   \
  } while (0)

NandPinsOut NandModel::eval_ps(uint64_t tps, const NandPinsIn& in) {
  const uint64_t t = tps / 1000;
  if (tps < now_ps_) violation(t, "time went backwards");
  now_ps_ = tps;
  now_ = t;
  if (off_) { prev_ = in; return NandPinsOut{0, false, false}; }  // no power: nothing driven, R/B# low
  if (first_) { prev_ = in; first_ = false; }
  const int64_t ti = (int64_t)t;
  finish_ops(t);
  if (nvddr_) return eval_nvddr((int64_t)tps, in);

  // R/B# rising edge (for tRR): the model knows the exact time.
  bool rb = !(stuck_ || (t >= rb_low_from_ && t < busy_until_));
  if (rb && !rb_prev_) { t_rb_rise_ = (int64_t)busy_until_; read_since_rb_ = false; }
  rb_prev_ = rb;

  const NandPinsIn& p = prev_;
  bool ce = !in.ce_n, pce = !p.ce_n;
  bool we_fall = p.we_n && !in.we_n, we_rise = !p.we_n && in.we_n;
  bool re_fall = p.re_n && !in.re_n, re_rise = !p.re_n && in.re_n;
  bool cle_ch = p.cle != in.cle, ale_ch = p.ale != in.ale;
  bool dq_ch = in.dq_oe && (!p.dq_oe || p.dq != in.dq);
  bool oe_off = p.dq_oe && !in.dq_oe;

  if (ce && pce) {
    // Holds after the last WE# rising edge.
    if (dq_ch && in.we_n && p.we_n) CHECK_MIN("tDH", ti - t_we_rise_, T_->tDH);
    if (cle_ch) {
      if (!p.we_n) violation(t, "CLE changed while WE# low");
      else CHECK_MIN("tCLH", ti - t_we_rise_, T_->tCLH);
    }
    if (ale_ch) {
      if (!p.we_n) violation(t, "ALE changed while WE# low");
      else CHECK_MIN("tALH", ti - t_we_rise_, T_->tALH);
    }
    if (dq_ch && !in.we_n && !we_fall) violation(t, "DQ changed while WE# low");
  }
  if (pce && in.ce_n) {  // CE# rising
    if (!p.we_n) violation(t, "CE# deasserted while WE# low");
    CHECK_MIN("tCH", ti - t_we_rise_, T_->tCH);
  }
  if (!pce && ce) t_ce_fall_ = ti;

  if (ce) {
    if (!in.we_n && !in.re_n) violation(t, "WE# and RE# low together");
    if (we_fall) {
      CHECK_MIN("tWH", ti - t_we_rise_, T_->tWH);
      CHECK_MIN("tWC", ti - t_we_fall_, T_->tWC);
      if (read_since_write_) CHECK_MIN("tRHW", ti - t_re_rise_, T_->tRHW);
      t_we_fall_ = ti;
    }
    if (we_rise && pce) {
      CHECK_MIN("tWP", ti - t_we_fall_, T_->tWP);
      CHECK_MIN("tCS", ti - t_ce_fall_, T_->tCS);
      CHECK_MIN(p.cle ? "tCLS" : "tCLS(low)", ti - t_cle_ch_, T_->tCLS);
      CHECK_MIN(p.ale ? "tALS" : "tALS(low)", ti - t_ale_ch_, T_->tALS);
      if (!p.dq_oe) violation(t, "WE# rising edge while the controller does not drive DQ");
      CHECK_MIN("tDS", ti - t_dq_ch_, T_->tDS);
      if (driving_ && ti < drive_until_) violation(t, "bus contention: controller writes while the flash drives DQ");
      t_we_rise_ = ti;
      read_since_write_ = false;
      if (p.cle && p.ale) violation(t, "CLE and ALE both high at WE# rising edge");
      else if (p.cle) latch_command(t, p.dq);
      else if (p.ale) latch_address(t, p.dq);
      else latch_data(t, p.dq);
    }
    if (re_fall) {
      CHECK_MIN("tREH", ti - t_re_rise_, T_->tREH);
      CHECK_MIN("tRC", ti - t_re_fall_, T_->tRC);
      if (in.cle || in.ale) violation(t, "RE# low with CLE or ALE high");
      CHECK_MIN("tCLR", ti - t_cle_ch_, T_->tCLR);
      CHECK_MIN("tAR", ti - t_ale_ch_, T_->tAR);
      if (in.dq_oe) violation(t, "bus contention: RE# low while the controller drives DQ");
      CHECK_MIN("tIR", ti - t_oe_off_, T_->tIR);
      if (!read_since_write_) {
        CHECK_MIN("tWHR", ti - t_we_rise_, T_->tWHR);
        if (t_cmd_e0_ == t_we_rise_) CHECK_MIN("tCCS", ti - t_cmd_e0_, T_->tCCS);
      }
      if (!read_since_rb_) CHECK_MIN("tRR", ti - t_rb_rise_, T_->tRR);
      if (busy(t) && out_ != Out::Status) violation(t, "RE# data output while busy (R/B# low)");
      if (out_ == Out::None && have_cmd_ && cmd_ == 0x00 && addr_.empty()) out_ = Out::Page;  // 70h .. 00h
      uint8_t v = next_output(t);
      // Previous byte held for tRLOH after this fall (EDO) / tRHOH after the last rise.
      prev_byte_ = out_byte_;
      prev_valid_until_ = valid_until_ > ti ? std::max<int64_t>(valid_until_, ti + T_->tRLOH) : valid_until_;
      prev_valid_from_ = valid_from_;
      out_byte_ = v;
      valid_from_ = std::max<int64_t>(ti + T_->tREA, t_ce_fall_ + T_->tCEA);
      valid_until_ = INT64_MAX;
      driving_ = true;
      drive_until_ = INT64_MAX;
      t_re_fall_ = ti;
      read_since_write_ = true;
      read_since_rb_ = true;
    }
    if (re_rise) {
      CHECK_MIN("tRP", ti - t_re_fall_, T_->tRP);
      valid_until_ = ti + T_->tRHOH;
      drive_until_ = ti + T_->tRHZ;
      t_re_rise_ = ti;
    }
  }
  if (pce && in.ce_n && driving_) drive_until_ = std::min<int64_t>(drive_until_, ti + T_->tCHZ);
  if (cle_ch) t_cle_ch_ = ti;
  if (ale_ch) t_ale_ch_ = ti;
  if (dq_ch) t_dq_ch_ = ti;
  if (oe_off) t_oe_off_ = ti;
  prev_ = in;

  NandPinsOut o;
  o.rb_n = rb;
  if (driving_ && ti >= drive_until_) driving_ = false;
  o.dq_drive = driving_;
  if (ti >= valid_from_ && ti < valid_until_) o.dq = out_byte_;
  else if (ti >= prev_valid_from_ && ti < prev_valid_until_) o.dq = prev_byte_;
  else o.dq = uint8_t(rng_());  // data not valid yet (tREA/tCEA) or no longer held: junk
  return o;
}

// ---------------------------------------------------------------------------------------- NV-DDR
// ONFI 2.x source-synchronous interface: WE# is CLK, RE# is W/R#. At a CLK rising edge with CE# low:
// CLE=1 ALE=0 latches a command, CLE=0 ALE=1 an address (W/R# high, DQ driven by the host), CLE=ALE=1
// is a data cycle (W/R# high: the host sends data on both DQS edges; W/R# low: the flash sends two
// bytes per clock on DQS edges tDQSCK after the CLK edges), CLE=ALE=0 is idle. ID, parameter page,
// status and features are sent with each byte on both edges of a DQS period (the second edge repeats
// it), SET FEATURES takes its parameters from the rising DQS edges. Every time below is in ps.

#define CHECK_PS(name, dt, lim)                                                                        \
  do {                                                                                                 \
    if (cfg.check_timing && (int64_t)(dt) < (int64_t)(lim))                                            \
      violation(t, std::string(name) + " " + std::to_string((long long)(dt)) + " ps < " +              \
                       std::to_string((long long)(lim)) + " ps");                                      \
  } while (0)

NandPinsOut NandModel::eval_nvddr(int64_t tp, const NandPinsIn& in) {
  const uint64_t t = uint64_t(tp / 1000);
  const int64_t tck = N_->tCK;
  // ONFI gives tCKH/L, tDQSS, tDQSH/L, tWPRE, tWPST in units of the clock period the host runs: the
  // measured one (a host may run a mode's protocol at a longer period than its minimum tCK).
  auto frac = [&](int hundredths) { return (ck_ps_ ? ck_ps_ : tck) * hundredths / 100; };

  bool rb = !(stuck_ || (t >= rb_low_from_ && t < busy_until_));
  if (rb && !rb_prev_) { p_rb_rise_ = (int64_t)busy_until_ * 1000; rb_since_ = true; }
  rb_prev_ = rb;

  const NandPinsIn& p = prev_;
  bool ce = !in.ce_n, pce = !p.ce_n;
  bool clk_rise = !p.we_n && in.we_n, clk_fall = p.we_n && !in.we_n;
  bool cle_ch = p.cle != in.cle, ale_ch = p.ale != in.ale, wr_ch = p.re_n != in.re_n;
  bool dq_ch = in.dq_oe && (!p.dq_oe || p.dq != in.dq);
  bool dqs_on = in.dqs_oe && !p.dqs_oe, dqs_off = !in.dqs_oe && p.dqs_oe;
  bool dqs_rise = in.dqs_oe && p.dqs_oe && !p.dqs && in.dqs, dqs_fall = in.dqs_oe && p.dqs_oe && p.dqs && !in.dqs;

  if (!pce && ce) { CHECK_PS("tCEH", tp - p_ce_rise_, N_->tCEH); p_ce_fall_ = tp; }
  if (pce && !ce) {
    CHECK_PS("tCH", tp - p_clk_rise_, N_->tCH);
    p_ce_rise_ = tp;
    if (!p.re_n) p_release_ = std::max(p_release_, tp + N_->tDQSHZ);
    bus_ = Bus::Idle; din_active_ = false;
  }
  if (ce || pce) {
    // Changes first (hold times against the previous edges), then the edges (setup times).
    if (wr_ch) {
      if (p.cle || p.ale) violation(t, "W/R# changed while CLE or ALE is high (only in idle cycles)");
      if (in.re_n) p_release_ = std::max(p_release_, tp + N_->tDQSHZ);  // the flash turns its drivers off
      p_wr_ch_ = tp;
    }
    if (cle_ch || ale_ch) {
      CHECK_PS("tCALH", tp - p_clk_rise_, N_->tCALH);
      if (cle_ch) p_cle_ch_ = tp;
      if (ale_ch) p_ale_ch_ = tp;
    }
    if (dq_ch) {
      if (ca_hold_pending_) CHECK_PS("tCAH", tp - p_clk_rise_, N_->tCAH);
      ca_hold_pending_ = false;
      if (din_active_ && !din_first_edge_) CHECK_PS("tDH", tp - std::max(p_dqs_rise_, p_dqs_fall_), N_->tDH);
      p_dq_ch_ = tp;
    }
    if (dqs_on) {
      if (in.dqs) violation(t, "DQS write preamble must start low");
      p_dqs_on_ = tp;
    }
    if (dqs_off && din_active_ && !din_first_edge_) CHECK_PS("tWPST", tp - p_dqs_fall_, frac(K_->tWPST));
    if (clk_fall) { CHECK_PS("tCKH", tp - p_clk_rise_, frac(K_->tCKH)); p_clk_fall_ = tp; }
    if (clk_rise && ce) {
      CHECK_PS("tCK", tp - p_clk_rise_, tck);
      CHECK_PS("tCKL", tp - p_clk_fall_, frac(K_->tCKL));
      // A period counts only if CE# stayed low through it: across a deselect (two commands back to back)
      // the gap since the previous command's last rise is no clock period (at mode 0 it can be 2 tCK).
      if (p_clk_rise_ > p_ce_fall_ && tp - p_clk_rise_ <= 2 * tck) ck_ps_ = tp - p_clk_rise_;
      int64_t period = std::min<int64_t>(tp - p_clk_rise_, 2 * tck);  // this clock's period (for the outputs)
      if (in.cle || in.ale) {
        CHECK_PS("tCS", tp - p_ce_fall_, N_->tCS);
        CHECK_PS("tCALS(CLE)", tp - p_cle_ch_, N_->tCALS);
        CHECK_PS("tCALS(ALE)", tp - p_ale_ch_, N_->tCALS);
      }
      if (in.cle != in.ale) {  // command or address cycle
        if (!in.re_n) violation(t, "command/address cycle with W/R# low");
        if (!in.dq_oe) violation(t, "command/address cycle while the host does not drive DQ");
        CHECK_PS("tCAS", tp - p_dq_ch_, N_->tCAS);
        CHECK_PS("tCAD", tp - p_ca_latch_, N_->tCAD);
        if (out_since_ca_) CHECK_PS("tRHW", tp - p_last_out_, N_->tRHW);
        p_ca_latch_ = tp;
        ca_hold_pending_ = true;
        out_since_ca_ = false;
        din_active_ = false;
        if (in.cle) {
          bus_ = Bus::Cmd;
          latch_command(t, in.dq);
          if (in.dq == 0xE0) p_e0_ = tp;
        } else {
          bus_ = Bus::Addr;
          latch_address(t, in.dq);
          p_last_addr_ = tp;
        }
      } else if (in.cle && in.ale && in.re_n) {  // data input cycle
        if (bus_ != Bus::DataIn) {
          CHECK_PS("tCAD", tp - p_ca_latch_, N_->tCAD);
          if (have_cmd_ && (cmd_ == 0x80 || cmd_ == 0xEF) && data_in_count_ == 0)
            CHECK_PS("tADL", tp - p_last_addr_, N_->tADL);
          bus_ = Bus::DataIn;
          din_active_ = true;
          din_first_edge_ = true;
          p_din_clk_ = tp;
        }
      } else if (in.cle && in.ale) {  // data output cycle: two bytes on the next DQS edges
        CHECK_PS("tWRCK", tp - p_wr_ch_, N_->tWRCK);
        if (bus_ != Bus::DataOut && !out_since_ca_) {
          CHECK_PS("tWHR", tp - p_ca_latch_, N_->tWHR);
          if (p_e0_ == p_ca_latch_) CHECK_PS("tCCS", tp - p_e0_, N_->tCCS);
        }
        if (rb_since_) { CHECK_PS("tRR", tp - p_rb_rise_, N_->tRR); rb_since_ = false; }
        bus_ = Bus::DataOut;
        if (busy(t) && out_ != Out::Status) violation(t, "data output cycle while busy (R/B# low)");
        if (out_ == Out::None && have_cmd_ && cmd_ == 0x00 && addr_.empty()) out_ = Out::Page;  // 70h .. 00h
        int64_t half = period / 2;
        uint8_t b0 = next_output(t);
        uint8_t b1 = out_ == Out::Page ? next_output(t) : b0;  // non-array data: each byte on both edges
        int64_t e0 = tp + cfg.tDQSCK_ps;
        beats_.push_back({e0, half, b0, true});
        beats_.push_back({e0 + half, half, b1, false});
        out_since_ca_ = true;
        p_last_out_ = tp;  // tRHW counts from the last data output clock
      } else {
        bus_ = Bus::Idle;
      }
      p_clk_rise_ = tp;
    }
    if (dqs_rise || dqs_fall) {
      if (!din_active_) violation(t, "DQS toggled by the host outside a data input");
      else {
        if (dqs_rise && din_first_edge_) {
          int64_t d = tp - p_din_clk_;
          if (cfg.check_timing && (d < frac(K_->tDQSSmin) || d > frac(K_->tDQSS)))
            violation(t, "tDQSS " + std::to_string((long long)d) + " ps outside [" + std::to_string((long long)frac(K_->tDQSSmin)) +
                             ", " + std::to_string((long long)frac(K_->tDQSS)) + "] ps");
          CHECK_PS("tWPRE", tp - p_dqs_on_, frac(K_->tWPRE));
        } else if (dqs_rise) {
          CHECK_PS("tDQSL", tp - p_dqs_fall_, frac(K_->tDQSL));
        } else {
          CHECK_PS("tDQSH", tp - p_dqs_rise_, frac(K_->tDQSH));
        }
        if (!in.dq_oe) violation(t, "DQS edge while the host does not drive DQ");
        CHECK_PS("tDS", tp - p_dq_ch_, N_->tDS);
        if (dqs_rise || cmd_ == 0x80) latch_data(t, in.dq);  // SET FEATURES: the falling edge repeats the byte
        din_first_edge_ = false;
      }
      if (dqs_rise) p_dqs_rise_ = tp; else p_dqs_fall_ = tp;
    }
  }
  prev_ = in;

  NandPinsOut o;
  o.rb_n = rb;
  bool drive = (ce && !in.re_n) || tp < p_release_;
  if (drive && (in.dq_oe || in.dqs_oe))
    violation(t, std::string("bus contention: the host drives ") + (in.dq_oe ? "DQ" : "DQS") + " while the flash does (W/R# low or within tDQSHZ)");
  o.dq_drive = o.dqs_drive = drive;
  // Latest launched beat at or before now.
  const Beat* cur = nullptr;
  for (auto it = beats_.rbegin(); it != beats_.rend(); ++it)
    if (it->edge <= tp) { cur = &*it; break; }
  o.dqs = cur && cur->rise;
  if (cur && tp >= cur->edge + N_->tDQSQ && tp < cur->edge + cur->half - N_->tQHS) o.dq = cur->v;
  else o.dq = uint8_t(rng_());  // between data eyes: junk
  if (beats_.size() > 64) {  // forget beats whose eye closed long ago (the newest ones may lie ahead)
    auto keep = std::find_if(beats_.begin(), beats_.end(), [&](const Beat& x) { return x.edge >= tp - 4 * tck; });
    if (keep != beats_.begin()) beats_.erase(beats_.begin(), keep - 1);
  }
  return o;
}

bool NandModel::dq_eye(int64_t tp, uint8_t& v) const {
  const Beat* cur = nullptr;
  for (auto it = beats_.rbegin(); it != beats_.rend(); ++it)
    if (it->edge <= tp) { cur = &*it; break; }
  if (cur && tp >= cur->edge + N_->tDQSQ && tp < cur->edge + cur->half - N_->tQHS) { v = cur->v; return true; }
  return false;
}

uint8_t NandModel::dq_at(int64_t tp) const {
  uint8_t v;
  if (dq_eye(tp, v)) return v;
  uint64_t h = uint64_t(tp) * 0x9E3779B97F4A7C15ull;  // junk, the same for the same instant
  return uint8_t(h >> 56);
}

}  // namespace onfi
