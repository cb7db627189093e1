#include "timer.h"

#include "mmio.h"
#include "soc.h"

uint64_t timer_now(void)
{
    /* Read hi, lo, hi again: a carry between the two halves would give a value 2^32 off. */
    uint32_t hi, lo, hi2;
    do {
        hi = mmio_read32(TIMER_BASE + TIMER_MTIME_HI);
        lo = mmio_read32(TIMER_BASE + TIMER_MTIME_LO);
        hi2 = mmio_read32(TIMER_BASE + TIMER_MTIME_HI);
    } while (hi != hi2);
    return (uint64_t)hi << 32 | lo;
}

void timer_delay(uint64_t cycles)
{
    uint64_t end = timer_deadline(cycles);
    while (!timer_expired(end))
        ;
}
