// kb16 back end (LSMC_OFFLOAD=kb16, named rtl before the table engine had RTL): the Verilated KB16
// compaction IP (build/gen/compaction_w128/CompactionIp.v) in-process.
//
// Registers through an AXI4-Lite master (hw/ip/compaction/doc/compaction-ip.md, generated map compaction_regs.md),
// runs through the key0/key1 streams, results from the out/invalid streams, all on one clock: the
// STATUS poll runs while the streams move, as firmware polls during DMA. LSMC_RTL_STALL=P (0 <= P < 1)
// withholds each source beat and each sink ready with probability P (seeded by LSMC_RTL_SEED), so
// back-pressure and idle cycles are exercised; device cycles are the IP's own HW_CYCLES register. The
// master, sources, sinks and PRNG are the harnesses' testbench library (sim/common/tb.h).
#include <array>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>

#include "VCompactionIp.h"
#include "compaction_regs.h"
#include "lsmc_env.h"
#include "backend.h"
#include "kb16.h"
#include "tb.h"
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

class Device {
   public:
    Device()
        : ctx(new VerilatedContext),
          top(new VCompactionIp(ctx.get(), "lsmc_ip")),
          src{{&rng, 4}, {&rng, 4}},
          out(&rng, 4),
          inv(&rng, 1),
          ctrl(&rng, ctrl_pins(top.get())) {
        const double stall = lsmc_env_rtl_stall();
        for (auto& k : src) k.pause.set(stall);
        out.pause.set(stall);
        inv.pause.set(stall);
        unsigned long long seed;
        if (lsmc_env_rtl_seed(&seed)) rng.seed(seed);
        top->io_ctrl_aw_payload_prot = top->io_ctrl_ar_payload_prot = 0;
        top->io_ctrl_w_payload_strb = 0xF;
        reset();
    }
    ~Device() { top->final(); }

    uint32_t id() { return bus(false, kId, 0); }

