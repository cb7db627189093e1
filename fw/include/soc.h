/* SoC memory map, interrupt lines and the small SoC peripherals (docs/architecture.md). The register
 * blocks of the compaction IP and the DMA come from their generated headers (see regs.h). */
#ifndef LSMC_SOC_H
#define LSMC_SOC_H

#define DDR_BASE 0x40000000u
#define DDR_SIZE 0x10000000u
#define RAM_BASE 0x80000000u
#define RAM_SIZE 0x00040000u

#define UART_BASE 0xF0000000u
#define TIMER_BASE 0xF0001000u
#define IRQC_BASE 0xF0002000u
#define DMA_BASE 0xF0003000u
#define SIMCTL_BASE 0xF000F000u
#define CIP_BASE 0xF0010000u
#define NAND_BASE 0xF0020000u

/* Interrupt lines of the interrupt controller. */
#define IRQ_UART 0
#define IRQ_CIP 1
#define IRQ_DMA(ch) (2 + (ch))
#define IRQ_NAND 6
#define IRQ_LINES 8

/* spinal.lib Apb3UartCtrl. */
#define UART_DATA 0x00         /* write: push TX byte; read: [7:0] byte, bit16 valid (pops) */
#define UART_STATUS 0x04       /* [23:16] TX FIFO free slots, [31:24] RX FIFO occupancy */
#define UART_CLOCK_DIVIDER 0x08
#define UART_FRAME_CONFIG 0x0C /* [7:0] data bits - 1, [9:8] parity, [16] stop bits - 1 */
#define UART_DATA_VALID (1u << 16)

/* Machine timer: 64-bit mtime counting clock cycles, and mtimecmp. */
#define TIMER_MTIME_LO 0x00
#define TIMER_MTIME_HI 0x04
#define TIMER_MTIMECMP_LO 0x08
#define TIMER_MTIMECMP_HI 0x0C

/* Interrupt controller: one bit per line. */
#define IRQC_PENDING 0x00
#define IRQC_ENABLE 0x04

/* Simulation control. */
#define SIMCTL_EXIT 0x00 /* write (code << 1) | 1 */
#define SIMCTL_ARG 0x04  /* harness --arg N */

#define CPU_HZ 100000000u /* nominal system clock: cycles -> time in reports */

#endif
