// Verilator harness of CompactionDma alone: an AXI4 slave memory with configurable latency, random
// stalls and an error window; an APB3 master; sinks for key0/key1 and sources for out/invalid.
// The streams and the APB3 master are sim/common's testbench library (tb.h).
// It reads a command script on stdin (one command a line, see usage()) and prints results on stdout,
// so the pytest suite (tests/test_dma.py) drives every scenario. The memory and its AXI4 slave are
// sim/common's (axi_mem.h), held to the shape the DMA promises (32-byte INCR bursts of at most 16
// beats, aligned) on top of the AXI rules it checks for every master; violations print PROTOCOL lines.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "VCompactionDma.h"
#include "verilated.h"
#include "args.h"
#include "axi_mem.h"
#include "tb.h"

#ifndef DMA_W
#error "compile with -DDMA_W=32 or -DDMA_W=128"
#endif

static const int W_BYTES = DMA_W / 8;
static const int AXI_BYTES = 32;

static void die(const std::string& msg) {
    std::printf("FATAL %s\n", msg.c_str());
    std::fflush(stdout);
    std::exit(2);
}

struct Sink {  // key0 / key1: the library's sink and when its beats came
    std::string name;
    simc::StreamSink s;
    uint64_t first = 0, lastCycle = 0;
};
struct Source {  // out / invalid: the library's source, and the beats taken since its `src`
    std::string name;
    simc::StreamSource s;
    uint64_t beats = 0, first = 0, lastCycle = 0;  // taken beats, cycles of the first and last one
};

using ApbAddr = std::remove_reference_t<decltype(std::declval<VCompactionDma&>().io_apb_PADDR)>;

struct Harness {
    VCompactionDma* top;
    uint64_t cycle = 0;
    simc::Prng rng{1};  // every stream stall, in one seeded sequence (the memory has its own)
    // memory and its AXI4 slave (sim/common)
    simc::Memory mem{0x40000000, 1 << 20};
    std::unique_ptr<simc::AxiSlave<IData>> axi;
    Sink key0{"key0", {&rng, W_BYTES / 4}}, key1{"key1", {&rng, W_BYTES / 4}};
    Source out{"out", {&rng, W_BYTES / 4}}, inv{"invalid", {&rng, 1}};
    simc::ApbMaster<ApbAddr> apbm;

    static simc::ApbPins<ApbAddr> apbPins(VCompactionDma* t) {
        simc::ApbPins<ApbAddr> p;
        SIMC_BIND_APB(p, t, io_apb);
        return p;
    }

    explicit Harness(VCompactionDma* t) : top(t), apbm(apbPins(t)) {
        simc::AxiConfig c;
        c.readLatency = 19;  // `lat` READ counts from the handshake cycle: 20
        c.writeLatency = 10;
        c.maxReads = c.maxWrites = 1u << 30;  // no outstanding limit: the DMA's own limits are under test
        c.acceptWEarly = true;                // spinal's write arbiter may send W before AW
        c.outsideRead = 3;                    // DECERR outside the memory
        c.onlySize = AXI_BYTES;
        c.onlyIncr = true;
#ifdef DMA_MAX_BEATS  // a build with longer write bursts (dma.Generate --write-burst)
        c.maxBeats = DMA_MAX_BEATS;
#else
        c.maxBeats = 16;
#endif
        c.aligned = true;
        simc::AxiSlave<IData>::Pins p;
        SIMC_BIND_AXI(p, t, io_axi);
        p.wData = t->io_axi_w_payload_data.data();
        p.rData = t->io_axi_r_payload_data.data();
        axi.reset(new simc::AxiSlave<IData>("axi", AXI_BYTES, &mem, p, c));
        axi->report = stdout;
        axi->reportPrefix = "PROTOCOL";
    }

    bool inMem(uint32_t a, uint64_t n) const { return mem.contains(a, n); }

    // Drive the model's outputs for this cycle (decided before looking at the DUT's outputs).
    void drive() {
        axi->drive(cycle);
        // stream sinks, then sources (once valid, held until taken)
        top->io_key0_ready = key0.s.drive();
        top->io_key1_ready = key1.s.drive();
        out.s.drive();
        inv.s.drive();
        driveSource(out.s, top->io_out_valid, top->io_out_payload_fragment, top->io_out_payload_last);
        driveSource(inv.s, top->io_invalid_valid, top->io_invalid_payload_fragment, top->io_invalid_payload_last);
    }
    template <class T>
    static void driveSource(const simc::StreamSource& s, CData& valid, T& frag, CData& last) {
        valid = s.valid();
        if (!s.valid()) return;
        simc::putWords(frag, s.beat());
        last = s.last();
    }

