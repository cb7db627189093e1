// Checks lsmc_merge_runs (N runs, cascade) of a back end against an independent model: a std::map filled
// from the oldest run to the newest, then encoded canonically; superseded addresses as a sorted set.
// Usage: lsmc_merge_check BACKEND CASES SEED [MAXKEYS [MAXRUNS]]. Prints one line per case and a summary;
// exit 0 when every case matches, 1 on a mismatch, 2 on bad usage.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "kb16.h"
#include "lsmc_offload.h"

namespace {

struct Rng {
    uint64_t s;
    uint32_t next() { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (uint32_t)s; }
    uint32_t below(uint32_t n) { return n ? next() % n : 0; }
};

std::vector<uint8_t> encode(const std::vector<std::pair<std::string, uint32_t>>& kv, unsigned group) {
    std::vector<uint8_t> out(3 * 16 * (kv.size() + 1));
    kb16_writer w;
    kb16_writer_init(&w, out.data(), out.size(), group);
    for (auto& [k, a] : kv) {
        size_t ei;
        if (kb16_writer_put(&w, (const uint8_t*)k.data(), (unsigned)k.size(), a, &ei) != KB16_OK) {
            fprintf(stderr, "encode failed\n");
            exit(2);
        }
    }
    out.resize(kb16_writer_bytes(&w));
    return out;
}

std::string random_key(Rng& r, int kind) {
    // kinds: short (1..8), long (9..16, needs virtual entries), shared prefix with a long tail
    size_t len = kind == 0 ? 1 + r.below(8) : kind == 1 ? 9 + r.below(8) : 4 + 1 + r.below(12);
    std::string k(len, '\0');
    for (size_t i = 0; i < len; i++) k[i] = (char)(kind == 2 && i < 4 ? "user"[i] : 'a' + r.below(4 + 250 * (i % 3 == 2)));
    return k;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s model|kb16|kb16-soc CASES SEED [MAXKEYS [MAXRUNS]]\n", argv[0]);
        return 2;
    }
    int backend = !strcmp(argv[1], "model") ? LSMC_BACKEND_MODEL : !strcmp(argv[1], "kb16") ? LSMC_BACKEND_KB16
                  : !strcmp(argv[1], "kb16-soc") ? LSMC_BACKEND_KB16_SOC : -1;
    if (backend < 0) {
        fprintf(stderr, "error: back end %s (model|kb16|kb16-soc)\n", argv[1]);
        return 2;
    }
    int cases = atoi(argv[2]);
    Rng rng{strtoull(argv[3], nullptr, 0) * 0x9E3779B97F4A7C15ull | 1};
    uint32_t maxkeys = argc > 4 ? (uint32_t)atoi(argv[4]) : 300;
    uint32_t maxruns = argc > 5 ? (uint32_t)atoi(argv[5]) : 9;
    if (maxkeys < 1 || maxruns < 1) {
        fprintf(stderr, "error: MAXKEYS and MAXRUNS must be at least 1\n");
        return 2;
    }
    const unsigned group = 16;
    int bad = 0;
    uint64_t cycles = 0, keys_in = 0;
    for (int c = 0; c < cases; c++) {
        // 1..9 runs (odd counts carry a run through a cascade level); some empty; keys from a small
        // pool so runs overlap heavily
        size_t nruns = 1 + rng.below(maxruns);
        int kind = rng.below(3);
        std::vector<std::string> pool;
        for (uint32_t i = 0, n = 1 + rng.below(maxkeys); i < n; i++) pool.push_back(random_key(rng, kind));
        std::vector<std::vector<uint8_t>> runs(nruns);
        std::vector<std::map<std::string, uint32_t>> content(nruns);
        uint32_t addr = 1;
        for (size_t r = 0; r < nruns; r++) {
            uint32_t n = rng.below(5) == 0 ? 0 : rng.below((uint32_t)pool.size() + 1);
            for (uint32_t i = 0; i < n; i++) content[r].emplace(pool[rng.below((uint32_t)pool.size())], 0);
            for (auto& kv : content[r]) kv.second = addr++;
            runs[r] = encode({content[r].begin(), content[r].end()}, group);
            keys_in += content[r].size();
        }
        std::map<std::string, uint32_t> want;  // oldest first: newer runs overwrite
        std::vector<uint32_t> want_inv;
        for (size_t r = nruns; r-- > 0;)
            for (auto& [k, a] : content[r]) {
                auto it = want.find(k);
                if (it != want.end()) want_inv.push_back(it->second), it->second = a;
                else want.emplace(k, a);
            }
        std::vector<uint8_t> want_run = encode({want.begin(), want.end()}, group);
        std::vector<lsmc_run> in;
        for (auto& r : runs) in.push_back({r.data(), r.size()});
        lsmc_result res;
        char err[256] = "";
        int st = lsmc_merge_runs(backend, in.data(), in.size(), group, &res, err, sizeof err);
        bool ok = st == 0;
        std::string why = ok ? "" : err;
        if (ok) {
            std::vector<uint32_t> got_inv(res.inv, res.inv + res.inv_count);
            std::sort(got_inv.begin(), got_inv.end());
            std::sort(want_inv.begin(), want_inv.end());
            if (res.out_len != want_run.size() || memcmp(res.out, want_run.data(), want_run.size()))
                ok = false, why = "merged run differs";
            else if (got_inv != want_inv) ok = false, why = "superseded addresses differ";
            else if (res.out_keys != want.size()) ok = false, why = "key count differs: " + std::to_string(res.out_keys) + " want " + std::to_string(want.size());
            cycles += res.device_cycles;
            lsmc_result_free(&res);
        }
        if (!ok) {
            bad++;
            printf("case %d runs=%zu kind=%d: FAIL %s\n", c, nruns, kind, why.c_str());
        }
    }
    printf("merge_check backend=%s cases=%d failed=%d keys_in=%" PRIu64 " device_cycles=%" PRIu64 "\n", argv[1], cases,
           bad, keys_in, cycles);
    return bad ? 1 : 0;
}
