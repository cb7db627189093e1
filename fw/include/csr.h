/* RISC-V machine CSRs and VexRiscv cache maintenance (shimmed in host tests). */
#ifndef LSMC_CSR_H
#define LSMC_CSR_H

#include <stdint.h>

#define MSTATUS_MIE (1u << 3)
#define MIE_MTIE (1u << 7)
#define MIE_MEIE (1u << 11)
#define MCAUSE_INTERRUPT 0x80000000u
#define MCAUSE_MACHINE_TIMER 7u
#define MCAUSE_MACHINE_EXTERNAL 11u

#ifdef LSMC_HOST_SHIM
void shim_csr_set_mie(uint32_t bits);
void shim_csr_clear_mie(uint32_t bits);
void shim_irq_global(int on);
void shim_dcache_invalidate(void);
static inline void csr_set_mie(uint32_t bits) { shim_csr_set_mie(bits); }
static inline void csr_clear_mie(uint32_t bits) { shim_csr_clear_mie(bits); }
static inline void irq_global_enable(void) { shim_irq_global(1); }
static inline void irq_global_disable(void) { shim_irq_global(0); }
static inline void dcache_invalidate(void) { shim_dcache_invalidate(); }
static inline void mem_fence(void) {}
#else
/* Make the CPU's stores visible on the bus before a DMA reads the same memory. */
static inline void mem_fence(void) { __asm__ volatile("fence" ::: "memory"); }
static inline void csr_set_mie(uint32_t bits) { __asm__ volatile("csrs mie, %0" ::"r"(bits)); }
static inline void csr_clear_mie(uint32_t bits) { __asm__ volatile("csrc mie, %0" ::"r"(bits)); }
static inline void irq_global_enable(void) { __asm__ volatile("csrsi mstatus, 8" ::: "memory"); }
static inline void irq_global_disable(void) { __asm__ volatile("csrci mstatus, 8" ::: "memory"); }
/* VexRiscv's data cache is write-through but not coherent with the DMA: drop every line before the
 * CPU reads what the DMA wrote (0x500F: VexRiscv's "invalidate whole data cache" instruction). */
static inline void dcache_invalidate(void)
{
#ifndef LSMC_NO_DCACHE
    __asm__ volatile("fence\n\t.word 0x500F" ::: "memory");
#else
    __asm__ volatile("fence" ::: "memory");
#endif
}
#endif

#endif
