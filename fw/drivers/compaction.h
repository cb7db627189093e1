/* Compaction IP driver: identification, soft reset, Table I counters, and a whole job (the paper's
 * Fig. 9 flow: program, start counter, start DMA and IP, wait, stop counter, read counters). */
#ifndef LSMC_COMPACTION_H
#define LSMC_COMPACTION_H

#include <stdint.h>

#include "dma.h"
#include "kb16.h"
#include "mmio.h"
#include "regs.h"
#include "soc.h"

#define CIP_ID_MAGIC 0x4C534D43u /* "LSMC" */
#define CIP_IP_VERSION 0x0100u

/* Results of cip_run() / cip_wait(). */
enum {
    CIP_OK = 0,
    CIP_E_IP = -1,      /* the IP reported an error (code/input/index in the result) */
    CIP_E_DMA = -2,     /* a DMA channel reported an error */
    CIP_E_TIMEOUT = -3, /* a wait ran out of time (see timeout_what) */
    CIP_E_ARG = -4      /* bad job description (e.g. DMA address misaligned is left to the DMA) */
};

/* What the firmware-bracketed THROUGHPUT_COUNTER window holds (docs/firmware.md, "One job"):
 * TIGHT: DMA channels programmed before the counter, one START_MASK write starts them, one ALL_STATUS
 *        read per poll (this project's registers);
 * PAPER: the paper's flow on Xilinx AXI DMA: inside the counter every channel is checked idle, armed
 *        and started one by one (S2MM writers first, then MM2S readers, as XAxiDma_SimpleTransfer is
 *        called), then the IP is started, its STATUS polled to DONE, then each channel's STATUS. */
enum { CIP_BRACKET_TIGHT = 0, CIP_BRACKET_PAPER = 1 };

/* Which wait ran out: DMA channel 0..3, or the IP itself. */
enum { CIP_WAIT_NONE = -1, CIP_WAIT_IP = 4, CIP_WAIT_RESET = 5 };

typedef struct {
    uint32_t enc_words;   /* ENCODER_DATA_OUT_CNT */
    uint32_t inv_addrs;   /* INVALID_ADDR_OUT_CNT */
    uint32_t key0_words;  /* KEY0_ENTRY_IN_CNT */
    uint32_t key1_words;  /* KEY1_ENTRY_IN_CNT */
    uint32_t throughput;  /* THROUGHPUT_COUNTER: firmware-bracketed window */
    uint32_t hw_cycles;   /* HW_CYCLES: the IP's own window */
    uint32_t out_keys;    /* OUT_KEYS */
} cip_counters;

typedef struct {
    unsigned group;
    uint32_t run0_addr, run0_len; /* DDR byte address (32-byte aligned) and byte length */
    uint32_t run1_addr, run1_len;
    uint32_t out_addr, out_buf;   /* output buffer and its size (DMA LEN) */
    uint32_t inv_addr, inv_buf;
    uint32_t out_capacity;        /* IP OUT_CAPACITY / INV_CAPACITY (normally the buffer sizes) */
    uint32_t inv_capacity;
    int use_irq;                  /* wait for the IP by interrupt (1) or by polling STATUS (0) */
    int bracket;                  /* CIP_BRACKET_TIGHT (0) or CIP_BRACKET_PAPER */
    uint64_t timeout_cycles;      /* bound of every wait; 0: cip_default_timeout() */
} cip_job;

typedef struct {
    int rc;                 /* CIP_OK or CIP_E_* */
    uint32_t status;        /* IP STATUS at the end */
    uint32_t err_code;      /* IP ERR_CODE (kb16_err_name) */
    uint32_t err_input;     /* 0/1 */
    uint32_t err_index;     /* ERR_INDEX */
    int timeout_what;       /* CIP_WAIT_* or DMA channel */
    int dma_rc[DMA_CHANNELS];      /* DMA_OK/FAILED/TIMEOUT, or 1: not started */
    dma_status dma[DMA_CHANNELS];
    cip_counters cnt;
} cip_result;

