// soc back end: one 2-way job on the full SoC simulation (VexRiscv + DMA + IP in Verilator) running the
// firmware's host-loaded job mode (docs/firmware.md, SIM_ARG 2). Slow (seconds per job): for small cases.
//
// The job goes through `python3 -m lsmc.leveldb soc-job DIR` in the repository this library was built
// from (LSMC_REPO_ROOT), which builds the job image with the C merge's result as the expected output,
// runs the SoC (polling, no software cross-merge) and writes the IP's output buffers as DMA left them.
// The firmware compares the IP's output with the expected one; this side compares them again.
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

#include "backend.h"
#include "kb16.h"

#ifndef LSMC_REPO_ROOT
#error "LSMC_REPO_ROOT must name the repository (host/Makefile defines it)"
#endif

namespace lsmc {
bool write_file(const std::string& path, const void* p, size_t n) {
    FILE* f = fopen(path.c_str(), "wb");
    if (!f) return false;
    bool ok = (n == 0 || fwrite(p, 1, n, f) == n);
    return fclose(f) == 0 && ok;
}

bool read_file(const std::string& path, std::string* out) {
    FILE* f = fopen(path.c_str(), "rb");
    if (!f) return false;
    out->clear();
    char buf[65536];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, f)) > 0) out->append(buf, k);
    const bool ok = !ferror(f);
    fclose(f);
    return ok;
}

int soc_merge2(const uint8_t* r0, size_t l0, const uint8_t* r1, size_t l1, unsigned group, Merged* m, char* err,
               size_t n) {
    // Expected result: the project's C merge (the firmware checks the IP against it).
    kb16_merge_result mr;
    int st = kb16_merge(r0, l0, r1, l1, group, m->out.data(), m->out.size(), m->inv.data(), m->inv.size(), &mr);
    if (st != KB16_OK) {
        say(err, n, "soc: C merge of the job: %s", kb16_err_name(st));
        return st;
    }
    const char* tmp = getenv("TMPDIR");
    std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/lsmc-soc-XXXXXX";
    if (!mkdtemp(&dir[0])) {
        say(err, n, "soc: cannot make a temporary folder under %s", tmp && *tmp ? tmp : "/tmp");
        return -1;
    }
    if (!write_file(dir + "/run0.bin", r0, l0) || !write_file(dir + "/run1.bin", r1, l1) ||
        !write_file(dir + "/merged.bin", m->out.data(), mr.out_bytes) ||
        !write_file(dir + "/invalid.bin", m->inv.data(), 4 * mr.inv_count)) {
        say(err, n, "soc: cannot write the job files in %s", dir.c_str());
        return -1;
    }
    std::string cmd = "cd '" LSMC_REPO_ROOT "' && python3 -m lsmc.leveldb soc-job --group " + std::to_string(group) +
                      " '" + dir + "' 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    if (p) {
        char line[512];
        while (fgets(line, sizeof line, p)) out += line;
    }
    int rc = p ? pclose(p) : -1;
    unsigned long long hw = 0;
    const char* at = strstr(out.c_str(), "soc-job pass hw_cycles=");
    std::string dev_out, dev_inv;
    bool files = read_file(dir + "/dev_out.bin", &dev_out) && read_file(dir + "/dev_inv.bin", &dev_inv);
    std::string cleanup = "rm -rf '" + dir + "'";
    if (system(cleanup.c_str()) != 0) { /* a leftover temporary folder is harmless */ }
    if (rc != 0 || !at || sscanf(at, "soc-job pass hw_cycles=%llu", &hw) != 1 || !files) {
        say(err, n, "soc: job failed (exit %d): %.300s", rc, out.c_str());
        return -1;
    }
    if (dev_out.size() != mr.out_bytes || memcmp(dev_out.data(), m->out.data(), mr.out_bytes) ||
        dev_inv.size() != 4 * mr.inv_count || memcmp(dev_inv.data(), m->inv.data(), dev_inv.size())) {
        say(err, n, "soc: the SoC's output differs from the C merge's");
        return -1;
    }
    // The device's own bytes are the result (equal to the C merge's, as checked).
    memcpy(m->out.data(), dev_out.data(), dev_out.size());
    if (!dev_inv.empty()) memcpy(m->inv.data(), dev_inv.data(), dev_inv.size());
    m->out_len = dev_out.size();
    m->out_keys = mr.out_keys;
    m->inv_count = mr.inv_count;
    m->cycles = hw;
    return 0;
}

}  // namespace lsmc
