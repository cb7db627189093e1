#include "irq.h"

#include <stdio.h>

#include "csr.h"
#include "mmio.h"
#include "soc.h"
#include "sys.h"

static irq_handler_fn handlers[IRQ_LINES];
static void *contexts[IRQ_LINES];
static uint32_t enabled;
volatile uint32_t irq_count[8];
volatile uint32_t irq_spurious;

void irq_init(void)
{
    unsigned i;
    enabled = 0;
    for (i = 0; i < IRQ_LINES; i++) {
        handlers[i] = 0;
        contexts[i] = 0;
        irq_count[i] = 0;
    }
    irq_spurious = 0;
    mmio_write32(IRQC_BASE + IRQC_ENABLE, 0);
    csr_set_mie(MIE_MEIE);
}

void irq_line_enable(unsigned line, int on)
{
    if (line >= IRQ_LINES)
        return;
    if (on)
        enabled |= 1u << line;
    else
        enabled &= ~(1u << line);
    mmio_write32(IRQC_BASE + IRQC_ENABLE, enabled);
}

int irq_attach(unsigned line, irq_handler_fn fn, void *ctx)
{
    if (line >= IRQ_LINES)
        return -1;
    handlers[line] = fn;
    contexts[line] = ctx;
    irq_line_enable(line, fn != 0);
    return 0;
}

void irq_dispatch(void)
{
    uint32_t pending = mmio_read32(IRQC_BASE + IRQC_PENDING) & enabled;
    unsigned line;

    if (!pending) {
        irq_spurious++;
        return;
    }
    for (line = 0; line < IRQ_LINES; line++) {
        if (!(pending & (1u << line)))
            continue;
        irq_count[line]++;
        if (handlers[line]) {
            handlers[line](contexts[line]);
        } else {
            /* A line without handler would interrupt forever: mask it. */
            irq_line_enable(line, 0);
            irq_spurious++;
        }
    }
}

/* Weak: an application that handles traps itself (fw/apps/selftest) defines its own. */
__attribute__((weak)) uint32_t trap_handler(uint32_t mcause, uint32_t mepc, uint32_t mtval)
{
    if (mcause & MCAUSE_INTERRUPT) {
        uint32_t code = mcause & ~MCAUSE_INTERRUPT;
        if (code == MCAUSE_MACHINE_EXTERNAL) {
            irq_dispatch();
        } else {
            /* Only external interrupts are used: switch the unexpected source off. */
            csr_clear_mie(1u << (code & 31));
            irq_spurious++;
        }
        return mepc;
    }
    printf("\nTRAP: exception mcause=%lu mepc=0x%08lx mtval=0x%08lx\n", (unsigned long)mcause,
           (unsigned long)mepc, (unsigned long)mtval);
    sys_exit(TRAP_EXIT_CODE);
    return mepc;
}
