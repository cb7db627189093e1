/* Page-by-page NAND I/O of up to STORAGE_EXTENTS_MAX byte ranges ("extents", one block each) with ECC,
 * interleaved across targets: used by the storage flow (flow.c) and the run store (store.c). */
#ifndef LSMC_EXTENTS_H
#define LSMC_EXTENTS_H

#include <stdint.h>

#define STORAGE_EXTENTS_MAX 2 /* extents per call */

typedef struct {
    int target;
    uint32_t block, addr, len; /* DDR source / destination and byte length */
    int channel;               /* NAND channel */
} extent;

/* Where an operation stopped: extent index, page, and which step (a static name). */
typedef struct {
    int index;
    uint32_t page;
    const char *op; /* "erase", "program", "program status", "read", "read data" */
    uint32_t pages_done, corrected;
} extent_io;

/* Pages of the extent (its channel's page size). */
uint32_t extent_pages(const extent *e);
/* Every extent inside the geometry (printed as `<who>: FAIL (extent ...)` otherwise): 0 or NAND_DRV_ARG. */
int extents_check(const char *who, const extent *e, int n);
/* Erase each extent's block, then program its pages (ECC). Extents on different targets of one channel
 * are interleaved: each page is started on every target (SPLIT) before the first status is awaited, so
 * tPROG overlaps; extents on one target go one page after the other; extents on different channels go
 * one extent after the other. 0, or the failing rc with io saying where. */
int extents_program(const extent *e, int n, extent_io *io);
/* Read extents back (ECC, the driver's retries on an uncorrectable page), interleaved the same way. */
int extents_read(const extent *e, int n, extent_io *io);

#endif
