/* LsmcSoc memory map, peripheral registers and interrupt lines (docs/architecture.md, docs/soc.md).
 * Copied next to the generated Verilog (build/gen/soc/) by soc.Generate. */
#ifndef LSMC_SOC_H
#define LSMC_SOC_H
#include <stdint.h>

#define LSMC_REG32(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

/* Memory map */
#define LSMC_DDR_BASE        0x40000000u
#define LSMC_DDR_SIZE        (256u << 20)
#define LSMC_RAM_BASE        0x80000000u
#define LSMC_RAM_SIZE        (256u << 10)
#define LSMC_UART_BASE       0xF0000000u
#define LSMC_TIMER_BASE      0xF0001000u
#define LSMC_IRQCTRL_BASE    0xF0002000u
#define LSMC_DMA_BASE        0xF0003000u
#define LSMC_SIMCTRL_BASE    0xF000F000u
#define LSMC_COMPACTION_BASE 0xF0010000u
#define LSMC_NAND_BASE       0xF0020000u
#define LSMC_CLOCK_HZ        100000000u

/* UART (spinal.lib Apb3UartCtrl) */
#define LSMC_UART_DATA       LSMC_REG32(LSMC_UART_BASE + 0x00) /* W: [7:0] TX byte; R: [7:0] RX byte, [16] valid */
#define LSMC_UART_STATUS     LSMC_REG32(LSMC_UART_BASE + 0x04) /* [0] TX IRQ en, [1] RX IRQ en, [8]/[9] pending,
                                                                  [23:16] TX FIFO free, [31:24] RX FIFO used */
#define LSMC_UART_CLKDIV     LSMC_REG32(LSMC_UART_BASE + 0x08) /* bit time = 8*(CLKDIV+1) cycles */
#define LSMC_UART_FRAME      LSMC_REG32(LSMC_UART_BASE + 0x0C) /* [2:0] data bits-1, [9:8] parity, [16] stop */
#define LSMC_UART_RX_VALID   (1u << 16)
#define LSMC_UART_TX_FREE(s) (((s) >> 16) & 0xFFu)
#define LSMC_UART_RX_USED(s) (((s) >> 24) & 0xFFu)

/* Machine timer (spinal.lib MachineTimer): mtime counts clock cycles from reset. */
#define LSMC_MTIME_LO        LSMC_REG32(LSMC_TIMER_BASE + 0x0)
#define LSMC_MTIME_HI        LSMC_REG32(LSMC_TIMER_BASE + 0x4)
#define LSMC_MTIMECMP_LO     LSMC_REG32(LSMC_TIMER_BASE + 0x8)
#define LSMC_MTIMECMP_HI     LSMC_REG32(LSMC_TIMER_BASE + 0xC)

/* Interrupt controller: level sources; PENDING = raw lines, ENABLE masks them into MEIP. */
#define LSMC_IRQ_PENDING     LSMC_REG32(LSMC_IRQCTRL_BASE + 0x0)
#define LSMC_IRQ_ENABLE      LSMC_REG32(LSMC_IRQCTRL_BASE + 0x4)
#define LSMC_IRQ_UART        0
#define LSMC_IRQ_COMPACTION  1
#define LSMC_IRQ_DMA(n)      (2 + (n))
#define LSMC_IRQ_NAND        6

/* Simulation control (absent on boards: reads 0) */
#define LSMC_SIM_EXIT        LSMC_REG32(LSMC_SIMCTRL_BASE + 0x0) /* write (code << 1) | 1 */
#define LSMC_SIM_ARG         LSMC_REG32(LSMC_SIMCTRL_BASE + 0x4)

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
