/* Interrupt controller and trap dispatch. crt0's trap entry saves the caller-saved registers and
 * calls trap_handler(); external interrupts go to the handler registered for each pending line. */
#ifndef LSMC_IRQ_H
#define LSMC_IRQ_H

#include <stdint.h>

#include "soc.h"

typedef void (*irq_handler_fn)(void *ctx);

void irq_init(void);
/* Register (or with NULL remove) the handler of `line` and enable/disable the line. -1: bad line. */
int irq_attach(unsigned line, irq_handler_fn fn, void *ctx);
void irq_line_enable(unsigned line, int on);
/* Serve every pending and enabled line once (called by trap_handler; callable from tests). */
void irq_dispatch(void);

/* Trap causes that are not interrupts end the program: report, then exit with this code. */
#define TRAP_EXIT_CODE 3

/* Counters for diagnostics. */
extern volatile uint32_t irq_count[IRQ_LINES];
extern volatile uint32_t irq_spurious;

uint32_t trap_handler(uint32_t mcause, uint32_t mepc, uint32_t mtval);

#endif
