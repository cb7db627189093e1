/* MMIO/CSR shim for host tests of the firmware drivers: every register access goes to callbacks
 * that the Python fake SoC (fake_soc.py) installs through ctypes. */
#include <stdint.h>
#include <stdio.h>

typedef uint32_t (*shim_read_fn)(uint64_t addr);
typedef void (*shim_write_fn)(uint64_t addr, uint32_t value);

static shim_read_fn read_cb;
static shim_write_fn write_cb;

uint32_t shim_mie;
int shim_global_irq;
uint32_t shim_dcache_invalidations;
int shim_exit_code = -1;

void shim_install(shim_read_fn r, shim_write_fn w)
{
    read_cb = r;
    write_cb = w;
    shim_mie = 0;
    shim_global_irq = 0;
    shim_dcache_invalidations = 0;
    shim_exit_code = -1;
}

uint32_t shim_read32(uintptr_t addr) { return read_cb((uint64_t)addr); }
void shim_write32(uintptr_t addr, uint32_t value) { write_cb((uint64_t)addr, value); }
void shim_csr_set_mie(uint32_t bits) { shim_mie |= bits; }
void shim_csr_clear_mie(uint32_t bits) { shim_mie &= ~bits; }
void shim_irq_global(int on) { shim_global_irq = on; }
void shim_dcache_invalidate(void) { shim_dcache_invalidations++; }
void shim_exit(int code) { shim_exit_code = code; }
void shim_flush(void) { fflush(stdout); }
