// Verilator harness of the compaction IP alone (top `CompactionIp`, ports of docs/architecture.md).
//
// A small command interpreter (script from a file or stdin, one command per line) drives the IP:
// an AXI4-Lite master for the registers, stream sources for key0..key<WAYS-1>, sinks for out/invalid, each
// with optional random stalls from one seeded PRNG (all sim/common/tb.h). Every command advances the same clock, so the
// streams keep moving while registers are read or written (like firmware polling during DMA).
// hw/ip/compaction/doc/compaction-sim.md lists the commands; lsmc/sim/ipsim.py generates the scripts.
//
// Exit status: 0 ok, 1 an `expect` failed or a protocol check failed, 2 bad script/file/usage.
// Build with -DWAYS=K for an IP generated with K inputs (default 2).
#include "VCompactionIp.h"
#include "verilated.h"
#ifdef WAVES
#include "verilated_fst_c.h"
#endif

#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "args.h"
#include "compaction_regs.h"  // register offsets (generated beside CompactionIp.v)
#include "tb.h"

#ifndef WAYS
#define WAYS 2
#endif

namespace {

// AxiLite4 carries `prot`; set it to 0 only if the generated top has the port.
template <class T>
auto zero_prot(T* t, int) -> decltype(t->io_ctrl_aw_payload_prot = 0, t->io_ctrl_ar_payload_prot = 0, void()) {
    t->io_ctrl_aw_payload_prot = 0;
    t->io_ctrl_ar_payload_prot = 0;
}
template <class T>
void zero_prot(T*, long) {}
template <class T>
auto set_strb(T* t, int) -> decltype(t->io_ctrl_w_payload_strb = 0, void()) {
    t->io_ctrl_w_payload_strb = 0xF;
}
template <class T>
void set_strb(T*, long) {}

// One input stream of the IP, reached through pointers so that the K ports share one code path.
struct KeyPort {
    CData* valid;
    CData* ready;
    CData* last;
    std::function<void(const uint32_t*)> put;
};

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const char* fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    throw Error(buf);
}

// Numbers are strict (sim/common/args.h) and checked against the field they go into: a register
// offset or value wider than 32 bits is refused, never cut.
uint64_t parse_num(const std::string& s, const char* what, uint64_t max = UINT32_MAX) {
    if (s.empty()) fail("missing %s", what);
    uint64_t v;
    std::string why;
    if (!simc::parseUnsigned(s, max, &v, &why)) fail("bad %s: %s", what, why.c_str());
    return v;
}

double parse_prob(const std::string& s) {
    char* end = nullptr;
    double v = s.empty() || isspace((unsigned char)s[0]) ? -1 : strtod(s.c_str(), &end);
    if (s.empty() || !end || *end || !(v >= 0.0 && v < 1.0)) fail("bad stall probability '%s' (0 <= P < 1)", s.c_str());
    return v;
}

