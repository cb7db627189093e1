/* SoC self-test firmware (tests/test_soc_sim.py). SIM_ARG picks the scenario; main()'s return value
 * is the simulation's exit code (fw/start/crt0.S passes it to sys_exit, which writes SIM_EXIT).
 * It talks to the hardware directly (no drivers) and brings its own trap handler, which replaces the
 * drivers' weak default (fw/drivers/irq.c). */
#include <stdint.h>

#include "irq.h" /* the trap_handler prototype crt0.S calls */
#include "lsmc_job.h" /* SELFTEST_SCEN_*: the SIM_ARG scenarios (fw/include/job_abi.json) */
#include "selftest_soc.h"
#include "nand_regs.h" /* NAND_ID_MAGIC, generated from the controller's ID register */

static void putc_(char c) {
  while (LSMC_UART_TX_FREE(LSMC_UART_STATUS) == 0) {}
  LSMC_UART_DATA = (uint8_t)c;
}
static void puts_(const char *s) { while (*s) putc_(*s++); }
static void puthex(uint32_t v) {
  puts_("0x");
  for (int i = 28; i >= 0; i -= 4) putc_("0123456789abcdef"[(v >> i) & 15]);
}
static void putdec(uint32_t v) {
  char b[11];
  int n = 0;
  do { b[n++] = '0' + v % 10; v /= 10; } while (v);
  while (n) putc_(b[--n]);
}

/* ------------------------------------------------------------------------------------ traps */
static volatile uint32_t timer_ticks, last_cause, last_epc, ext_irqs, fault_count;

uint32_t trap_handler(uint32_t mcause, uint32_t mepc, uint32_t mtval) {
  (void)mtval;
  last_cause = mcause;
  if (mcause == 0x80000007u) {          /* machine timer: push the compare value far away */
    timer_ticks++;
    LSMC_MTIMECMP_HI = 0xFFFFFFFFu;
    return mepc;
  }
  if (mcause == 0x8000000Bu) {          /* machine external: count and mask the lines that fired */
    ext_irqs++;
    LSMC_IRQ_ENABLE = LSMC_IRQ_ENABLE & ~LSMC_IRQ_PENDING;
    return mepc;
  }
  /* synchronous exception: record it and skip the faulting (32-bit) instruction */
  fault_count++;
  last_epc = mepc;
  return mepc + 4;
}

static inline void irq_enable(uint32_t mie_bits) {
  __asm__ volatile("csrs mie, %0" ::"r"(mie_bits));
  __asm__ volatile("csrs mstatus, %0" ::"r"(8u)); /* MIE */
}

static uint32_t rdcycle(void) {
  uint32_t c;
  __asm__ volatile("rdcycle %0" : "=r"(c));
  return c;
}

/* ------------------------------------------------------------------------------------ scenarios */
static int hello(void) {
  puts_("selftest: hello from LsmcSoc\n");
  uint32_t a = 123456789u, b = 987u;  /* exercise M: mul/div/rem */
  volatile uint32_t va = a, vb = b;
  uint32_t p = va * vb, q = va / vb, r = va % vb;
  puts_("mul "); puthex(p); puts_(" div "); putdec(q); puts_(" rem "); putdec(r); putc_('\n');
  return (p == 0x5EEFAFF7u && q == 125082u && r == 855u) ? 0 : 1;
}

static int timer_irq(void) {
  uint64_t now = lsmc_mtime();
  uint64_t when = now + 2000;
  LSMC_MTIMECMP_HI = 0xFFFFFFFFu; /* no spurious match while the two halves are written */
  LSMC_MTIMECMP_LO = (uint32_t)when;
  LSMC_MTIMECMP_HI = (uint32_t)(when >> 32);
  irq_enable(1u << 7); /* MTIE */
  uint32_t start = rdcycle();
  while (timer_ticks == 0 && rdcycle() - start < 100000u) __asm__ volatile("wfi");
  uint64_t after = lsmc_mtime();
  puts_("timer: ticks "); putdec(timer_ticks); puts_(" cause "); puthex(last_cause);
  puts_(" waited "); putdec((uint32_t)(after - now)); putc_('\n');
  return (timer_ticks == 1 && last_cause == 0x80000007u && after - now >= 2000) ? 0 : 1;
}