    // Sample handshakes (after the combinational eval), then update the model.
    void sample() {
        axi->edge(cycle);
        // streams
        sampleSink(key0, top->io_key0_valid, top->io_key0_payload_fragment, top->io_key0_payload_last);
        sampleSink(key1, top->io_key1_valid, top->io_key1_payload_fragment, top->io_key1_payload_last);
        if (out.s.valid() && top->io_out_ready) takeSource(out);
        if (inv.s.valid() && top->io_invalid_ready) takeSource(inv);
    }
    void takeSource(Source& s) {
        if (s.beats == 0) s.first = cycle;
        s.lastCycle = cycle;
        s.s.take();
        s.beats++;
    }
    template <class T>
    void sampleSink(Sink& s, CData valid, const T& frag, CData last) {
        uint32_t w[4] = {0};
        simc::getWords(frag, w);
        size_t before = s.s.beats();
        if (!s.s.sample(valid, w, last)) return;
        if (before == 0) s.first = cycle;
        s.lastCycle = cycle;
    }

    void settle() {
        top->clk = 0;
        drive();
        top->eval();
    }
    void edge() {
        sample();
        top->clk = 1;
        top->eval();
        cycle++;
    }
    void step() {
        settle();
        edge();
    }

    // ---- APB3 master (regif answers with PREADY = 1) ----
    uint32_t apb(bool write, uint32_t addr, uint32_t data) {
        auto r = apbm.transfer(write, addr, data, [this] { settle(); }, [this] { edge(); }, 1002);
        if (!r.ok) die("APB access never completed");
        return r.data;
    }
};

static std::vector<uint8_t> readFile(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    if (!f) die("cannot read " + p);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
static void writeFile(const std::string& p, const uint8_t* d, size_t n) {
    std::ofstream f(p, std::ios::binary);
    if (!f) die("cannot write " + p);
    f.write(reinterpret_cast<const char*>(d), std::streamsize(n));
}
static uint32_t num(const std::string& s) {
    uint64_t v;
    std::string why;
    if (!simc::parseUnsigned(s, UINT32_MAX, &v, &why)) die(why);  // "bad number 'x' ..."
    return uint32_t(v);
}

static double prob(const std::string& s) {
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end || !(v >= 0 && v <= 1)) die("bad probability '" + s + "' (0..1)");
    return v;
}

static void usage() {
    std::puts(
        "commands (stdin, one a line):\n"
        "  seed N | lat READ WRITE | axistall P | err ADDR LEN | membase ADDR SIZE\n"
        "  load ADDR FILE | fill ADDR LEN BYTE | dump ADDR LEN FILE\n"
        "  sinkstall key0|key1 P | srcstall out|invalid P\n"
        "  src out|invalid FILE [nolast]    bytes the IP side offers (w-bit beats, last on the final one)\n"
        "  flush 0|1 | ipstart (one-cycle pulse) | wr OFF VAL | rd OFF | run N\n"
        "  group 0|1 | urgent                write grouping build only: drive io_writeGroupGo, print io_writeUrgent\n"
        "  wait CH MAXCYCLES                poll STATUS until not busy; prints cycles and registers\n"
        "  sink key0|key1 FILE              write received bytes; prints beats, last positions, timing\n"
        "  stats | quit");
}

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    if (argc > 1 && std::string(argv[1]) == "--help") { usage(); return 0; }
    VCompactionDma* top = new VCompactionDma;
    Harness h(top);
    top->io_flush = 0;
    top->io_ipStart = 0;
#ifdef DMA_WRITE_GROUP
    top->io_writeGroupGo = 0;