class Harness {
   public:
    Harness(const char* wave)
        : ctx(new VerilatedContext),
          top(new VCompactionIp(ctx.get(), "top")),
          kWords(simc::wordsOf(top->io_key0_payload_fragment)),
          out(&rng, kWords),
          inv(&rng, simc::wordsOf(top->io_invalid_payload_fragment)),
          ctrl(&rng, ctrl_pins(top.get())) {
        VCompactionIp* t = top.get();
        for (int k = 0; k < WAYS; k++) src.emplace_back(&rng, kWords);
#define KEY_PORT(k) \
    ports.push_back({&t->io_key##k##_valid, &t->io_key##k##_ready, &t->io_key##k##_payload_last, \
                     [t](const uint32_t* w) { simc::putWords(t->io_key##k##_payload_fragment, w); }});
        KEY_PORT(0) KEY_PORT(1)
#if WAYS > 2
        KEY_PORT(2) KEY_PORT(3)
#endif
#if WAYS > 4
        KEY_PORT(4) KEY_PORT(5) KEY_PORT(6) KEY_PORT(7)
#endif
#undef KEY_PORT
#ifdef WAVES
        if (wave) {
            ctx->traceEverOn(true);
            tfp.reset(new VerilatedFstC);
            top->trace(tfp.get(), 99);
            tfp->open(wave);
        }
#else
        if (wave) fail("--wave needs the harness built with waves (ipsim.build(width, wave=True))");
#endif
        zero_prot(top.get(), 0);
        set_strb(top.get(), 0);
        hard_reset(8);
    }
    ~Harness() {
#ifdef WAVES
        if (tfp) tfp->close();
#endif
        top->final();
    }

    int failures = 0;
    uint64_t violations() const { return out.violations + inv.violations + ctrl.violations; }

    void command(const std::vector<std::string>& a);

   private:
    std::unique_ptr<VerilatedContext> ctx;
    std::unique_ptr<VCompactionIp> top;
#ifdef WAVES
    std::unique_ptr<VerilatedFstC> tfp;
#endif
    simc::Prng rng;  // every stall of the run, in one seeded sequence
    int kWords;
    std::vector<simc::StreamSource> src;
    std::vector<KeyPort> ports;
    bool all_drained() const {
        for (const simc::StreamSource& s : src)
            if (s.left()) return false;
        return true;
    }
    simc::StreamSink out, inv;
    using CtrlAddr = std::remove_reference_t<decltype(std::declval<VCompactionIp&>().io_ctrl_aw_payload_addr)>;
    simc::AxiLiteMaster<CtrlAddr> ctrl;
    static simc::AxiLitePins<CtrlAddr> ctrl_pins(VCompactionIp* t) {
        simc::AxiLitePins<CtrlAddr> p;
        SIMC_BIND_AXI_LITE(p, t, io_ctrl);
        return p;
    }
    uint64_t cycle = 0;
    uint64_t limit = 20000000;  // cycles one command may take before it gives up
    uint64_t idle_limit = 20000;  // cycles without any handshake before `run` calls the IP stalled
    uint64_t last_activity = 0;
    // measurement window of the current job (reset by a write of CTRL.START)
    int64_t start_cycle = -1, first_in = -1, last_in = -1, last_out = -1;

    void eval_edge();
    void tick();
    void hard_reset(int n);
    uint32_t bus(bool write, uint32_t addr, uint32_t data);
    void load(int which, const std::string& file, bool with_last);
    void save(const std::string& which, const std::string& file);
    void run_job(uint64_t max_cycles);
    void start_write() {  // a new job: new measurement window, empty sinks
        start_cycle = cycle - 1;
        first_in = last_in = last_out = -1;
        out.clear();
        inv.clear();
    }
    static bool last_ok(const simc::StreamSink& k, bool done) {
        for (size_t i = 0; i + 1 < k.lasts.size(); i++)
            if (k.lasts[i]) return false;
        return !done || k.lasts.empty() || k.lasts.back();
    }
    simc::StreamSink& sink(const std::string& n) {
        if (n == "out") return out;
        if (n == "invalid") return inv;
        fail("unknown sink '%s' (out|invalid)", n.c_str());
    }
};

void Harness::eval_edge() {
    top->clk = 1;
    top->eval();
#ifdef WAVES
    if (tfp) tfp->dump(cycle * 10 + 5);
#endif
    top->clk = 0;
    top->eval();
    cycle++;
#ifdef WAVES
    if (tfp) tfp->dump(cycle * 10);
#endif
}

void Harness::hard_reset(int n) {
    top->reset = 1;
    for (KeyPort& p : ports) *p.valid = 0;
    top->io_out_ready = top->io_invalid_ready = 0;
    ctrl.idle();
    for (auto& s : src) s.withdraw();
    out.dropPending();
    inv.dropPending();
    top->clk = 0;
    top->eval();
    for (int i = 0; i < n; i++) eval_edge();
    top->reset = 0;
    top->eval();
}

// One clock: drive inputs, sample handshakes (valid && ready before the edge), clock, update state.
// The random draws come in a fixed order: sources, out, invalid, then the AXI4-Lite master.
void Harness::tick() {
    VCompactionIp* t = top.get();
    // sources: a beat, once offered, stays offered until taken (stream rule)
    for (int i = 0; i < WAYS; i++) {
        simc::StreamSource& s = src[i];
        *ports[i].valid = s.drive();
        if (s.valid()) {
            ports[i].put(s.beat());
            *ports[i].last = s.last();
        }
    }
    // `every`: a beat is taken on the clock after it is first offered, so every beat is stalled once.
    t->io_out_ready = out.drive();
    t->io_invalid_ready = inv.drive();
    ctrl.drive();
    t->eval();

    // sample
    bool fk[WAYS], fany = false;
    for (int i = 0; i < WAYS; i++) fany |= fk[i] = *ports[i].valid && *ports[i].ready;
    uint32_t ob[4] = {0}, ib[4] = {0};
    simc::getWords(t->io_out_payload_fragment, ob);
    simc::getWords(t->io_invalid_payload_fragment, ib);
    // sinks: a valid beat not taken must be offered again unchanged
    bool fo = out.sample(t->io_out_valid, ob, t->io_out_payload_last);
    bool fi = inv.sample(t->io_invalid_valid, ib, t->io_invalid_payload_last);
    ctrl.sample();

    eval_edge();

    if (fany) {
        if (first_in < 0) first_in = cycle - 1;
        last_in = cycle - 1;
    }
    for (int i = 0; i < WAYS; i++)
        if (fk[i]) src[i].take();
    if (fo || fi) last_out = cycle - 1;
    if (fany || fo || fi) last_activity = cycle;
    // AXI bookkeeping: a response before both halves of the request is a protocol error
    ctrl.update();
    // CTRL: START opens a new job; SOFT_RESET may legally withdraw a beat the IP was offering
    bool ctrl_write = ctrl.writing() && ctrl.addr() == CIP_CTRL;
    if (ctrl.firedW && ctrl_write && (ctrl.data() & 1)) start_write();
    if ((ctrl.firedW || ctrl.firedB) && ctrl_write && (ctrl.data() & 2)) {
        out.dropPending();
        inv.dropPending();
    }
}


uint32_t Harness::bus(bool write, uint32_t addr, uint32_t data) {
    if (addr > 0xFFF || (addr & 3)) fail("register offset 0x%x outside the 4 KiB word-aligned window", addr);
    ctrl.start(write, addr, data);
    uint64_t t0 = cycle;
    while (!ctrl.done()) {
        if (cycle - t0 > 10000) fail("AXI4-Lite %s at 0x%03x: no response in 10000 cycles", write ? "write" : "read", addr);
        tick();
    }
    if (ctrl.resp() != 0) printf("note: %s 0x%03x resp=%u\n", write ? "write" : "read", addr, ctrl.resp());
    return write ? 0 : ctrl.data();
}

void Harness::load(int which, const std::string& file, bool with_last) {
    std::ifstream f(file, std::ios::binary);
    if (!f) fail("cannot read '%s': %s", file.c_str(), strerror(errno));
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const size_t before = src[which].size();
    src[which].pushBytes(bytes.data(), bytes.size(), with_last);  // a short final beat is zero-filled (LENGTH tests)
    printf("load %d beats=%zu\n", which, src[which].size() - before);
}

void Harness::save(const std::string& which, const std::string& file) {
    std::vector<uint8_t> b = sink(which).bytes();
    FILE* f = fopen(file.c_str(), "wb");
    if (!f) fail("cannot write '%s': %s", file.c_str(), strerror(errno));
    fwrite(b.data(), 1, b.size(), f);
    if (fclose(f)) fail("cannot write '%s'", file.c_str());
}

// Stream the loaded runs until STATUS says done, or error with every loaded beat drained, polling
// STATUS over the bus all the while; a silent IP ends as `stalled`, a slow one as `timeout`.
void Harness::run_job(uint64_t max_cycles) {
    const uint64_t t0 = cycle;
    last_activity = cycle;
    uint32_t st = 0;
    const char* result = "timeout";
    bool drained = false;
    // Output beats allowed once STATUS shows ERROR: those already received, plus a beat already
    // offered and waiting for ready (a stream may not withdraw `valid`); nothing else may leave.
    size_t at_error = SIZE_MAX;
    while (cycle - t0 < max_cycles) {
        st = bus(false, CIP_STATUS, 0);
        if ((st & 4) && at_error == SIZE_MAX)
            at_error = out.beats() + inv.beats() + out.pending() + inv.pending();
        drained = all_drained();
        if (st & 2) { result = "done"; break; }
        if ((st & 4) && drained) { result = "error"; break; }
        if (cycle - last_activity > idle_limit) { result = (st & 4) ? "error" : "stalled"; break; }
    }
    uint32_t hw = bus(false, CIP_HW_CYCLES, 0), idx = bus(false, CIP_ERR_INDEX, 0), keys = bus(false, CIP_OUT_KEYS, 0);
    bool done = !strcmp(result, "done");
    // nothing may leave the IP once it has reported the error
    size_t total = out.beats() + inv.beats();
    size_t after_error = at_error == SIZE_MAX || total <= at_error ? 0 : total - at_error;
    int64_t a = first_in >= 0 ? first_in : start_cycle, e = std::max(last_in, last_out);
    uint64_t simc = (a >= 0 && e >= a) ? (uint64_t)(e - a + 1) : 0;
    printf("run status=%s code=%u input=%u index=%u hw_cycles=%u sim_cycles=%" PRIu64
           " out_beats=%zu out_bytes=%zu inv_count=%zu out_keys=%u last_ok=%d drained=%d left0=%zu left1=%zu"
           " violations=%" PRIu64 " after_error=%zu cycle=%" PRIu64 "\n",
           result, (st >> 8) & 0xFF, (st >> 16) & 7, idx, hw, simc, out.beats(), out.beats() * 4 * kWords,
           inv.beats(), keys, (int)(last_ok(out, done) && last_ok(inv, done)), (int)drained, src[0].left(),
           src[1].left(), violations(), after_error, cycle);
}

void Harness::command(const std::vector<std::string>& a) {
    const std::string& c = a[0];
    auto need = [&](size_t n, const char* usage) {
        if (a.size() < n + 1) fail("usage: %s", usage);
    };
    if (c == "write") {
        need(2, "write OFF VAL");
        bus(true, parse_num(a[1], "offset"), parse_num(a[2], "value"));
    } else if (c == "read") {
        need(1, "read OFF");
        uint32_t off = parse_num(a[1], "offset");
        uint32_t v = bus(false, off, 0);
        printf("read 0x%03x 0x%08x\n", off, v);
    } else if (c == "expect") {
        need(2, "expect OFF VAL [MASK]");
        uint32_t off = parse_num(a[1], "offset"), want = parse_num(a[2], "value");
        uint32_t mask = a.size() > 3 ? parse_num(a[3], "mask") : 0xFFFFFFFFu;
        uint32_t v = bus(false, off, 0);
        bool ok = (v & mask) == (want & mask);
        if (!ok) failures++;
        printf("expect 0x%03x %s got=0x%08x want=0x%08x mask=0x%08x\n", off, ok ? "ok" : "FAIL", v, want, mask);
    } else if (c == "irq") {
        printf("irq %d\n", (int)top->io_irq);
    } else if (c == "expect-irq") {
        need(1, "expect-irq 0|1");
        bool ok = (uint64_t)top->io_irq == parse_num(a[1], "level", 1);
        if (!ok) failures++;
        printf("expect-irq %s got=%d\n", ok ? "ok" : "FAIL", (int)top->io_irq);
    } else if (c == "load") {
        need(2, "load INPUT FILE [nolast]");
        const std::string what = "input (0.." + std::to_string(WAYS - 1) + ")";
        int w = (int)parse_num(a[1], what.c_str(), WAYS - 1);
        load(w, a[2], !(a.size() > 3 && a[3] == "nolast"));
    } else if (c == "save") {
        need(2, "save out|invalid FILE");
        save(a[1], a[2]);
    } else if (c == "run") {
        run_job(a.size() > 1 ? parse_num(a[1], "cycle limit", UINT64_MAX) : limit);
    } else if (c == "step") {
        need(1, "step N");
        for (uint64_t n = parse_num(a[1], "cycles", UINT64_MAX); n; n--) tick();
    } else if (c == "stall") {
        need(2, "stall key<k>|out|invalid|ctrl P|every");
        if (a[2] == "every") {  // sinks only: a deterministic stall on every beat
            simc::StreamSink& k = sink(a[1]);
            k.everyBeat = true;
            k.pause.set(0);
            return;
        }
        double p = parse_prob(a[2]);
        int k = -1;
        for (int i = 0; i < WAYS; i++)
            if (a[1] == "key" + std::to_string(i)) k = i;
        if (k >= 0) src[k].pause.set(p);
        else if (a[1] == "ctrl") ctrl.pause.set(p);
        else {
            sink(a[1]).pause.set(p);
            sink(a[1]).everyBeat = false;
        }
    } else if (c == "seed") {
        need(1, "seed S");
        rng.seed(parse_num(a[1], "seed", UINT64_MAX));
    } else if (c == "limit") {
        need(1, "limit CYCLES");
        limit = parse_num(a[1], "cycle limit", UINT64_MAX);
    } else if (c == "idle") {
        need(1, "idle CYCLES");
        idle_limit = parse_num(a[1], "idle limit", UINT64_MAX);
    } else if (c == "clear") {  // forget unsent input and everything received
        for (auto& s : src) s.clear();
        start_write();
    } else if (c == "recover") {  // between batched jobs: leave an error state, drop unsent beats
        uint32_t st = bus(false, CIP_STATUS, 0);
        bool err = st & 4;
        if (err) bus(true, CIP_CTRL, CIP_CTRL_SOFT_RESET_MASK);
        for (auto& s : src) s.clear();
        printf("recover %s\n", err ? "soft-reset" : "none");
    } else if (c == "reset") {
        for (auto& s : src) s.clear();
        hard_reset(a.size() > 1 ? parse_num(a[1], "cycles", 1000000) : 8);
        start_write();
    } else if (c == "info") {
        printf("info width=%d ways=%d cycle=%" PRIu64 " left0=%zu left1=%zu out_beats=%zu inv_count=%zu violations=%" PRIu64 "\n",
               32 * kWords, WAYS, cycle, src[0].left(), src[1].left(), out.beats(), inv.beats(),
               violations());
    } else if (c == "echo") {
        std::string t;
        for (size_t i = 1; i < a.size(); i++) t += (i > 1 ? " " : "") + a[i];
        printf("%s\n", t.c_str());
    } else {
        fail("unknown command '%s'", c.c_str());
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::string wavePath, scriptPath;
    simc::setProgram("VCompactionIp");
    simc::Args args("VCompactionIp [--wave FILE.fst] [SCRIPT|-]   (commands: hw/ip/compaction/doc/compaction-sim.md)");
    args.output("--wave", &wavePath, "FST waves (only in the build with waves)", "FILE.fst");
    args.positional("SCRIPT", &scriptPath, "command script (default or '-': stdin)", false);
    args.parse(argc, argv);
    const char* wave = wavePath.empty() ? nullptr : wavePath.c_str();
    std::ifstream file;
    std::istream* in = &std::cin;
    if (!scriptPath.empty() && scriptPath != "-") {
        simc::checkInputFile(scriptPath, "script", true);
        file.open(scriptPath);
        if (!file) simc::die("script: cannot read %s", scriptPath.c_str());
        in = &file;
    }
    int lineno = 0;
    try {
        Harness h(wave);
        std::string line;
        while (std::getline(*in, line)) {
            lineno++;
            auto hash = line.find('#');
            if (hash != std::string::npos) line.resize(hash);
            std::istringstream ls(line);
            std::vector<std::string> a;
            for (std::string w; ls >> w;) a.push_back(w);
            if (a.empty()) continue;
            if (a[0] == "quit") break;
            h.command(a);
        }
        fflush(stdout);
        if (h.violations()) {
            fprintf(stderr, "%" PRIu64 " stream/AXI protocol violation(s) by the IP\n", h.violations());
            return 1;
        }
        if (h.failures) {
            fprintf(stderr, "%d expectation(s) failed\n", h.failures);
            return 1;
        }
    } catch (const Error& e) {
        fflush(stdout);
        fprintf(stderr, "error: line %d: %s\n", lineno, e.what());
        return 2;
    }
    return 0;
}
