/* Checks of the buffers a host descriptor names (job, Table III): a buffer the IP writes over the
 * firmware's own memory, over the descriptor or over another buffer would corrupt the run silently,
 * so each one is refused with its field named before anything starts. */
#include <stdio.h>

#include "app.h"
#include "csr.h"

typedef struct {
    const char *name;
    uint32_t base, size;
} region;

static int overlaps(uint32_t a, uint32_t alen, uint32_t b, uint32_t blen)
{
    return alen && blen && a < b + blen && b < a + alen;
}

int desc_check_fields(const char *who, const desc_field *f, unsigned n)
{
    /* What the firmware uses itself: the reserved regions of the generated memory map (lsmc_soc.h). */
    static const region fw[] = {
        {"the descriptor", DDR_HOST_BASE, JOB_DESC_BYTES},
        {"the firmware's code, data and heap", FW_IMAGE_BASE, FW_IMAGE_SIZE},
        {"the firmware's stack", FW_STACK_BASE, FW_STACK_SIZE},
        {"the firmware's DDR scratch", DDR_SCRATCH_BASE, DDR_SCRATCH_SIZE},
    };
    unsigned i, j;

    for (i = 0; i < n; i++) {
        uint32_t a = DDR_HOST_BASE + f[i].off;
        if (!f[i].len)
            continue; /* an empty buffer is never read or written */
        if (f[i].off >= DDR_SIZE || f[i].len > DDR_SIZE - f[i].off) {
            printf("%s: field %s (words %u, %u): offset 0x%08lx length %lu is outside the DDR (%lu MiB)\n", who,
                   f[i].name, f[i].word, f[i].word + 1, (unsigned long)f[i].off, (unsigned long)f[i].len,
                   (unsigned long)(DDR_SIZE >> 20));
            return -1;
        }
        if (f[i].off & (DMA_ALIGN - 1)) {
            printf("%s: field %s (word %u): offset 0x%08lx is not %u-byte aligned\n", who, f[i].name, f[i].word,
                   (unsigned long)f[i].off, DMA_ALIGN);
            return -1;
        }
        for (j = 0; j < sizeof fw / sizeof fw[0]; j++) {
            if (overlaps(a, f[i].len, fw[j].base, fw[j].size)) {
                printf("%s: field %s (words %u, %u): 0x%08lx..0x%08lx overlaps %s (0x%08lx..0x%08lx)\n", who,
                       f[i].name, f[i].word, f[i].word + 1, (unsigned long)a, (unsigned long)(a + f[i].len - 1),
                       fw[j].name, (unsigned long)fw[j].base, (unsigned long)(fw[j].base + fw[j].size - 1));
                return -1;
            }
        }
        for (j = 0; j < i; j++) {
            if (overlaps(f[i].off, f[i].len, f[j].off, f[j].len)) {
                printf("%s: field %s (words %u, %u) overlaps field %s (words %u, %u)\n", who, f[i].name, f[i].word,
                       f[i].word + 1, f[j].name, f[j].word, f[j].word + 1);
                return -1;
            }
        }
    }
    return 0;
}

void desc_open(volatile const uint32_t *d, uint32_t *w, unsigned nw, volatile uint32_t *r, unsigned nr,
               uint32_t result_magic)
{
    unsigned i;
    dcache_invalidate();
    for (i = 0; i < nw; i++)
        w[i] = d[i];
    for (i = 0; i < nr; i++)
        r[i] = 0;
    r[0] = result_magic;
}
