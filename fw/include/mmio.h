/* Register access. On the target a plain volatile access; in host tests (LSMC_HOST_SHIM) every access
 * goes to functions of the test's fake SoC, so the drivers' logic runs unchanged on the host. */
#ifndef LSMC_MMIO_H
#define LSMC_MMIO_H

#include <stdint.h>

#ifdef LSMC_HOST_SHIM
uint32_t shim_read32(uintptr_t addr);
void shim_write32(uintptr_t addr, uint32_t value);
static inline uint32_t mmio_read32(uintptr_t addr) { return shim_read32(addr); }
static inline void mmio_write32(uintptr_t addr, uint32_t value) { shim_write32(addr, value); }
#else
static inline uint32_t mmio_read32(uintptr_t addr) { return *(volatile uint32_t *)addr; }
static inline void mmio_write32(uintptr_t addr, uint32_t value) { *(volatile uint32_t *)addr = value; }
#endif

#endif
