/* The sub-compaction plan on the CPU: P table-engine units share one job, split by user key at data-block
 * boundaries chosen from the input tables' index blocks only (hw/ip/table_engine/model/subcompaction.h and
 * doc/model.md, "Sub-compactions": the same choices as the model's PlanSubcompactions for the same blocks).
 *
 * Input: each table's raw index block as the units leave it in DDR (footer read, CRC checked, Snappy
 * decoded: the block's contents without its 5-byte trailer), run by run, newest run first, each run's
 * tables in key order. The plan reads an index entry through the block's restart array (LevelDB writes
 * index blocks with a restart point at every entry), so it touches only the entries it needs: each
 * table's first and last, about TE_PLAN_SAMPLES_PER_PART per part and run, and a binary search per split
 * and run. Every entry it reads is checked (restart point inside the entries, varints and key inside
 * them, no shared prefix, the entry ending at the next restart point, an 8-byte tag), and where it needs
 * the block's bytes (samples, a table's last entry, a window's edges; not a search probe) the handle's
 * varints inside the value; the bounds it reads must ascend along the run. A bad block gives a
 * TE_ERR_* code (te_regs.h, the engine's own codes) and the byte offset in that block, never a read
 * outside it.
 *
 * No allocation: the caller gives the work space (te_plan_work_bytes), which also holds the result. The
 * split keys point into the index blocks, which must stay in place while the result is used. */
#ifndef LSMC_TE_PLAN_H
#define LSMC_TE_PLAN_H

#include <stddef.h>
#include <stdint.h>

#define TE_PLAN_MAX_PARTS 64        /* kMaxParts */
#define TE_PLAN_MAX_RUNS 64
#define TE_PLAN_SAMPLES_PER_PART 2  /* kSamplesPerPart: sampled index entries per part and run */
#define TE_PLAN_MAX_KEY_BYTES (1024 + 8) /* kMaxInternalKeyBytes: the engine's limit on an internal key */

/* te_plan() results. */
#define TE_PLAN_OK 0
#define TE_PLAN_E_BLOCK (-1) /* a bad index block: te_plan_result.err names it */
#define TE_PLAN_E_SPACE (-2) /* the work space is smaller than te_plan_work_bytes() */
#define TE_PLAN_E_ARGS (-3)  /* runs, parts or a run's table count out of range */

typedef struct {
    const uint8_t *data; /* the index block's contents (no trailer) */
    uint32_t len;
} te_plan_block;

typedef struct {
    uint32_t runs;              /* K, 1 .. TE_PLAN_MAX_RUNS */
    const uint32_t *run_tables; /* tables of each run (0 allowed) */
    const te_plan_block *index; /* every table's index block, run 0's tables first */
    uint32_t parts;             /* P, 2 .. TE_PLAN_MAX_PARTS */
} te_plan_input;

typedef struct {
    const uint8_t *key; /* a user key (an index key without its 8-byte tag), inside an index block */
    uint32_t len;
} te_plan_key;

/* One run's share of a part (the model's RunWindow): tables first_table .. last_table of the run, from
 * data block (index entry) first_block of the first to last_block of the last; the first lo_blocks
 * blocks are shared with the previous part, the blocks from hi_from on with the next. */
typedef struct {
    uint32_t run, first_table, last_table, first_block, last_block, lo_blocks, hi_from;
    uint64_t bytes; /* data blocks with their trailers */
} te_plan_window;

/* What the plan did, counted as the model counts it (PlanCost): index entries read, user-key
 * comparisons and the bytes they compared (up to and including the first difference). `checks` are the
 * comparisons of the order checks, which the model does not make. */
typedef struct {
    uint32_t index_entries, comparisons, compared_bytes, checks;
} te_plan_stats;

typedef struct {
    uint32_t code;   /* TE_ERR_* */
    uint32_t run, table, offset; /* the block (run, table of the run) and the byte in it */
} te_plan_error;

typedef struct {
    uint32_t parts, runs;
    uint32_t nsplits;           /* ascending; fewer than parts - 1 when the index has too few blocks */
    te_plan_key *splits;        /* part j holds the user keys in (splits[j-1], splits[j]] */
    uint32_t *nwindows;         /* per part: its windows, the first at windows[j * runs] */
    te_plan_window *windows;
    uint64_t *part_bytes;       /* per part: data-block bytes it reads */
    uint64_t total_bytes;       /* the job's data-block bytes */
    te_plan_stats stats;
    te_plan_error err;          /* with TE_PLAN_E_BLOCK */
} te_plan_result;

/* Bytes of work space te_plan() needs for `runs` runs of `tables` tables in all and `parts` parts. */
size_t te_plan_work_bytes(uint32_t runs, uint32_t tables, uint32_t parts);

/* Plans the job; TE_PLAN_OK or a TE_PLAN_E_* code. `work` (8-byte aligned) holds the result's arrays. */
int te_plan(const te_plan_input *in, void *work, size_t work_bytes, te_plan_result *res);

/* "BAD_BLOCK", ... for a TE_ERR_* code. */
const char *te_plan_err_name(uint32_t code);

#endif
