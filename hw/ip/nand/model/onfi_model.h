// ONFI 1.0/2.x asynchronous (SDR) NAND flash model for cycle-based simulation (Verilator harnesses).
// One NandModel is one target (one CE#, one LUN). Several targets on a channel share DQ: the harness
// ORs nothing, it takes DQ from the one model that drives (see NandPinsOut::dq_drive).
//
// The default configuration follows the Micron MT29F4G08ABADA (4 Gb, x8, SLC, 3.3 V) datasheet:
// ID 2Ch DCh 90h 95h 56h, 2048+64 byte pages, 64 pages/block, 4096 blocks, tR 25 us, tPROG 200 us
// (typ), tBERS 700 us (typ), NOP 4, timing modes 0..5. Geometry is configurable (tests use 64
// blocks). See hw/ip/nand/doc/nand.md for the sources and the model's limits.
//
// Usage: call eval(t, pins) every time the controller's pins may have changed and every time you
// sample the outputs, with t non-decreasing (ns). Each call first records pin edges at time t (and
// checks every ONFI timing of the active mode against them), then returns the outputs at time t.
// A violation calls cfg.on_violation (default: print to stderr and exit(3)).
#pragma once
#include "onfi_timing.h"
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace onfi {

static const int64_t kNever = -1000000000000LL;  // "long ago" for edge times in ps

// ONFI asynchronous timing parameters in ns (minimums unless noted).
// ONFI async timing parameters (ns) of one mode: hw/ip/nand/data/onfi_timing.json via onfi_timing.h.
struct Timing {
  ONFI_ASYNC_MEMBERS(int)
};
const Timing& onfi_timing(int mode);  // mode 0..5
// NV-DDR timing (ps) and its tCK-relative parameters (1/100 tCK) of one mode, from the same data file.
struct NvddrTiming {
  ONFI_NVDDR_MEMBERS(int)
};
struct NvddrTck {
  ONFI_NVDDR_TCK_MEMBERS(int)
};
const NvddrTiming& nvddr_timing(int mode);
const NvddrTck& nvddr_tck(int mode);

// In the NV-DDR interface the WE# pin is CLK and the RE# pin is W/R# (ONFI 2.x); DQS is used only there.
struct NandPinsIn {  // controller -> flash, as seen at the package pins
  uint8_t dq = 0;
  bool dq_oe = false;  // controller drives DQ
  bool cle = false, ale = false, ce_n = true, we_n = true, re_n = true, wp_n = true;
  bool dqs = false, dqs_oe = false;  // NV-DDR data strobe (controller drives it for data input)
};
struct NandPinsOut {  // flash -> controller
  uint8_t dq = 0;     // meaningful only while dq_drive; junk (pseudo-random) while data is not valid
  bool dq_drive = false;
  bool rb_n = true;   // open drain R/B#: false = busy
  bool dqs = false, dqs_drive = false;  // NV-DDR: the flash drives DQS during data output
};

struct Config {
  // Geometry (defaults: MT29F4G08ABADA). pages_per_block must be a power of two.
  uint32_t page_bytes = 2048, spare_bytes = 64, pages_per_block = 64, blocks = 4096;
  uint8_t id[5] = {0x2C, 0xDC, 0x90, 0x95, 0x56};
  std::string manufacturer = "MICRON", model = "MT29F4G08ABADAWP";
  // Array busy times in ns (datasheet typical tPROG/tBERS, max tR; tFEAT and tRST from the datasheet).
  uint64_t tR_ns = 25000, tPROG_ns = 200000, tBERS_ns = 700000, tFEAT_ns = 1000;
  // Cache read (31h sequential / 3Fh end, ONFI optional command bit 1): the cache register busy time.
  uint64_t tRCBSY_ns = 3000;
  // Cache program (80h..15h, ONFI optional command bit 0): the cache register busy time (model value).
  uint64_t tCBSY_ns = 3000;
  uint64_t tRST_read_ns = 5000, tRST_prog_ns = 10000, tRST_erase_ns = 500000, tRST_poweron_ns = 0;
  int nop = 4;                 // partial-page programs allowed per page between erases
  int initial_mode = 0;        // ONFI timing mode after power-on (and after RESET)
  int max_mode = 5;            // highest mode advertised in the parameter page
  std::vector<uint32_t> bad_blocks = {};  // factory bad blocks (marker 00h at spare byte 0, pages 0 and 1)
  uint32_t seed = 1;
  // Bit errors injected into every page read (into the page register after tR); spread = error i goes
  // to main-area sector i % sectors (sector = 512 bytes), else anywhere in the main area.
  int bit_errors_per_read = 0;
  bool bit_error_spread = true;
  bool stuck_busy = false;     // hold R/B# low (and status RDY = 0) from the next busy period on
  // Fault injection, after Linux's nandsim (runtime changes allowed):
  int bit_flips_max = 0;                  // every read flips a random number of bits in [0, max], page + spare
  std::map<uint32_t, int> erase_limit;    // weak blocks: block -> erases that succeed; the next fails, block grows bad
  std::map<uint32_t, int> program_limit;  // weak pages: row -> programs that succeed; later ones fail, page torn
  std::map<uint32_t, int> read_limit;     // grave pages: row -> clean reads; later reads flip 1 % of the bits
  int fail_programs = 0, fail_erases = 0; // the next N programs / erases fail (FAIL in status; program: page torn)
  int power_cut_after = -1;               // the N-th next program/erase (0 = next) loses power: see power_cut()
  // NV-DDR (source-synchronous) interface: highest timing mode, -1 = SDR only (the MT29F4G08ABADA).
  int nvddr_max_mode = -1;
  // This part's DQS output delay from CLK (tDQSCK): anywhere in the ONFI window [tDQSCKmin, tDQSCK]
  // (3..25 ns, wider than a mode-5 clock period), which is why the controller trains its capture.
  uint32_t tDQSCK_ps = 7300;
  // Planes per target (a power of two; plane = block % planes, the low block address bits): 1 = no
  // multi-plane commands (the MT29F4G08ABADA), 2 = the MT29F16G08ABABA, which then takes 80h..11h,
  // 00h..32h and 60h..D1h for every plane but the last (busy tDBSY after each; the last plane's 10h, 15h,
  // 30h or D0h starts them all), and 06h-E0h to select a plane's page register for output. tDBSY: the MT29F16G08ABACA datasheet family's 0.5 us (typ).
  uint32_t planes = 1;
  uint64_t tDBSY_ns = 500;
  std::string ecc_note;  // datasheet ECC requirement in words (docs only)
  int ecc_bits = 4;      // ECC bits required per codeword (parameter page byte 112)
  // Per-operation hook (the SoC harness's fault schedule): asked at each PROGRAM / ERASE confirm that
  // would otherwise succeed; returns 0 = go on, 1 = the operation fails (program: page torn), 2 = power cut.
  std::function<int(bool erase, uint32_t row)> op_fault;
  bool check_timing = true;
  std::function<void(const std::string&)> on_violation;  // default: print + exit(3)
};

// Micron MT29F16G08ABABA (16 Gb, x8, SLC, ONFI 2.2, asynchronous modes 0..5 and NV-DDR modes 0..5):
// 4096 + 224 byte pages, 128 pages per block, 4096 blocks (2 planes, multi-plane program/read/erase), tR 25 us, tPROG 230 us (typ),
// tBERS 2 ms (typ), ECC 4 bits per 540 bytes. hw/ip/nand/doc/nand.md lists what is taken from where.
Config mt29f16g08ababa();

class NandModel {
 public:
  explicit NandModel(const Config& cfg = Config(), const std::string& name = "nand");
  NandPinsOut eval(uint64_t time_ns, const NandPinsIn& in) { return eval_ps(time_ns * 1000, in); }
  // Same, time in ps (NV-DDR edges are sub-ns apart; SDR harnesses may keep calling eval()).
  NandPinsOut eval_ps(uint64_t time_ps, const NandPinsIn& in);
  bool nvddr() const { return nvddr_; }  // the NV-DDR interface is active
  // NV-DDR read capture (for a harness's model of the controller's delay line + IDDR): DQ at any instant
  // already launched (junk outside the eyes).
  uint8_t dq_at(int64_t t_ps) const;
  bool dq_eye(int64_t t_ps, uint8_t& v) const;  // DQ at t_ps if this target drives a byte inside its eye

  Config cfg;  // runtime changes allowed (bit errors, stuck_busy, check_timing)
  int mode() const { return mode_; }
  bool busy(uint64_t t) const { return busy_until_ > t || stuck_; }
  void set_stuck_busy(bool s) { cfg.stuck_busy = s; if (!s) stuck_ = false; }

  // Test back doors (no timing): raw page access, row = block * pages_per_block + page.
  std::vector<uint8_t> peek(uint32_t row) const;
  void poke(uint32_t row, const std::vector<uint8_t>& data);
  uint32_t page_size() const { return cfg.page_bytes + cfg.spare_bytes; }
  std::vector<uint8_t> param_page() const { return param_; }
  // Faults. A grown bad block fails every program and erase (its marker is not touched). A power cut
  // during a program leaves the bits being programmed (1 -> 0) random, during an erase the bits being
  // erased (0 -> 1) of every page of the block random; the target is then off (ignores its pins, R/B#
  // low, no checks) until power_on(t) (then mode 0, like after power-up; the host issues RESET).
  void grow_bad(uint32_t block) { grown_bad_.insert(block); }
  bool powered() const { return !off_; }
  void power_on(uint64_t t);
  uint64_t n_faults = 0;  // programs/erases failed or cut by injection, grave reads
  // Damage byte `off` of every parameter-page copy (tests of the host's CRC check).
  void corrupt_param(uint32_t off) { for (size_t i = off % 256; i < param_.size(); i += 256) param_[i] ^= 0x01; }

  // Statistics.
  uint64_t n_commands = 0, n_reads = 0, n_programs = 0, n_erases = 0, n_bit_errors = 0;
  uint64_t busy_ns_total = 0;

 private:
  enum class Out { None, Id, OnfiSig, Param, Status, Features, Page };
  void violation(uint64_t t, const std::string& msg);
  void latch_command(uint64_t t, uint8_t c);
  void latch_address(uint64_t t, uint8_t a);
  void latch_data(uint64_t t, uint8_t d);
  uint8_t next_output(uint64_t t);
  void start_busy(uint64_t t, uint64_t dur);
  void finish_ops(uint64_t t);
  uint8_t status(uint64_t t) const;
  void build_param_page();
  bool row_ok(uint32_t row) const { return row < cfg.blocks * cfg.pages_per_block; }
  std::vector<uint8_t>& page(uint32_t row);
  bool is_bad(uint32_t block) const;
  void tear(std::vector<uint8_t>& arr, const std::vector<uint8_t>& target);  // bits changing toward target: random
  void flip_bits(int n, bool spread_main);
  NandPinsOut eval_nvddr(int64_t tp, const NandPinsIn& in);  // NV-DDR pins and checks (time in ps)
  void set_interface(bool nvddr, int mode);
  void load_page_register();
  // Multi-plane: the planes addressed so far by 11h / 32h / D1h (a program's page register with them) and
  // which of the three opened the sequence (0: none); after a multi-plane read, each plane's page register.
  struct PlanePage { uint32_t row; std::vector<uint8_t> reg; std::vector<bool> loaded; };
  std::vector<PlanePage> mp_queue_;
  uint8_t mp_cmd_ = 0;
  std::map<uint32_t, std::pair<uint32_t, std::vector<uint8_t>>> plane_regs_;  // plane -> (row, register)
  uint32_t read_row_ = 0;    // row whose page sits in the page register after 00h-30h (06h-E0h may name it)
  bool read_valid_ = false;
  uint32_t plane_of(uint32_t row) const { return (row / cfg.pages_per_block) % cfg.planes; }
  void check_planes(uint64_t t, uint32_t row, const char* what);
  void mp_clear() { mp_queue_.clear(); mp_cmd_ = 0; plane_regs_.clear(); read_valid_ = false; }
  // One page program / block erase of a (multi-plane) confirm: returns FAIL; `cut` = the power went.
  bool program_row(uint64_t t, uint32_t row, const std::vector<uint8_t>& data, const std::vector<bool>& loaded, bool& cut);
  bool erase_row(uint64_t t, uint32_t row, bool& cut);

  // NV-DDR state (times in ps).
  bool nvddr_ = false;
  const NvddrTiming* N_ = nullptr;
  const NvddrTck* K_ = nullptr;
  enum class Bus { Idle, Cmd, Addr, DataIn, DataOut } bus_ = Bus::Idle;
  int64_t ck_ps_ = 0;  // period of the last CLK cycle (ps), the tCK the tCK-relative checks scale with
  int64_t p_clk_rise_ = kNever, p_clk_fall_ = kNever, p_cle_ch_ = kNever, p_ale_ch_ = kNever, p_dq_ch_ = kNever;
  int64_t p_ce_fall_ = kNever, p_ce_rise_ = kNever, p_wr_ch_ = kNever, p_dqs_rise_ = kNever, p_dqs_fall_ = kNever;
  int64_t p_dqs_on_ = kNever, p_dqs_off_ = kNever, p_dq_off_ = kNever, p_ca_latch_ = kNever, p_ca_kind_cmd_ = 0;
  int64_t p_din_clk_ = kNever, p_last_out_ = kNever, p_rb_rise_ = kNever, p_e0_ = kNever, p_last_addr_ = kNever;
  int64_t p_release_ = kNever;        // flash DQ/DQS driver off from here (W/R# high + tDQSHZ)
  bool ca_last_ = false;              // the last rising edge latched a command or address
  bool din_first_edge_ = true, out_since_ca_ = false, rb_since_ = false;
  int64_t tck_ps_ = 0;                // measured clock period (last rise to rise)
  // Flash output byte launched at DQS edge `edge` (DQS rises for the first byte of a clock, falls for
  // the second); valid on DQ from edge + tDQSQ to edge + half period - tQHS, junk elsewhere.
  struct Beat { int64_t edge; int64_t half; uint8_t v; bool rise; };
  std::vector<Beat> beats_;
  bool din_active_ = false, ca_hold_pending_ = false;

  std::set<uint32_t> grown_bad_;
  std::map<uint32_t, int> erase_ops_, program_ops_, read_ops_;
  bool off_ = false;

  std::string name_;
  std::mt19937 rng_;
  const Timing* T_;
  int mode_;
  // Array: only written pages are stored; absent = erased (all FFh).
  std::map<uint32_t, std::vector<uint8_t>> pages_;
  std::map<uint32_t, int> prog_count_;
  std::map<uint32_t, int> last_prog_page_;  // per block: highest page programmed since erase
  std::vector<uint8_t> reg_;                // page (cache) register
  // Cache read: the data register holds the page the array read last (it goes to reg_ at 31h / 3Fh);
  // the array is busy until array_until_ (status ARDY = 0, R/B# high: the cache register is ready).
  std::vector<uint8_t> data_reg_;
  bool cache_read_ = false;  // a page sits in the data register: 31h / 3Fh may follow
  bool array_prog_ = false;  // the array's background work (until array_until_) is a cache program
  bool cache_prog_fail_ = false;  // result of the page a cache program (15h) handed to the array
  uint32_t cache_row_ = 0;   // its row
  uint64_t array_until_ = 0;
  std::vector<uint8_t> array_read(uint32_t row);  // the page as the array delivers it (read faults applied)
  void cache_read(uint64_t t, bool last);
  std::vector<uint8_t> param_;
  uint8_t features_[256][4] = {};

  // Command state.
  uint8_t cmd_ = 0;            // command being assembled
  bool have_cmd_ = false;
  std::vector<uint8_t> addr_;
  uint32_t col_ = 0, row_ = 0;
  int data_in_count_ = 0;
  uint8_t feat_in_[4] = {};
  Out out_ = Out::None;
  uint32_t out_idx_ = 0;
  bool fail_ = false, failc_ = false;
  // Pending operation that completes at busy_until_.
  enum class Op { None, Read, Program, Erase, Reset, SetFeat, GetFeat, Param } op_ = Op::None;
  uint32_t op_row_ = 0, op_feat_ = 0;
  uint64_t busy_start_ = 0, busy_until_ = 0, rb_low_from_ = 0;
  bool stuck_ = false;
  bool reset_pending_mode_ = false;

  // Pin history (ns of the last edge of each kind; 0 = long ago).
  NandPinsIn prev_;
  bool first_ = true;
  uint64_t now_ = 0, now_ps_ = 0;
  int64_t t_we_fall_ = -1000000, t_we_rise_ = -1000000, t_re_fall_ = -1000000, t_re_rise_ = -1000000;
  int64_t t_cle_ch_ = -1000000, t_ale_ch_ = -1000000, t_ce_fall_ = -1000000, t_ce_rise_ = -1000000;
  int64_t t_dq_ch_ = -1000000, t_oe_off_ = -1000000, t_rb_rise_ = -1000000, t_last_addr_ = -1000000;
  int64_t t_cmd_e0_ = -1000000;
  bool last_we_cle_ = false, last_we_ale_ = false, read_since_write_ = false, read_since_rb_ = true;
  bool rb_prev_ = true;
  // Output data timing: current byte valid in [valid_from_, valid_until_), driver on until drive_until_.
  uint8_t out_byte_ = 0, prev_byte_ = 0;
  int64_t valid_from_ = 0, valid_until_ = 0, drive_until_ = 0, prev_valid_from_ = 0, prev_valid_until_ = 0;
  std::vector<bool> loaded_;  // columns loaded since 80h
  bool driving_ = false;
  uint64_t busy_ns_acc_start_ = 0;
};

uint16_t onfi_crc16(const uint8_t* p, size_t n);  // ONFI parameter page CRC (poly 8005h, init 4F4Eh)

}  // namespace onfi
