/* Stream DMA (hw/ip/dma): 4 channels, 0/1 DDR -> key0/key1, 2 out -> DDR, 3 invalid -> DDR. */
#ifndef LSMC_DMA_H
#define LSMC_DMA_H

#include <stdint.h>

#include "mmio.h"
#include "regs.h"
#include "soc.h" /* UNITS_MAX, DMA_UNIT_BASE */

enum { DMA_CH_KEY0 = 0, DMA_CH_KEY1 = 1, DMA_CH_OUT = 2, DMA_CH_INV = 3, DMA_CHANNELS = 4 };

/* Hardware error codes (STATUS.ERR_CODE). */
enum { DMA_ERR_NONE = 0, DMA_ERR_AXI = 1, DMA_ERR_OVERFLOW = 2, DMA_ERR_MISALIGNED = 3 };

/* Results of dma_wait(). */
enum { DMA_OK = 0, DMA_FAILED = -1, DMA_TIMEOUT = -2, DMA_BAD_ARG = -3, DMA_ABORTED = -4 };

#define DMA_ALIGN 32u
/* `v` rounded up to the DMA's address/length granule. */
static inline uint32_t dma_align_up(uint32_t v) { return (v + DMA_ALIGN - 1u) & ~(DMA_ALIGN - 1u); }

typedef struct {
    uint32_t status; /* raw STATUS */
    uint32_t code;   /* ERR_CODE */
    uint32_t bytes;  /* BYTES moved */
} dma_status;

const char *dma_err_name(uint32_t code);
/* Program a channel without starting it (len: bytes to read, or buffer size a writer may fill). */
int dma_prepare(unsigned ch, uint32_t addr, uint32_t len);
/* Program and start a channel. */
int dma_start(unsigned ch, uint32_t addr, uint32_t len);
/* Start every prepared channel whose bit is set, with one register write. */
void dma_start_mask(unsigned mask);
/* One read of every channel's state: bits 3:0 busy, 11:8 done, 19:16 error (DMA_ALL_* below). */
uint32_t dma_all_status(void);
#define DMA_ALL_BUSY(s) ((s) & 0xFu)
#define DMA_ALL_ERROR(s) (((s) >> 16) & 0xFu)
void dma_abort(unsigned ch);
void dma_read_status(unsigned ch, dma_status *st);
/* Wait until the channel is done, failed or aborted (DMA_OK / DMA_FAILED / DMA_ABORTED);
 * DMA_TIMEOUT after `timeout_cycles` (the channel is left as it is). */
int dma_wait(unsigned ch, uint64_t timeout_cycles, dma_status *st);
/* Clear and set the channel's interrupt enables (bit0 DONE, bit1 ERROR). */
void dma_irq_config(unsigned ch, uint32_t enable);
uint32_t dma_reg(unsigned ch, uint32_t off);

/* ---- a DMA channel set by handle (SoCs with several compaction units) ---------------------------
 * One unit's DMA: its register block. dma_sets[u] is unit slot u's (const, from the generated map);
 * the functions above are dma_sets[0]'s channels 0..3. Channels 0..3 as above (array CH), then the
 * readers of a K-way IP's inputs key2.. (array XCH): channel DMA_CH_COUNT + j reads key(2 + j). A DMA
 * has 2 + K channels; ALL_STATUS/START_MASK hold one bit per channel. */
#define DMA_MAX_CHANNELS (DMA_CH_COUNT + DMA_XCH_COUNT)
typedef struct {
    uintptr_t base;
} dma_set;
extern const dma_set dma_sets[UNITS_MAX];
/* The channel that feeds input k (0 newest) of the unit's IP. */
static inline unsigned dma_reader_channel(unsigned k) { return k < 2 ? k : DMA_CH_COUNT + k - 2; }
#define DMA_ALL_BUSY_ANY(s) (((s) & DMA_ALL_STATUS_BUSY_MASK) >> DMA_ALL_STATUS_BUSY_SHIFT)
#define DMA_ALL_ERROR_ANY(s) (((s) & DMA_ALL_STATUS_ERROR_MASK) >> DMA_ALL_STATUS_ERROR_SHIFT)
/* Address of register `off` of channel `ch` of the set. */
static inline uintptr_t dma_set_ch(const dma_set *d, unsigned ch, uint32_t off)
{
    return d->base + (ch < DMA_CH_COUNT ? DMA_CH(ch) : DMA_XCH(ch - DMA_CH_COUNT)) + off;
}
static inline uint32_t dma_set_reg(const dma_set *d, unsigned ch, uint32_t off) { return mmio_read32(dma_set_ch(d, ch, off)); }
static inline uint32_t dma_set_all_status(const dma_set *d) { return mmio_read32(d->base + DMA_ALL_STATUS); }
static inline void dma_set_start_mask(const dma_set *d, unsigned mask)
{
    mmio_write32(d->base + DMA_START_MASK, (mask << DMA_START_MASK_START_SHIFT) & DMA_START_MASK_START_MASK);
}
static inline void dma_set_abort(const dma_set *d, unsigned ch)
{
    mmio_write32(dma_set_ch(d, ch, DMA_CH_CTRL), 1u << DMA_CH_CTRL_ABORT_SHIFT);
}
void dma_set_prepare(const dma_set *d, unsigned ch, uint32_t addr, uint32_t len);
/* A reader's second segment (ADDR2/LEN2): len2 bytes from addr2 follow the first segment in the same
 * stream; len2 = 0 makes the channel a one-segment reader again. With two segments both addresses and
 * the first length need only the stream beat's alignment (16 bytes, one KB16 entry, at 128 bits); a first
 * segment of 0 bytes reads the second alone: one range that starts off the 32-byte alignment. */
static inline void dma_set_segment2(const dma_set *d, unsigned ch, uint32_t addr2, uint32_t len2)
{
    mmio_write32(dma_set_ch(d, ch, DMA_CH_ADDR2), addr2);
    mmio_write32(dma_set_ch(d, ch, DMA_CH_LEN2), len2);
}
void dma_set_read_status(const dma_set *d, unsigned ch, dma_status *st);

#endif