#endif
    top->io_apb_PSEL = 0;
    top->reset = 1;
    for (int i = 0; i < 4; i++) h.step();
    top->reset = 0;
    h.step();

    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream is(line);
        std::vector<std::string> a;
        for (std::string t; is >> t;) a.push_back(t);
        if (a.empty() || a[0][0] == '#') continue;
        const std::string& c = a[0];
        auto need = [&](size_t n) { if (a.size() < n + 1) die("too few arguments: " + line); };
        if (c == "seed") { need(1); h.rng.seed(num(a[1])); h.axi->reseed(num(a[1])); }
        else if (c == "lat") {
            need(2);
            h.axi->cfg.readLatency = num(a[1]) ? num(a[1]) - 1 : 0;
            h.axi->cfg.writeLatency = num(a[2]);
        }
        else if (c == "axistall") { need(1); h.axi->cfg.stall = prob(a[1]); }
        else if (c == "err") { need(2); h.axi->cfg.errLo = num(a[1]); h.axi->cfg.errHi = (uint64_t)num(a[1]) + num(a[2]); }
        else if (c == "membase") {
            need(2);
            if (num(a[2]) == 0 || num(a[2]) > (256u << 20)) die("memory size must be 1 B .. 256 MiB");
            if ((uint64_t)num(a[1]) + num(a[2]) > (1ull << 32)) die("memory past the 32-bit address space");
            h.mem.remap(num(a[1]), num(a[2]));
        }
        else if (c == "load" || c == "fill") {
            need(2);
            uint32_t addr = num(a[1]);
            std::vector<uint8_t> d;
            if (c == "load") d = readFile(a[2]);
            else { need(3); d.assign(num(a[2]), uint8_t(num(a[3]))); }
            if (!h.inMem(addr, d.size())) die("load/fill outside memory");
            std::memcpy(h.mem.at(addr), d.data(), d.size());
        } else if (c == "dump") {
            need(3);
            uint32_t addr = num(a[1]), n = num(a[2]);
            if (!h.inMem(addr, n)) die("dump outside memory");
            writeFile(a[3], h.mem.at(addr), n);
        } else if (c == "sinkstall") {
            need(2);
            (a[1] == "key0" ? h.key0 : a[1] == "key1" ? h.key1 : (die("bad sink"), h.key0)).s.pause.set(prob(a[2]));
        } else if (c == "srcstall" || c == "src") {
            need(2);
            Source& s = a[1] == "out" ? h.out : a[1] == "invalid" ? h.inv : (die("bad source"), h.out);
            if (c == "srcstall") s.s.pause.set(prob(a[2]));
            else {
                std::vector<uint8_t> d = readFile(a[2]);
                s.s.clear();
                s.s.pushBytes(d.data(), d.size(), !(a.size() > 3 && a[3] == "nolast"));
                s.beats = s.first = s.lastCycle = 0;
            }
        } else if (c == "flush") { need(1); top->io_flush = num(a[1]) != 0; }
        else if (c == "ipstart") { top->io_ipStart = 1; h.step(); top->io_ipStart = 0; }
        else if (c == "wr") { need(2); h.apb(true, num(a[1]), num(a[2])); }
        else if (c == "rd") {
            need(1);
            uint32_t v = h.apb(false, num(a[1]), 0);
            std::printf("rd 0x%03x 0x%08x\n", num(a[1]), v);
        } else if (c == "run") { need(1); for (uint32_t i = num(a[1]); i; i--) h.step(); }
        else if (c == "irq") { std::printf("irq 0x%x\n", top->io_irq); }
#ifdef DMA_WRITE_GROUP  // the build with write grouping (dma.Generate --write-group): the SoC's group signal
        else if (c == "group") { need(1); top->io_writeGroupGo = num(a[1]) != 0; }
        else if (c == "urgent") { std::printf("urgent %d\n", (int)top->io_writeUrgent); }
#endif
        else if (c == "wait") {
            need(2);
            uint32_t ch = num(a[1]), max = num(a[2]), base = 0x40 * ch;
            uint64_t t0 = h.cycle;
            uint32_t st;
            for (;;) {
                st = h.apb(false, base + 0x0C, 0);
                if (!(st & 1)) break;
                if (h.cycle - t0 > max) break;
            }
            uint32_t bytes = h.apb(false, base + 0x10, 0);
            std::printf("wait %u %s cycles=%llu status=0x%08x bytes=%u irq=0x%x\n", ch,
                        (st & 1) ? "TIMEOUT" : "ok", (unsigned long long)(h.cycle - t0), st, bytes, top->io_irq);
        } else if (c == "sink") {
            need(2);
            Sink& s = a[1] == "key0" ? h.key0 : a[1] == "key1" ? h.key1 : (die("bad sink"), h.key0);
            std::vector<uint8_t> bytes = s.s.bytes();
            writeFile(a[2], bytes.data(), bytes.size());
            std::printf("sink %s beats=%llu first=%llu last=%llu lasts=", s.name.c_str(),
                        (unsigned long long)s.s.beats(), (unsigned long long)s.first, (unsigned long long)s.lastCycle);
            const char* sep = "";
            for (size_t i = 0; i < s.s.lasts.size(); i++)
                if (s.s.lasts[i]) std::printf("%s%zu", sep, i), sep = ",";
            std::printf("\n");
            s.s.clear();
        } else if (c == "stats") {
            std::printf("stats cycle=%llu ar=%llu aw=%llu rbeats=%llu wbeats=%llu out_taken=%llu inv_taken=%llu "
                        "out_first=%llu out_last=%llu protocol_errors=%d\n",
                        (unsigned long long)h.cycle, (unsigned long long)h.axi->arCount, (unsigned long long)h.axi->awCount,
                        (unsigned long long)h.axi->readBeats, (unsigned long long)h.axi->writeBeats,
                        (unsigned long long)h.out.beats, (unsigned long long)h.inv.beats, (unsigned long long)h.out.first,
                        (unsigned long long)h.out.lastCycle, (int)h.axi->violations);
        } else if (c == "quit") break;
        else die("unknown command: " + line);
        std::fflush(stdout);
    }
    int violations = (int)h.axi->violations;
    std::printf("end cycle=%llu protocol_errors=%d\n", (unsigned long long)h.cycle, violations);
    top->final();
    delete top;
    return violations ? 1 : 0;
}
