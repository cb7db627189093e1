/* Machine timer: mtime counts clock cycles; deadlines for every wait of the firmware. */
#ifndef LSMC_TIMER_H
#define LSMC_TIMER_H

#include <stdint.h>

uint64_t timer_now(void);
/* Deadline `cycles` from now; timer_expired() turns true once it has passed. */
static inline uint64_t timer_deadline(uint64_t cycles) { return timer_now() + cycles; }
static inline int timer_expired(uint64_t deadline) { return timer_now() >= deadline; }
void timer_delay(uint64_t cycles);

#endif
