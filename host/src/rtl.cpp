// rtl back end: the Verilated compaction IP (build/gen/compaction_w128/CompactionIp.v) in-process.
//
// Registers through an AXI4-Lite master (hw/ip/compaction/doc/compaction-ip.md, generated map compaction_regs.md),
// runs through the key0/key1 streams, results from the out/invalid streams, all on one clock: the
// STATUS poll runs while the streams move, as firmware polls during DMA. LSMC_RTL_STALL=P (0 <= P < 1)
// withholds each source beat and each sink ready with probability P (seeded by LSMC_RTL_SEED), so
// back-pressure and idle cycles are exercised; device cycles are the IP's own HW_CYCLES register.
#include <array>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "VCompactionIp.h"
#include "compaction_regs.h"
#include "backend.h"
#include "kb16.h"
#include "verilated.h"

namespace lsmc {
namespace {

// Register offsets and fields: the generated map of the IP (build/gen/compaction_w128), never restated.
enum : uint32_t {
    kCtrl = CIP_CTRL, kGroup = CIP_GROUP, kStatus = CIP_STATUS, kErrIndex = CIP_ERR_INDEX,
    kIn0Bytes = CIP_IN0_BYTES, kIn1Bytes = CIP_IN1_BYTES, kOutCap = CIP_OUT_CAPACITY, kInvCap = CIP_INV_CAPACITY,
    kHwCycles = CIP_HW_CYCLES, kOutKeys = CIP_OUT_KEYS, kId = CIP_ID
};
constexpr uint32_t kStBusy = CIP_STATUS_BUSY_MASK, kStDone = CIP_STATUS_DONE_MASK, kStError = CIP_STATUS_ERROR_MASK;
constexpr uint64_t kIdleLimit = 200000;  // cycles without any handshake: the IP is stuck

struct Rng {  // xorshift64*
    uint64_t s = 0x9E3779B97F4A7C15ull;
    uint64_t next() { s ^= s >> 12; s ^= s << 25; s ^= s >> 27; return s * 2685821657736338717ull; }
    bool chance(double p) { return p > 0 && (next() >> 11) * (1.0 / 9007199254740992.0) < p; }
};

uint32_t le32(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
void put_le32(uint8_t* p, uint32_t v) { p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24; }

class Device {
   public:
    Device() : ctx(new VerilatedContext), top(new VCompactionIp(ctx.get(), "lsmc_ip")) {
        const char* s = getenv("LSMC_RTL_STALL");
        if (s && *s) stall = atof(s);
        if (!(stall >= 0 && stall < 1)) stall = 0;
        const char* seed = getenv("LSMC_RTL_SEED");
        rng.s ^= seed ? strtoull(seed, nullptr, 0) * 0x2545F4914F6CDD1Dull : 0;
        if (!rng.s) rng.s = 1;
        top->io_ctrl_aw_payload_prot = top->io_ctrl_ar_payload_prot = 0;
        top->io_ctrl_w_payload_strb = 0xF;
        reset();
    }
    ~Device() { top->final(); }

    uint32_t id() { return bus(false, kId, 0); }

    int merge(const uint8_t* r0, size_t l0, const uint8_t* r1, size_t l1, unsigned group, Merged* m, char* err,
              size_t n) {
        if ((l0 | l1) % 16 || l0 > 0xFFFFFFFFu || l1 > 0xFFFFFFFFu) {
            say(err, n, "rtl: run lengths %zu/%zu not whole 32-bit entry counts", l0, l1);
            return KB16_ERR_LENGTH;
        }
        if (bus(false, kStatus, 0) & kStError) bus(true, kCtrl, CIP_CTRL_SOFT_RESET_MASK);
        src[0] = {r0, l0 / 16, 0, false};
        src[1] = {r1, l1 / 16, 0, false};
        out_cap = m->out.size() / 16;
        inv_cap = m->inv.size();
        out = m->out.data();
        inv = m->inv.data();
        n_out = n_inv = 0;
        overflow = false;
        bus(true, kGroup, group);
        bus(true, kIn0Bytes, (uint32_t)l0);
        bus(true, kIn1Bytes, (uint32_t)l1);
        bus(true, kOutCap, (uint32_t)(out_cap * 16 > 0xFFFFFFFFu ? 0xFFFFFFF0u : out_cap * 16));
        bus(true, kInvCap, (uint32_t)(inv_cap * 4 > 0xFFFFFFFFu ? 0xFFFFFFFCu : inv_cap * 4));
        bus(true, kCtrl, CIP_CTRL_START_MASK);
        uint32_t st = 0;
        last_activity = cycle;
        for (;;) {
            st = bus(false, kStatus, 0);
            if (st & kStDone) break;
            if ((st & kStError) && src[0].left() == 0 && src[1].left() == 0) break;
            if (overflow) break;
            if (cycle - last_activity > kIdleLimit) {
                say(err, n, "rtl: the IP made no progress for %llu cycles (STATUS=0x%08x, %zu/%zu and %zu/%zu beats sent)",
                    (unsigned long long)kIdleLimit, st, src[0].pos, src[0].n, src[1].pos, src[1].n);
                reset();
                return -1;
            }
        }
        if (overflow || (st & kStError)) {
            uint32_t idx = bus(false, kErrIndex, 0);
            unsigned code = (st & CIP_STATUS_ERR_CODE_MASK) >> CIP_STATUS_ERR_CODE_SHIFT;
            if (overflow) say(err, n, "rtl: output beyond the %zu-entry buffer", out_cap);
            else say(err, n, "rtl: IP error %s (input %u, entry %u)", kb16_err_name(code), (st & CIP_STATUS_ERR_INPUT_MASK) >> CIP_STATUS_ERR_INPUT_SHIFT, idx);
            bus(true, kCtrl, CIP_CTRL_SOFT_RESET_MASK);  // soft reset: ready for the next job
            for (auto& s : src) s = Src{};
            return code ? (int)code : -1;
        }
        m->cycles = bus(false, kHwCycles, 0);
        m->out_keys = bus(false, kOutKeys, 0);
        m->out_len = n_out * 16;
        m->inv_count = n_inv;
        return 0;
    }

   private:
    struct Src {
        const uint8_t* p = nullptr;
        size_t n = 0, pos = 0;
        bool presenting = false;
        size_t left() const { return n - pos; }
    };
    std::unique_ptr<VerilatedContext> ctx;
    std::unique_ptr<VCompactionIp> top;
    Rng rng;
    double stall = 0;
    Src src[2];
    uint8_t* out = nullptr;
    uint32_t* inv = nullptr;
    size_t out_cap = 0, inv_cap = 0, n_out = 0, n_inv = 0;
    bool overflow = false;
    uint64_t cycle = 0, last_activity = 0;

    void edge() {
        top->clk = 1;
        top->eval();
        top->clk = 0;
        top->eval();
        cycle++;
    }

    void reset() {
        top->reset = 1;
        top->io_key0_valid = top->io_key1_valid = 0;
        top->io_out_ready = top->io_invalid_ready = 0;
        top->io_ctrl_aw_valid = top->io_ctrl_w_valid = top->io_ctrl_ar_valid = 0;
        top->io_ctrl_b_ready = top->io_ctrl_r_ready = 0;
        top->clk = 0;
        top->eval();
        for (int i = 0; i < 8; i++) edge();
        top->reset = 0;
        top->eval();
        for (auto& s : src) s = Src{};
    }

    // One clock with the streams running; `a` is the AXI4-Lite master's request state.
    struct Axi {
        bool write = false, aw = false, w = false, ar = false, done = false;
        uint32_t addr = 0, data = 0;
    };
    void tick(Axi& a) {
        VCompactionIp* t = top.get();
        for (int i = 0; i < 2; i++)
            if (!src[i].presenting && src[i].left() && !rng.chance(stall)) src[i].presenting = true;
        t->io_key0_valid = src[0].presenting;
        t->io_key1_valid = src[1].presenting;
        if (src[0].presenting) load_beat(t->io_key0_payload_fragment, src[0]), t->io_key0_payload_last = src[0].pos + 1 == src[0].n;
        if (src[1].presenting) load_beat(t->io_key1_payload_fragment, src[1]), t->io_key1_payload_last = src[1].pos + 1 == src[1].n;
        t->io_out_ready = !rng.chance(stall);
        t->io_invalid_ready = !rng.chance(stall);
        t->io_ctrl_aw_valid = a.aw;
        t->io_ctrl_w_valid = a.w;
        t->io_ctrl_ar_valid = a.ar;
        t->io_ctrl_aw_payload_addr = a.addr;
        t->io_ctrl_ar_payload_addr = a.addr;
        t->io_ctrl_w_payload_data = a.data;
        t->io_ctrl_b_ready = 1;
        t->io_ctrl_r_ready = 1;
        t->eval();
        bool f0 = t->io_key0_valid && t->io_key0_ready, f1 = t->io_key1_valid && t->io_key1_ready;
        bool fo = t->io_out_valid && t->io_out_ready, fi = t->io_invalid_valid && t->io_invalid_ready;
        bool faw = a.aw && t->io_ctrl_aw_ready, fw = a.w && t->io_ctrl_w_ready, far = a.ar && t->io_ctrl_ar_ready;
        bool fb = t->io_ctrl_b_valid, fr = t->io_ctrl_r_valid;
        if (fo) {
            if (n_out < out_cap) {
                for (int w = 0; w < 4; w++) put_le32(out + n_out * 16 + 4 * w, t->io_out_payload_fragment[w]);
                n_out++;
            } else {
                overflow = true;
            }
        }
        if (fi) {
            if (n_inv < inv_cap) inv[n_inv++] = t->io_invalid_payload_fragment;
            else overflow = true;
        }
        uint32_t rdata = t->io_ctrl_r_payload_data;
        edge();
        for (int i = 0; i < 2; i++)
            if (i == 0 ? f0 : f1) src[i].pos++, src[i].presenting = false;
        if (f0 || f1 || fo || fi) last_activity = cycle;
        if (faw) a.aw = false;
        if (fw) a.w = false;
        if (far) a.ar = false;
        if (fb && a.write && !a.aw && !a.w) a.done = true;
        if (fr && !a.write && !a.ar) a.data = rdata, a.done = true;
    }

    template <class W>
    static void load_beat(W& s, const Src& r) {
        const uint8_t* p = r.p + r.pos * 16;
        for (int w = 0; w < 4; w++) s[w] = le32(p + 4 * w);
    }

    uint32_t bus(bool write, uint32_t addr, uint32_t data) {
        Axi a;
        a.write = write;
        a.addr = addr;
        a.data = data;
        a.aw = a.w = write;
        a.ar = !write;
        for (int i = 0; !a.done; i++) {
            if (i > 10000) throw std::runtime_error("AXI4-Lite: no response in 10000 cycles");
            tick(a);
        }
        return a.data;
    }
};

Device* g_dev = nullptr;

}  // namespace

int rtl_merge2(const uint8_t* r0, size_t l0, const uint8_t* r1, size_t l1, unsigned group, Merged* m, char* err,
               size_t n) {
    try {
        if (!g_dev) {
            g_dev = new Device;  // lives for the process: Verilator models are costly to build
            uint32_t id = g_dev->id();
            if (id != 0x4C534D43u) {
                say(err, n, "rtl: ID register reads 0x%08x, not the IP's 'LSMC'", id);
                return -1;
            }
        }
        return g_dev->merge(r0, l0, r1, l1, group, m, err, n);
    } catch (const std::exception& e) {
        say(err, n, "rtl: %s", e.what());
        delete g_dev;
        g_dev = nullptr;
        return -1;
    }
}

}  // namespace lsmc
