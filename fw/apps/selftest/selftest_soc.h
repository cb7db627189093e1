/* Register access helpers of the SoC self-test. The memory map, interrupt lines and register offsets
 * come from the generated lsmc_soc.h (hw/soc/map/SocMap.scala, build/gen/soc). */
#ifndef LSMC_SELFTEST_SOC_H
#define LSMC_SELFTEST_SOC_H
#include <stdint.h>

#include "lsmc_soc.h"

#define LSMC_REG32(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

/* UART (spinal.lib Apb3UartCtrl) */
#define LSMC_UART_DATA       LSMC_REG32(UART_BASE + UART_DATA) /* W: [7:0] TX byte; R: [7:0] RX byte, [16] valid */
#define LSMC_UART_STATUS     LSMC_REG32(UART_BASE + UART_STATUS) /* [0] TX IRQ en, [1] RX IRQ en, [8]/[9] pending,
                                                                  [23:16] TX FIFO free, [31:24] RX FIFO used */
#define LSMC_UART_CLKDIV     LSMC_REG32(UART_BASE + UART_CLOCK_DIVIDER) /* bit time = 8*(CLKDIV+1) cycles */
#define LSMC_UART_FRAME      LSMC_REG32(UART_BASE + UART_FRAME_CONFIG) /* [2:0] data bits-1, [9:8] parity, [16] stop */
#define LSMC_UART_RX_VALID   UART_DATA_VALID
#define LSMC_UART_TX_FREE(s) (((s) >> 16) & 0xFFu)
#define LSMC_UART_RX_USED(s) (((s) >> 24) & 0xFFu)

/* Machine timer (spinal.lib MachineTimer): mtime counts clock cycles from reset. */
#define LSMC_MTIME_LO        LSMC_REG32(TIMER_BASE + TIMER_MTIME_LO)
#define LSMC_MTIME_HI        LSMC_REG32(TIMER_BASE + TIMER_MTIME_HI)
#define LSMC_MTIMECMP_LO     LSMC_REG32(TIMER_BASE + TIMER_MTIMECMP_LO)
#define LSMC_MTIMECMP_HI     LSMC_REG32(TIMER_BASE + TIMER_MTIMECMP_HI)

/* Interrupt controller: level sources; PENDING = raw lines, ENABLE masks them into MEIP. */
#define LSMC_IRQ_PENDING     LSMC_REG32(IRQC_BASE + IRQC_PENDING)
#define LSMC_IRQ_ENABLE      LSMC_REG32(IRQC_BASE + IRQC_ENABLE)

/* Simulation control (absent on boards: reads 0) */
#define LSMC_SIM_EXIT        LSMC_REG32(SIMCTL_BASE + SIMCTL_EXIT) /* write (code << 1) | 1 */
#define LSMC_SIM_ARG         LSMC_REG32(SIMCTL_BASE + SIMCTL_ARG)

/* Data cache: write-through, so DMA reads see CPU stores once they left the CPU (use a fence before
 * starting a DMA); after a DMA wrote DDR, invalidate the whole D$ before the CPU reads the data.
 * 0x0000500F is VexRiscv's "flush data cache" (MISC-MEM, funct3 5). */
static inline void lsmc_dcache_invalidate(void) { __asm__ volatile(".word 0x0000500F" ::: "memory"); }
static inline void lsmc_fence(void) { __asm__ volatile("fence" ::: "memory"); }

static inline uint64_t lsmc_mtime(void) {
  uint32_t hi, lo;
  do { hi = LSMC_MTIME_HI; lo = LSMC_MTIME_LO; } while (hi != LSMC_MTIME_HI);
  return ((uint64_t)hi << 32) | lo;
}
#endif