uint32_t cip_read(uint32_t off);
void cip_write(uint32_t off, uint32_t value);
/* 0 if ID reads "LSMC" and the IP version matches; *version gets VERSION. */
int cip_check_id(uint32_t *version);
/* Soft reset: empties the pipeline, clears STATUS, ERR_INDEX, IRQ_STATUS, HW_CYCLES. Returns 0, or
 * CIP_E_TIMEOUT if the IP still reports BUSY afterwards. */
int cip_soft_reset(void);
void cip_counters_clear(void);
void cip_counters_read(cip_counters *c);
uint64_t cip_default_timeout(uint32_t bytes_in);
/* Wait for DONE or ERROR of the started job. CIP_OK, CIP_E_IP or CIP_E_TIMEOUT. */
int cip_wait(int use_irq, uint64_t timeout_cycles, cip_result *res);
/* Run one job end to end. Returns res->rc. On IP errors the DMA writers are aborted if they do not
 * finish; the IP stays in its error state (inspect, then cip_soft_reset()). */
int cip_run(const cip_job *job, cip_result *res);
/* A job merging run0/run1 into out/inv (DDR addresses), its output buffers and capacities sized from
 * the C merge's result `ref` plus one DMA granule, so output beyond the reference is caught. */
void cip_job_from_reference(cip_job *job, unsigned group, uint32_t run0, uint32_t len0, uint32_t run1,
                            uint32_t len1, uint32_t out, uint32_t inv, const kb16_merge_result *ref);
/* Human-readable one-line reason of a failed result into buf. */
const char *cip_describe(const cip_result *res, char *buf, unsigned len);

/* ---- one compaction unit by handle (SoCs with several units) -------------------------------------
 * Unit slot u of the generated map: its IP registers, its DMA and its interrupt line; cip_units[u] is
 * const, its interrupt events live in RAM. The one-unit functions above act on cip_units[0]. A slot
 * without a unit reads 0 (cip_unit_check_id tells). */
typedef struct {
    uintptr_t base;                /* IP register block (CIP_UNIT_BASE) */
    const dma_set *dma;            /* its DMA (DMA_UNIT_BASE) */
    unsigned irq;                  /* its interrupt line (IRQ_CIP_UNIT) */
    volatile uint32_t *events;     /* DONE/ERROR interrupts counted by cip_unit_irq */
} cip_unit;
extern const cip_unit cip_units[UNITS_MAX];
#define CIP_MAX_INPUTS 4u /* IN0..IN3_BYTES: the widest unit the driver knows */

static inline uint32_t cip_unit_read(const cip_unit *u, uint32_t off) { return mmio_read32(u->base + off); }
static inline void cip_unit_write(const cip_unit *u, uint32_t off, uint32_t v) { mmio_write32(u->base + off, v); }
int cip_unit_check_id(const cip_unit *u, uint32_t *version);
/* Soft reset of the unit's IP (see cip_soft_reset). */
int cip_unit_reset(const cip_unit *u);
/* Inputs K of the unit (its WAYS register; a two-way IP has none and reads 2). */
unsigned cip_unit_ways(const cip_unit *u);
/* The job registers (the Fig 9 flow's init): GROUP, IN<k>_BYTES for k < `ways` (in_bytes[k] for
 * k < n, else 0), the capacities, the interrupt status cleared, the events zeroed and the enables set
 * (DONE and ERROR when use_irq). */
void cip_unit_program(const cip_unit *u, unsigned group, const uint32_t *in_bytes, unsigned n, unsigned ways,
                      uint32_t out_capacity, uint32_t inv_capacity, int use_irq);
/* Start a programmed job: the DMA channels of `dma_mask` with one write, then the IP. */
static inline void cip_unit_start(const cip_unit *u, unsigned dma_mask)
{
    dma_set_start_mask(u->dma, dma_mask);
    cip_unit_write(u, CIP_CTRL, 1u << CIP_CTRL_START_SHIFT);
}
/* Interrupt handler of a unit (ctx: its cip_unit): clears IRQ_STATUS, counts DONE/ERROR events. */
void cip_unit_irq(void *ctx);

/* Interrupt bookkeeping (the handler stores IRQ_STATUS and STATUS, then clears IRQ_STATUS). */
extern volatile uint32_t cip_irq_events; /* unit 0's (cip_units[0].events) */
extern volatile uint32_t cip_irq_last_status;
void cip_irq_handler(void *ctx);

#endif