/* Write a pattern over 64 KiB of DDR (8x the D$, so lines are evicted), read it back after
 * invalidating the cache; sum the 4 KiB a host file put at DDR+1 MiB (--load); leave a result block
 * at DDR+2 MiB for --dump. */
static int ddr_rw(void) {
  volatile uint32_t *d = (volatile uint32_t *)DDR_BASE;
  const uint32_t words = 64u << 10 >> 2;
  for (uint32_t i = 0; i < words; i++) d[i] = i * 0x9E3779B9u + 7;
  lsmc_dcache_invalidate();
  uint32_t bad = 0;
  for (uint32_t i = 0; i < words; i++) bad += d[i] != i * 0x9E3779B9u + 7;
  volatile uint8_t *bytes = (volatile uint8_t *)(DDR_BASE + 0x1000);
  for (uint32_t i = 0; i < 16; i++) bytes[i] = (uint8_t)(0xA0 + i); /* byte stores */
  lsmc_dcache_invalidate();
  for (uint32_t i = 0; i < 16; i++) bad += bytes[i] != (uint8_t)(0xA0 + i);
  uint32_t sum = 0;
  const volatile uint32_t *in = (const volatile uint32_t *)(DDR_BASE + (1u << 20));
  for (uint32_t i = 0; i < 1024; i++) sum = sum * 31 + in[i];
  volatile uint32_t *out = (volatile uint32_t *)(DDR_BASE + (2u << 20));
  for (uint32_t i = 0; i < 256; i++) out[i] = 0xC0DE0000u + i;
  puts_("ddr: bad "); putdec(bad); puts_(" sum "); puthex(sum); putc_('\n');
  return bad ? 1 : 0;
}

static int hang(void) {
  puts_("hang: looping forever\n");
  for (volatile int spin = 1; spin;) {}
  return 0;
}

/* Echo UART RX lines until "quit". Uses the RX interrupt line through the interrupt controller once. */
static int echo(void) {
  char line[80];
  for (;;) {
    puts_("> ");
    int n = 0;
    for (;;) {
      uint32_t v;
      while (!((v = LSMC_UART_DATA) & LSMC_UART_RX_VALID)) {}
      char c = (char)v;
      if (c == '\n') break;
      if (n < 79) line[n++] = c;
    }
    line[n] = 0;
    puts_("echo: "); puts_(line); putc_('\n');
    if (n == 4 && line[0] == 'q' && line[1] == 'u' && line[2] == 'i' && line[3] == 't') return 0;
  }
}

/* Access fault: a load from an unmapped address must trap (mcause 5) and not hang the bus. */
static int bus_fault(void) {
  volatile uint32_t *nowhere = (volatile uint32_t *)0x20000000u;
  uint32_t v = *nowhere;
  (void)v;
  puts_("fault: count "); putdec(fault_count); puts_(" cause "); puthex(last_cause); putc_('\n');
  return (fault_count == 1 && last_cause == 5) ? 0 : 1;
}

/* External interrupt through the controller: enable the UART TX-empty interrupt line. */
static int ext_irq(void) {
  LSMC_IRQ_ENABLE = 1u << IRQ_UART;
  irq_enable(1u << 11); /* MEIE */
  LSMC_UART_STATUS = 1u; /* TX interrupt enable: pending while the TX FIFO is empty */
  uint32_t start = rdcycle();
  while (ext_irqs == 0 && rdcycle() - start < 100000u) {}
  LSMC_UART_STATUS = 0u;
  puts_("ext: irqs "); putdec(ext_irqs); puts_(" cause "); puthex(last_cause); putc_('\n');
  return (ext_irqs == 1 && last_cause == 0x8000000Bu) ? 0 : 1;
}

/* ------------------------------------------------------------------ compaction IP + DMA smoke job */
/* Offsets from docs/architecture.md (the contract), not from the generated headers. */
#define CIP(off) LSMC_REG32(CIP_BASE + (off))
#define DMA(ch, off) LSMC_REG32(DMA_BASE + 0x40u * (ch) + (off))
enum { CIP_ID = 0x18, CIP_CTRL = 0x20, CIP_GROUP = 0x24, CIP_STATUS = 0x28, CIP_IN0 = 0x38, CIP_IN1 = 0x3C,
       CIP_OUTCAP = 0x40, CIP_INVCAP = 0x44, CIP_OUT_KEYS = 0x4C };
