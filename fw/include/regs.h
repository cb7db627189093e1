/* Register blocks of the compaction IP (prefix CIP_), the DMA (DMA_, channels as DMA_CH_*) and the
 * NAND controller (NAND_): all GENERATED from the RTL's regif declarations by common.RegBlock
 * (build/gen/<block>/<block>_regs.h). Offsets are relative to the block's base in soc.h
 * (channel n of the DMA at DMA_BASE + DMA_CH(n)). No name or offset is restated here. */
#ifndef LSMC_REGS_H
#define LSMC_REGS_H

#include "compaction_regs.h"
#include "dma_regs.h"

#define LSMC_CIP_REGS_SOURCE "compaction_regs.h"
#define LSMC_DMA_REGS_SOURCE "dma_regs.h"

/* The drivers index the channels of the DMA with DMA_CH_STRIDE; the generator checked the layout. */
_Static_assert(DMA_CH3_STATUS - DMA_CH0_STATUS == 3 * DMA_CH_STRIDE, "DMA channels not evenly spaced");

#endif
