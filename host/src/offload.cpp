// Back-end selection and the N-run cascade over a 2-way engine (lsmc_offload.h).
#include "lsmc_offload.h"

#include <chrono>
#include <ctime>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "backend.h"
#include "kb16.h"

namespace {

std::mutex g_mu;  // one device: one job at a time

using lsmc::say;

// Worst case of a canonical re-encoding: every key needs a virtual entry, plus a pad per group.
size_t out_cap_for(size_t len0, size_t len1) { return 3 * (len0 + len1) + 2 * KB16_ENTRY_BYTES; }

}  // namespace

extern "C" int lsmc_backend_from_env(char* err, size_t err_len) {
    const char* v = getenv("LSMC_OFFLOAD");
    if (!v || !*v || !strcmp(v, "off")) return LSMC_BACKEND_OFF;
    if (!strcmp(v, "model")) return LSMC_BACKEND_MODEL;
    if (!strcmp(v, "rtl")) return LSMC_BACKEND_RTL;
    if (!strcmp(v, "soc")) return LSMC_BACKEND_SOC;
    if (!strcmp(v, "kb16")) return LSMC_BACKEND_KB16;
    if (!strcmp(v, "kb16-soc")) return LSMC_BACKEND_KB16_SOC;
    say(err, err_len, "LSMC_OFFLOAD='%s' is not a back end (off|model|rtl|soc|kb16|kb16-soc)", v);
    return -1;
}

extern "C" const char* lsmc_backend_name(int b) {
    switch (b) {
        case LSMC_BACKEND_OFF: return "off";
        case LSMC_BACKEND_MODEL: return "model";
        case LSMC_BACKEND_RTL: return "rtl";
        case LSMC_BACKEND_SOC: return "soc";
        case LSMC_BACKEND_KB16: return "kb16";
        case LSMC_BACKEND_KB16_SOC: return "kb16-soc";
        default: return "?";
    }
}

// CPU time of the calling thread: on a shared machine wall time mostly measures the other processes.
extern "C" uint64_t lsmc_thread_cpu_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

extern "C" void lsmc_result_free(lsmc_result* r) {
    if (!r) return;
    free(r->out);
    free(r->inv);
    memset(r, 0, sizeof *r);
}

namespace lsmc {

int merge2(int backend, const uint8_t* r0, size_t l0, const uint8_t* r1, size_t l1, unsigned group,
           Merged* m, char* err, size_t err_len) {
    m->out.resize(out_cap_for(l0, l1));
    m->inv.resize((l0 + l1) / KB16_ENTRY_BYTES + 1);
    m->out_len = m->out_keys = m->inv_count = 0;
    m->cycles = 0;
    if (backend == LSMC_BACKEND_MODEL) {
        kb16_merge_result res;
        int st = kb16_merge(r0, l0, r1, l1, group, m->out.data(), m->out.size(), m->inv.data(), m->inv.size(), &res);
        if (st != KB16_OK) {
            say(err, err_len, "model merge: %s (input %u, entry %zu)", kb16_err_name(st), res.err_input, res.err_index);
            return st;
        }
        m->out_len = res.out_bytes;
        m->out_keys = res.out_keys;
        m->inv_count = res.inv_count;
        return 0;
    }
    if (backend == LSMC_BACKEND_KB16) return rtl_merge2(r0, l0, r1, l1, group, m, err, err_len);
    if (backend == LSMC_BACKEND_KB16_SOC) return soc_merge2(r0, l0, r1, l1, group, m, err, err_len);
    say(err, err_len, "back end '%s' cannot merge", lsmc_backend_name(backend));
    return -1;
}

}  // namespace lsmc

extern "C" int lsmc_merge_runs(int backend, const lsmc_run* runs, size_t n, unsigned group, lsmc_result* res,
                               char* err, size_t err_len) {
    memset(res, 0, sizeof *res);
    if (n == 0 || !runs) {
        say(err, err_len, "lsmc_merge_runs: no runs");
        return -1;
    }
    std::lock_guard<std::mutex> lock(g_mu);
    const uint64_t t0 = lsmc_thread_cpu_us();
    const auto w0 = std::chrono::steady_clock::now();
    // Level by level: runs newest first; each pair (newer, older) merges into one run that keeps the
    // newer position, so the order newest-first holds in the next level. A single run still passes
    // through the device once (merged with an empty run) so every offloaded output is the device's.
    std::vector<std::vector<uint8_t>> level;  // owned intermediate runs
    std::vector<std::pair<const uint8_t*, size_t>> cur;
    for (size_t i = 0; i < n; i++) cur.emplace_back(runs[i].data, runs[i].len);
    std::vector<uint32_t> inv;
    uint64_t cycles = 0, jobs = 0;
    lsmc::Merged m;
    std::vector<uint8_t> final_out;
    size_t final_keys = 0;
    do {
        std::vector<std::vector<uint8_t>> next;
        std::vector<std::pair<const uint8_t*, size_t>> nextp;
        for (size_t i = 0; i < cur.size(); i += 2) {
            const uint8_t* r1 = i + 1 < cur.size() ? cur[i + 1].first : nullptr;
            size_t l1 = i + 1 < cur.size() ? cur[i + 1].second : 0;
            if (r1 == nullptr && cur.size() > 1) {  // odd run out: carried to the next level unchanged
                next.emplace_back(cur[i].first, cur[i].first + cur[i].second);
                continue;
            }
            int st = lsmc::merge2(backend, cur[i].first, cur[i].second, r1, l1, group, &m, err, err_len);
            if (st) return st;
            cycles += m.cycles;
            jobs++;
            inv.insert(inv.end(), m.inv.begin(), m.inv.begin() + m.inv_count);
            next.emplace_back(m.out.begin(), m.out.begin() + m.out_len);
            final_keys = m.out_keys;
        }
        level.swap(next);
        cur.clear();
        for (auto& r : level) cur.emplace_back(r.data(), r.size());
    } while (cur.size() > 1);
    final_out.swap(level[0]);
    res->out = (uint8_t*)malloc(final_out.size() ? final_out.size() : 1);
    res->inv = (uint32_t*)malloc(inv.size() ? inv.size() * 4 : 4);
    if (!res->out || !res->inv) {
        lsmc_result_free(res);
        say(err, err_len, "out of memory");
        return -1;
    }
    // Keys counted from the result itself (a well-formedness check of the device's output, too).
    size_t nkeys = 0, bad_at = 0;
    int dst = kb16_decode(final_out.data(), final_out.size(), group, nullptr, nullptr, nullptr, 0, &nkeys, &bad_at);
    if (dst != KB16_OK) {
        lsmc_result_free(res);
        say(err, err_len, "merged run malformed: %s at entry %zu", kb16_err_name(dst), bad_at);
        return dst;
    }
    final_keys = nkeys;
    memcpy(res->out, final_out.data(), final_out.size());
    memcpy(res->inv, inv.data(), inv.size() * 4);
    res->out_len = final_out.size();
    res->out_keys = final_keys;
    res->inv_count = inv.size();
    res->device_cycles = cycles;
    res->jobs = jobs;
    res->sim_us = lsmc_thread_cpu_us() - t0;
    res->sim_wall_us = (uint64_t)std::chrono::duration_cast<std::chrono::microseconds>(
                           std::chrono::steady_clock::now() - w0).count();
    return 0;
}