enum { D_ADDR = 0x00, D_LEN = 0x04, D_CTRL = 0x08, D_STATUS = 0x0C, D_BYTES = 0x10 };

static void entry(volatile uint32_t *e, uint32_t shared, uint32_t unshared, uint32_t addr, const char *key) {
  uint32_t k[2] = {0, 0};
  for (uint32_t i = 0; i < unshared; i++) k[i / 4] |= (uint32_t)(uint8_t)key[i] << (8 * (i % 4));
  e[0] = unshared | shared << 4;
  e[1] = addr;
  e[2] = k[0];
  e[3] = k[1];
}

/* One job: DMA channels 0/1 read the runs, 2/3 write merged output and invalid addresses; returns the
 * IP STATUS, fills the byte counts, prints a summary. */
static uint32_t run_job(uint32_t run0, uint32_t len0, uint32_t run1, uint32_t len1, uint32_t group,
                        uint32_t out, uint32_t outcap, uint32_t inv, uint32_t invcap,
                        uint32_t *outBytes, uint32_t *invBytes) {
  lsmc_fence();
  CIP(CIP_CTRL) = 2; /* soft reset */
  CIP(CIP_GROUP) = group;
  CIP(CIP_IN0) = len0;
  CIP(CIP_IN1) = len1;
  CIP(CIP_OUTCAP) = outcap;
  CIP(CIP_INVCAP) = invcap;
  DMA(0, D_ADDR) = run0; DMA(0, D_LEN) = len0;
  DMA(1, D_ADDR) = run1; DMA(1, D_LEN) = len1;
  DMA(2, D_ADDR) = out;  DMA(2, D_LEN) = outcap;
  DMA(3, D_ADDR) = inv;  DMA(3, D_LEN) = invcap;
  for (int ch = 3; ch >= 0; ch--) DMA(ch, D_CTRL) = 1;
  CIP(CIP_CTRL) = 1; /* start */
  uint32_t start = rdcycle(), busy;
  do {
    busy = (CIP(CIP_STATUS) & 1u);
    for (int ch = 0; ch < 4; ch++) busy |= DMA(ch, D_STATUS) & 1u;
  } while (busy && rdcycle() - start < 50000000u);
  uint32_t took = rdcycle() - start;
  uint32_t st = CIP(CIP_STATUS);
  *outBytes = DMA(2, D_BYTES);
  *invBytes = DMA(3, D_BYTES);
  puts_("ip: status "); puthex(st); puts_(" keys "); putdec(CIP(CIP_OUT_KEYS));
  puts_(" out "); putdec(*outBytes); puts_(" inv "); putdec(*invBytes); puts_(" cycles "); putdec(took);
  putc_('\n');
  for (int ch = 0; ch < 4; ch++) { puts_(" dma"); putdec(ch); puts_(" "); puthex(DMA(ch, D_STATUS)); }
  putc_('\n');
  return st;
}

/* run0 (newer) = {b:0x11, c:0x12}, run1 (older) = {a:0x21, c:0x22}: merged {a:0x21, b:0x11, c:0x12},
 * invalid {0x22}. Everything in DDR, built by the CPU. */
