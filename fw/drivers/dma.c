#include "dma.h"

#include "mmio.h"
#include "regs.h"
#include "soc.h"
#include "timer.h"

#define CH(ch, off) (DMA_BASE + DMA_CH_STRIDE * (uint32_t)(ch) + (off))

const char *dma_err_name(uint32_t code)
{
    switch (code) {
    case DMA_ERR_NONE: return "NONE";
    case DMA_ERR_AXI: return "AXI_RESPONSE";
    case DMA_ERR_OVERFLOW: return "OVERFLOW (stream longer than LEN)";
    case DMA_ERR_MISALIGNED: return "MISALIGNED_ADDR";
    default: return "UNKNOWN";
    }
}

uint32_t dma_reg(unsigned ch, uint32_t off) { return mmio_read32(CH(ch, off)); }

int dma_prepare(unsigned ch, uint32_t addr, uint32_t len)
{
    if (ch >= DMA_CHANNELS)
        return DMA_BAD_ARG;
    mmio_write32(CH(ch, DMA_CH_IRQ_STATUS), (1u << DMA_CH_IRQ_STATUS_DONE_SHIFT) | (1u << DMA_CH_IRQ_STATUS_ERROR_SHIFT));
    mmio_write32(CH(ch, DMA_CH_ADDR), addr);
    mmio_write32(CH(ch, DMA_CH_LEN), len);
    return DMA_OK;
}

int dma_start(unsigned ch, uint32_t addr, uint32_t len)
{
    int rc = dma_prepare(ch, addr, len);
    if (rc == DMA_OK)
        mmio_write32(CH(ch, DMA_CH_CTRL), 1u << DMA_CH_CTRL_START_SHIFT);
    return rc;
}

void dma_start_mask(unsigned mask)
{
    mmio_write32(DMA_BASE + DMA_START_MASK, (mask & 0xFu) << DMA_START_MASK_START_SHIFT);
}

uint32_t dma_all_status(void)
{
    return mmio_read32(DMA_BASE + DMA_ALL_STATUS);
}

void dma_abort(unsigned ch)
{
    if (ch < DMA_CHANNELS)
        mmio_write32(CH(ch, DMA_CH_CTRL), 1u << DMA_CH_CTRL_ABORT_SHIFT);
}

void dma_read_status(unsigned ch, dma_status *st)
{
    st->status = mmio_read32(CH(ch, DMA_CH_STATUS));
    st->code = (st->status & DMA_CH_STATUS_ERR_CODE_MASK) >> DMA_CH_STATUS_ERR_CODE_SHIFT;
    st->bytes = mmio_read32(CH(ch, DMA_CH_BYTES));
}

int dma_wait(unsigned ch, uint64_t timeout_cycles, dma_status *st)
{
    const uint32_t fin = (1u << DMA_CH_STATUS_DONE_SHIFT) | (1u << DMA_CH_STATUS_ERROR_SHIFT) |
                        (1u << DMA_CH_STATUS_ABORTED_SHIFT);
    uint64_t end;
    uint32_t s;

    if (ch >= DMA_CHANNELS)
        return DMA_BAD_ARG;
    /* Usually already finished: no timer reads then (they are bus accesses too). */
    s = mmio_read32(CH(ch, DMA_CH_STATUS));
    end = (s & fin) ? 0 : timer_deadline(timeout_cycles);
    while (!(s & fin)) {
        if (timer_expired(end)) {
            /* One last look: the channel may have finished while the timer was read. */
            if ((s = mmio_read32(CH(ch, DMA_CH_STATUS))) & fin)
                break;
            dma_read_status(ch, st);
            return DMA_TIMEOUT;
        }
        s = mmio_read32(CH(ch, DMA_CH_STATUS));
    }
    st->status = s;
    st->code = (s & DMA_CH_STATUS_ERR_CODE_MASK) >> DMA_CH_STATUS_ERR_CODE_SHIFT;
    st->bytes = mmio_read32(CH(ch, DMA_CH_BYTES));
    if (s & (1u << DMA_CH_STATUS_ERROR_SHIFT))
        return DMA_FAILED;
    return (s & (1u << DMA_CH_STATUS_DONE_SHIFT)) ? DMA_OK : DMA_ABORTED;
}

void dma_irq_config(unsigned ch, uint32_t enable)
{
    if (ch < DMA_CHANNELS)
        mmio_write32(CH(ch, DMA_CH_IRQ_ENABLE), enable);
}

/* ---- a channel set by handle ------------------------------------------------------------------- */

_Static_assert(UNITS_MAX == 8, "dma_sets lists 8 unit slots");
const dma_set dma_sets[UNITS_MAX] = {
    {DMA_UNIT_BASE(0)}, {DMA_UNIT_BASE(1)}, {DMA_UNIT_BASE(2)}, {DMA_UNIT_BASE(3)},
    {DMA_UNIT_BASE(4)}, {DMA_UNIT_BASE(5)}, {DMA_UNIT_BASE(6)}, {DMA_UNIT_BASE(7)},
};

void dma_set_prepare(const dma_set *d, unsigned ch, uint32_t addr, uint32_t len)
{
    mmio_write32(dma_set_ch(d, ch, DMA_CH_IRQ_STATUS), (1u << DMA_CH_IRQ_STATUS_DONE_SHIFT) | (1u << DMA_CH_IRQ_STATUS_ERROR_SHIFT));
    mmio_write32(dma_set_ch(d, ch, DMA_CH_ADDR), addr);
    mmio_write32(dma_set_ch(d, ch, DMA_CH_LEN), len);
}

void dma_set_read_status(const dma_set *d, unsigned ch, dma_status *st)
{
    st->status = mmio_read32(dma_set_ch(d, ch, DMA_CH_STATUS));
    st->code = (st->status & DMA_CH_STATUS_ERR_CODE_MASK) >> DMA_CH_STATUS_ERR_CODE_SHIFT;
    st->bytes = mmio_read32(dma_set_ch(d, ch, DMA_CH_BYTES));
}
