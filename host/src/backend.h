// Internal interface of the back ends (one 2-way merge job each).
#ifndef LSMC_HOST_BACKEND_H
#define LSMC_HOST_BACKEND_H

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace lsmc {

// A whole file written or read (the soc back ends' job folders); false on any failure.
bool write_file(const std::string& path, const void* p, size_t n);
bool read_file(const std::string& path, std::string* out);

// printf into the caller's error buffer (nothing when it gave none): every back end reports this way.
inline void say(char* err, size_t n, const char* fmt, ...) {
    if (!err || !n) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
}

struct Merged {
    std::vector<uint8_t> out;   // capacity given to the job; out_len bytes valid
    std::vector<uint32_t> inv;  // capacity; inv_count valid
    size_t out_len = 0, out_keys = 0, inv_count = 0;
    uint64_t cycles = 0;  // device cycles of the job (HW_CYCLES), 0 when there is no timing model
};

// One 2-way job: r0 newer, r1 older. The caller sized m->out and m->inv. Returns 0 or an error.
int merge2(int backend, const uint8_t* r0, size_t l0, const uint8_t* r1, size_t l1, unsigned group, Merged* m,
           char* err, size_t err_len);
int soc_merge2(const uint8_t* r0, size_t l0, const uint8_t* r1, size_t l1, unsigned group, Merged* m, char* err,
               size_t err_len);
int rtl_merge2(const uint8_t* r0, size_t l0, const uint8_t* r1, size_t l1, unsigned group, Merged* m, char* err,
               size_t err_len);

}  // namespace lsmc
#endif
