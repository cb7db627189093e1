/* A sub-compaction part's shares of its job's buffers, one rule for whoever lays the parts out: the firmware's own
 * plan (fw/apps/tables/parts.c) and the host's (hw/ip/table_engine/dv/te_unit_harness.cpp --parts). Header only,
 * C and C++. */
#ifndef LSMC_TE_PARTS_H
#define LSMC_TE_PARTS_H

#include <stdint.h>

/* A part's weight in the output buffer's split: the data-block bytes it reads (at least 1, so a part whose window
 * holds no whole block still gets its share). The split divides by the dispatched parts' weights summed. */
static inline uint64_t te_part_weight(uint64_t part_bytes)
{
    return part_bytes ? part_bytes : 1;
}

/* Its share of the job's output buffer of `out_bytes`: in proportion to its weight, whole 4 KiB pages. */
static inline uint32_t te_part_out_bytes(uint32_t out_bytes, uint64_t part_bytes, uint64_t weight_sum)
{
    return (uint32_t)((uint64_t)out_bytes * te_part_weight(part_bytes) / weight_sum) & ~4095u;
}

/* Its share of the job's index spill region of `spill_bytes`: the parts run side by side, each spilling its own
 * tables' index blocks, so each gets 1/P of it in whole beats (none when the job has none). */
static inline uint32_t te_part_spill_bytes(uint32_t spill_bytes, uint32_t parts)
{
    return spill_bytes / parts & ~15u;
}

#endif