    int merge(const uint8_t* r0, size_t l0, const uint8_t* r1, size_t l1, unsigned group, Merged* m, char* err,
              size_t n) {
        if ((l0 | l1) % 16 || l0 > 0xFFFFFFFFu || l1 > 0xFFFFFFFFu) {
            say(err, n, "kb16: run lengths %zu/%zu not whole 32-bit entry counts", l0, l1);
            return KB16_ERR_LENGTH;
        }
        if (bus(false, kStatus, 0) & kStError) bus(true, kCtrl, CIP_CTRL_SOFT_RESET_MASK);
        src[0].clear();
        src[0].pushBytes(r0, l0, true);
        src[1].clear();
        src[1].pushBytes(r1, l1, true);
        out_cap = m->out.size() / 16;
        inv_cap = m->inv.size();
        out.clear();
        inv.clear();
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
            if (overflow()) break;
            if (cycle - last_activity > kIdleLimit) {
                say(err, n, "kb16: the IP made no progress for %llu cycles (STATUS=0x%08x, %zu/%zu and %zu/%zu beats sent)",
                    (unsigned long long)kIdleLimit, st, src[0].size() - src[0].left(), src[0].size(),
                    src[1].size() - src[1].left(), src[1].size());
                reset();
                return -1;
            }
        }
        if (overflow() || (st & kStError)) {
            uint32_t idx = bus(false, kErrIndex, 0);
            unsigned code = (st & CIP_STATUS_ERR_CODE_MASK) >> CIP_STATUS_ERR_CODE_SHIFT;
            if (overflow()) say(err, n, "kb16: output beyond the %zu-entry buffer", out_cap);
            else say(err, n, "kb16: IP error %s (input %u, entry %u)", kb16_err_name(code), (st & CIP_STATUS_ERR_INPUT_MASK) >> CIP_STATUS_ERR_INPUT_SHIFT, idx);
            bus(true, kCtrl, CIP_CTRL_SOFT_RESET_MASK);  // soft reset: ready for the next job
            for (auto& s : src) s.clear();
            return code ? (int)code : -1;
        }
        m->cycles = bus(false, kHwCycles, 0);
        m->out_keys = bus(false, kOutKeys, 0);
        for (size_t i = 0; i < out.data.size(); i++) simc::putLe32(m->out.data() + 4 * i, out.data[i]);
        std::copy(inv.data.begin(), inv.data.end(), m->inv.begin());
        m->out_len = out.beats() * 16;
        m->inv_count = inv.beats();
        return 0;
    }

   private:
    std::unique_ptr<VerilatedContext> ctx;
    std::unique_ptr<VCompactionIp> top;
    simc::Prng rng;  // the stalls of every job, in one sequence from LSMC_RTL_SEED
    simc::StreamSource src[2];
    simc::StreamSink out, inv;  // taken beats; more than the caller's buffers hold is an overflow
    using CtrlAddr = std::remove_reference_t<decltype(std::declval<VCompactionIp&>().io_ctrl_aw_payload_addr)>;
    simc::AxiLiteMaster<CtrlAddr> ctrl;
    size_t out_cap = 0, inv_cap = 0;
    uint64_t cycle = 0, last_activity = 0;

    static simc::AxiLitePins<CtrlAddr> ctrl_pins(VCompactionIp* t) {
        simc::AxiLitePins<CtrlAddr> p;
        SIMC_BIND_AXI_LITE(p, t, io_ctrl);
        return p;
    }
    bool overflow() const { return out.beats() > out_cap || inv.beats() > inv_cap; }

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
        ctrl.idle();
        top->clk = 0;
        top->eval();
        for (int i = 0; i < 8; i++) edge();
        top->reset = 0;
        top->eval();
        for (auto& s : src) s.clear();
        out.dropPending();
        inv.dropPending();
    }

    // One clock with the streams running and the AXI4-Lite master's transaction under way.
    void tick() {
        VCompactionIp* t = top.get();
        t->io_key0_valid = src[0].drive();
        t->io_key1_valid = src[1].drive();
        if (src[0].valid()) simc::putWords(t->io_key0_payload_fragment, src[0].beat()), t->io_key0_payload_last = src[0].last();
        if (src[1].valid()) simc::putWords(t->io_key1_payload_fragment, src[1].beat()), t->io_key1_payload_last = src[1].last();
        t->io_out_ready = out.drive();
        t->io_invalid_ready = inv.drive();
        ctrl.drive();
        t->eval();
        bool f0 = t->io_key0_valid && t->io_key0_ready, f1 = t->io_key1_valid && t->io_key1_ready;
        uint32_t ob[4], ib[1];
        simc::getWords(t->io_out_payload_fragment, ob);
        simc::getWords(t->io_invalid_payload_fragment, ib);
        bool fo = out.sample(t->io_out_valid, ob, t->io_out_payload_last);
        bool fi = inv.sample(t->io_invalid_valid, ib, t->io_invalid_payload_last);
        ctrl.sample();
        edge();
        if (f0) src[0].take();
        if (f1) src[1].take();
        if (f0 || f1 || fo || fi) last_activity = cycle;
        ctrl.update();
    }

    uint32_t bus(bool write, uint32_t addr, uint32_t data) {
        ctrl.start(write, addr, data);
        for (int i = 0; !ctrl.done(); i++) {
            if (i > 10000) throw std::runtime_error("AXI4-Lite: no response in 10000 cycles");
            tick();
        }
        return ctrl.data();
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
                say(err, n, "kb16: ID register reads 0x%08x, not the IP's 'LSMC'", id);
                return -1;
            }
        }
        return g_dev->merge(r0, l0, r1, l1, group, m, err, n);
    } catch (const std::exception& e) {
        say(err, n, "kb16: %s", e.what());
        delete g_dev;
        g_dev = nullptr;
        return -1;
    }
}

}  // namespace lsmc