static int dma_ip(void) {
  volatile uint32_t *run0 = (volatile uint32_t *)(DDR_BASE + 0x100000);
  volatile uint32_t *run1 = (volatile uint32_t *)(DDR_BASE + 0x100100);
  volatile uint32_t *out = (volatile uint32_t *)(DDR_BASE + 0x300000);
  volatile uint32_t *inv = (volatile uint32_t *)(DDR_BASE + 0x300400);
  if (CIP(CIP_ID) != 0x4C534D43u) { puts_("ip: no ID\n"); return 1; }
  entry(run0, 0, 1, 0x11, "b");
  entry(run0 + 4, 0, 1, 0x12, "c");
  entry(run1, 0, 1, 0x21, "a");
  entry(run1 + 4, 0, 1, 0x22, "c");
  for (int i = 0; i < 64; i++) out[i] = 0xDEADBEEFu;
  for (int i = 0; i < 8; i++) inv[i] = 0xDEADBEEFu;
  uint32_t ob, ib, warm = 0;
  for (int i = 0; i < 16; i++) warm += out[i]; /* pull the output lines into the D$ */
  uint32_t st = run_job((uint32_t)(uintptr_t)run0, 32, (uint32_t)(uintptr_t)run1, 32, 16,
                        (uint32_t)(uintptr_t)out, 256, (uint32_t)(uintptr_t)inv, 32, &ob, &ib);
  /* The D$ still holds the lines the CPU read before the DMA wrote DDR: stale until invalidated. */
  uint32_t stale = out[0];
  lsmc_dcache_invalidate();
  puts_("ip: cached "); puthex(stale); puts_(" after invalidate "); puthex(out[0]); putc_('\n');
  if (warm != 16u * 0xDEADBEEFu || stale != 0xDEADBEEFu) return 1;
  static const uint32_t want[12] = {1, 0x21, 'a', 0, 1, 0x11, 'b', 0, 1, 0x12, 'c', 0};
  uint32_t bad = 0;
  for (int i = 0; i < 12; i++) bad += out[i] != want[i];
  bad += out[12] != 0xDEADBEEFu; /* nothing past the merged run */
  bad += inv[0] != 0x22;
  puts_("ip: mismatches "); putdec(bad); putc_('\n');
  return (bad == 0 && (st & 7u) == 2u && ob == 48 && ib == 4) ? 0 : 1;
}

/* Host-supplied job (tests put it in DDR with --load and read the result with --dump):
 * DDR+0x0: {magic "JOB!", in0 bytes, in1 bytes, group}; runs at DDR+16 MiB and DDR+32 MiB; output to
 * DDR+48 MiB (capacity 16 MiB), invalid addresses to DDR+64 MiB (16 MiB). The result words
 * {STATUS, out bytes, inv bytes} go to DDR+0x10. Exit 0 when the IP reports DONE. */
static int host_job(void) {
  volatile uint32_t *d = (volatile uint32_t *)DDR_BASE;
  if (d[0] != 0x21424F4Au) { puts_("job: no descriptor\n"); return 1; }
  uint32_t ob, ib;
  uint32_t st = run_job(DDR_BASE + (16u << 20), d[1], DDR_BASE + (32u << 20), d[2], d[3],
                        DDR_BASE + (48u << 20), 16u << 20, DDR_BASE + (64u << 20), 16u << 20, &ob, &ib);
  lsmc_dcache_invalidate();
  d[4] = st;
  d[5] = ob;
  d[6] = ib;
  lsmc_fence();
  return (st & 7u) == 2u ? 0 : 1;
}

/* NAND controller wiring: channel 0's ID register (at NAND_BASE) answers "NAND"; so does every other
 * channel the build has (NAND_CHANNEL_BASE(c)), absent slots read 0. */
static int nand_id(void) {
  uint32_t id = LSMC_REG32(NAND_BASE);
  unsigned c, n = 0;
  puts_("nand: id "); puthex(id); putc_('\n');
  while (n < NAND_CHANNELS_MAX && LSMC_REG32(NAND_CHANNEL_BASE(n)) == id) n++;
  for (c = n; c < NAND_CHANNELS_MAX; c++)
    if (LSMC_REG32(NAND_CHANNEL_BASE(c)) != 0) return 1;  /* a hole in the channel slots */
  puts_("nand: channels "); puthex(n); putc_('\n');
  return id == NAND_ID_MAGIC ? 0 : 1;
}

int main(void) {
  switch (LSMC_SIM_ARG) {
    case SELFTEST_SCEN_HELLO: return hello();
    case SELFTEST_SCEN_EXIT42: puts_("exit: 42\n"); return 42;
    case SELFTEST_SCEN_TIMER_IRQ: return timer_irq();
    case SELFTEST_SCEN_DDR_RW: return ddr_rw();
    case SELFTEST_SCEN_HANG: return hang();
    case SELFTEST_SCEN_ECHO: return echo();
    case SELFTEST_SCEN_BUS_FAULT: return bus_fault();
    case SELFTEST_SCEN_EXT_IRQ: return ext_irq();
    case SELFTEST_SCEN_DMA_IP: return dma_ip();
    case SELFTEST_SCEN_NAND_ID: return nand_id();
    case SELFTEST_SCEN_HOST_JOB: return host_job();
    default: puts_("selftest: unknown SIM_ARG\n"); return 3;
  }
}
