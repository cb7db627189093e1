/* Interleaved page I/O of extents (extents.h). */
#include "extents.h"

#include <stdio.h>
#include <string.h>

#include "nand.h"

uint32_t extent_pages(const extent *e)
{
    const nand_info *d = nand_chans[e->channel].dev;
    return (e->len + d->page_bytes - 1) / d->page_bytes;
}

int extents_check(const char *who, const extent *e, int n)
{
    int i;
    for (i = 0; i < n; i++) {
        const nand_ch *ch = nand_chan_at(e[i].channel);
        const nand_info *d = ch ? ch->dev : 0;
        if (!d || !nand_channel_present(e[i].channel) || e[i].target < 0 || e[i].target >= d->targets ||
            e[i].block >= d->blocks || extent_pages(&e[i]) > d->pages_per_block) {
            printf("%s: FAIL (extent %d: channel %d target %d block %lu, %lu pages: outside %d target(s) x %lu blocks x "
                   "%lu pages)\n", who, i, e[i].channel, e[i].target, (unsigned long)e[i].block,
                   (unsigned long)(d && d->page_bytes ? extent_pages(&e[i]) : 0), d ? d->targets : 0, (unsigned long)(d ? d->blocks : 0),
                   (unsigned long)(d ? d->pages_per_block : 0));
            return NAND_DRV_ARG;
        }
    }
    return 0;
}

/* An operation may only be split from its completion when no other extent uses the same target, else
 * the second command would find the target busy (tPROG/tR running; a timing violation). */
static int targets_distinct(const extent *e, int n)
{
    int i, j;
    for (i = 0; i < n; i++)
        for (j = 0; j < i; j++)
            if (e[i].target == e[j].target)
                return 0;
    return 1;
}

/* Index of the last extent that still has page `page`: where the interleaved commands of this page are
 * collected (a shorter last extent must not leave the others' SPLIT commands pending, or the next
 * page's command would reach a busy target). */
static int last_with_page(const extent *e, int n, uint32_t page)
{
    int i, last = -1;
    for (i = 0; i < n; i++)
        if (page < extent_pages(&e[i]))
            last = i;
    return last;
}

static int stop(extent_io *io, int i, uint32_t page, const char *op, int rc)
{
    io->index = i;
    io->page = page;
    io->op = op;
    return rc;
}

/* After a failure: wait until the other targets that still run a SPLIT command are ready again, so
 * that the next command does not reach a busy target (results ignored: the caller gives up the pass). */
static void drain(const nand_ch *ch, const extent *e, const int *pending, int from, int to)
{
    int k;
    for (k = from; k <= to; k++) {
        nand_cmd w = {0};
        if (!pending[k])
            continue;
        w.opcode = NAND_OP_WAIT_STATUS;
        w.target = (uint8_t)e[k].target;
        nand_exec(ch, &w, NULL);
    }
}

/* One pass over the pages: `start` (PROGRAM or PAGE_READ, SPLIT) on each extent, then `finish`
 * (WAIT_STATUS or READ_DATA) on the started ones when the page is started everywhere (or at once on a
 * shared target). */
static int interleave(const nand_ch *ch, const extent *e, int n, int write, extent_io *io)
{
    uint32_t page, maxp = 0;
    int i, rc, overlap = targets_distinct(e, n);
    for (i = 0; i < n; i++)
        if (extent_pages(&e[i]) > maxp)
            maxp = extent_pages(&e[i]);
    for (page = 0; page < maxp; page++) {
        int pending[STORAGE_EXTENTS_MAX] = {0}, last = last_with_page(e, n, page);
        for (i = 0; i < n; i++) {
            nand_cmd cmd = {0};
            int k;
            if (page >= extent_pages(&e[i]))
                continue;
            cmd.opcode = write ? NAND_OP_PROGRAM : NAND_OP_PAGE_READ;
            cmd.target = (uint8_t)e[i].target;
            cmd.row = e[i].block * ch->dev->pages_per_block + page;
            cmd.flags = NAND_F_ECC | NAND_F_SPLIT | (write ? NAND_F_DMA : 0);
            cmd.dma_addr = write ? e[i].addr + page * ch->dev->page_bytes : 0;
            if ((rc = nand_exec(ch, &cmd, NULL)) != 0) {
                drain(ch, e, pending, 0, i - 1);
                return stop(io, i, page, write ? "program" : "read", rc);
            }
            pending[i] = 1;
            if (overlap && i != last)
                continue;
            for (k = 0; k <= i; k++) {
                nand_cmd f = {0};
                nand_comp c;
                if (!pending[k])
                    continue;
                f.opcode = write ? NAND_OP_WAIT_STATUS : NAND_OP_READ_DATA;
                f.target = (uint8_t)e[k].target;
                if (!write) {
                    f.row = e[k].block * ch->dev->pages_per_block + page;
                    f.flags = NAND_F_DMA | NAND_F_ECC;
                    f.dma_addr = e[k].addr + page * ch->dev->page_bytes;
                }
                rc = nand_exec(ch, &f, &c);
                if (!write && rc == NAND_E_ECC_UNCORRECTABLE) /* uncorrectable: the driver's re-reads (nand_read) */
                    rc = nand_read(ch, e[k].target, f.row, f.dma_addr, 0, 1, &c);
                if (rc != 0) {
                    drain(ch, e, pending, k + 1, i);
                    return stop(io, k, page, write ? "program status" : "read data", rc);
                }
                pending[k] = 0;
                io->pages_done++;
                io->corrected += c.corrected;
            }
        }
    }
    return 0;
}

static int on_channel(const extent *e, int n, int write, extent_io *io)
{
    const nand_ch *ch = &nand_chans[e[0].channel]; /* extents_check vetted the number */
    int i, rc;
    for (i = 0; write && i < n; i++) {
        nand_comp c;
        if ((rc = nand_erase(ch, e[i].target, e[i].block, &c)) != 0)
            return stop(io, i, 0, "erase", rc);
    }
    return interleave(ch, e, n, write, io);
}

/* Extents of one channel together; on several channels, one extent after the other. */
static int run(const extent *e, int n, int write, extent_io *io)
{
    int i, rc = 0, same = 1;
    memset(io, 0, sizeof *io);
    for (i = 1; i < n; i++)
        same &= e[i].channel == e[0].channel;
    if (same) {
        rc = on_channel(e, n, write, io);
    } else {
        for (i = 0; i < n && !rc; i++) {
            extent_io one = {0};
            rc = on_channel(&e[i], 1, write, &one);
            io->pages_done += one.pages_done;
            io->corrected += one.corrected;
            if (rc)
                stop(io, i, one.page, one.op, rc);
        }
    }
    return rc;
}

int extents_program(const extent *e, int n, extent_io *io) { return run(e, n, 1, io); }

int extents_read(const extent *e, int n, extent_io *io) { return run(e, n, 0, io); }

