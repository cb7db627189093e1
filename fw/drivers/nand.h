/* ONFI NAND controller driver (hw/ip/nand/rtl NandController at NAND_BASE, registers from the generated
 * nand_regs.h). Commands go through the controller's queue; each returns a completion record.
 * hw/ip/nand/doc/nand.md describes the controller, the timing derivation and the spare-area layout. */
#ifndef LSMC_NAND_H
#define LSMC_NAND_H

#include <stdint.h>

#include "mmio.h"
#include "onfi_timing.h"
#include "soc.h" /* NAND_CHANNELS_MAX, NAND_CHANNEL_BASE (generated lsmc_soc.h) */

/* Controller opcodes NAND_OP_<NAME> (CMD_CTRL.OPCODE) and completion errors NAND_E_<NAME>
 * (COMP_INFO.C_ERR), with their X-macro lists: generated into nand_regs.h from NandOp / NandErr
 * (hw/ip/nand/rtl/NandTypes.scala), their one source. */
#include "nand_regs.h"
/* Driver results (negative) besides the completion errors NAND_E_* (positive). */
enum { NAND_OK = 0, NAND_DRV_TIMEOUT = -1, NAND_DRV_CRC = -2, NAND_DRV_ID = -3, NAND_DRV_ARG = -4, NAND_DRV_MODE = -5 };

#define NAND_F_ECC (1u << 9)
#define NAND_F_SPLIT (1u << 10)
#define NAND_F_DMA (1u << 11)
#define NAND_F_MPLANE (1u << 12) /* multi-plane: 32h / 11h / D1h for a plane before the last; READ_DATA by 06h-E0h */
#define NAND_MAX_TARGETS 2
#define NAND_STATUS_FAIL 0x01u
#define NAND_STATUS_RDY 0x40u
#define NAND_STATUS_WP_N 0x80u

typedef struct {
    uint8_t op, err, target, status;
    uint16_t tag;
    uint8_t corrected, corr_map, unc_map;
    uint32_t data;
    uint32_t sectors; /* COMP_SECTORS: corrected bits of sector s in bits 4s+3..4s, 0xF = uncorrectable */
} nand_comp;
#define NAND_SECTOR_UNCORRECTABLE 0xFu

typedef struct {
    uint8_t opcode, target;
    uint32_t flags; /* NAND_F_ECC | NAND_F_SPLIT | NAND_F_DMA */
    uint16_t tag;
    uint32_t row, col, len, dma_addr, param;
} nand_cmd;

/* What the parameter page says (ONFI 1.0 fields the driver uses). */
typedef struct {
    uint8_t id[5];
    char manufacturer[13], model[21];
    uint32_t page_bytes, spare_bytes, pages_per_block, blocks;
    uint8_t row_cycles, col_cycles, ecc_bits;
    uint16_t modes; /* bit n: asynchronous timing mode n supported */
    uint16_t features;    /* parameter page bytes 6-7: bit 5 = NV-DDR */
    uint16_t nvddr_modes; /* bytes 141-142: bit n = NV-DDR timing mode n supported */
    uint16_t crc;
    int mode;       /* timing mode in use */
    int nvddr;      /* 1: the channel speaks NV-DDR (mode is an NV-DDR mode) */
    int targets;
    int planes;     /* planes per LUN: 1 << byte 113 when features bit 3 (multi-plane operations), else 1 */
} nand_info;
#define NAND_FEATURE_NVDDR 0x0020u
#define NAND_FEATURE_MULTIPLANE 0x0008u

/* ONFI asynchronous timing parameters (ns) of modes 0..5 (onfi_timing.h, rendered into build/gen/facts from
 * hw/ip/nand/data/onfi_timing.json), and their register encoding. */
typedef struct {
    ONFI_ASYNC_MEMBERS(uint16_t)
} nand_onfi_timing;
extern const nand_onfi_timing nand_onfi_modes[ONFI_ASYNC_MODE_COUNT];
typedef struct { uint32_t timing[4], sample; } nand_timing_regs;
void nand_timing_for_mode(int mode, uint32_t clk_hz, nand_timing_regs *out);

/* Channels: the controllers at NAND_CHANNEL_BASE(0..NAND_CHANNELS_MAX-1); present ones answer
 * NAND_ID_MAGIC (nand_regs.h, generated from the controller), an empty slot reads 0, so whether the SoC
 * has NAND at all is nand_channels() != 0. Every call below takes the channel it acts on; each channel
 * keeps its own geometry (dev), bad-block table and ECC statistics (ecc) in RAM behind its handle. */
typedef struct nand_chan_state nand_chan_state;
typedef struct {
    uintptr_t base;         /* the controller's registers */
    int index;              /* channel number */
    nand_info *dev;         /* geometry, filled in by nand_init (page_bytes 0: not initialised) */
    struct nand_ecc_stats *ecc;
    nand_chan_state *st;
} nand_ch;
extern const nand_ch nand_chans[NAND_CHANNELS_MAX];
/* Channel c's handle, or NULL for a number outside 0..NAND_CHANNELS_MAX-1 (present or not). */
static inline const nand_ch *nand_chan_at(int c) { return c >= 0 && c < NAND_CHANNELS_MAX ? &nand_chans[c] : 0; }
int nand_channel_present(int ch);
int nand_channels(void);            /* channels present, counted from 0 */
static inline uint32_t nand_reg(const nand_ch *ch, uint32_t off) { return mmio_read32(ch->base + off); }
static inline void nand_reg_write(const nand_ch *ch, uint32_t off, uint32_t v) { mmio_write32(ch->base + off, v); }
const char *nand_err_name(int err);

/* Low level: queue one command / take the next completion (NAND_DRV_TIMEOUT after timeout cycles). */
int nand_submit(const nand_ch *ch, const nand_cmd *c);
int nand_complete(const nand_ch *ch, nand_comp *out, uint64_t timeout_cycles);
/* Submit + complete; returns the completion error (0 OK), or a negative driver error. */
int nand_exec(const nand_ch *ch, const nand_cmd *c, nand_comp *out);

int nand_set_mode_regs(const nand_ch *ch, int mode);
/* NV-DDR mode `mode`: DDR_CFG (CK_DIV = the smallest whole number of controller cycles >= tCK, tCAD,
 * tWRCK, tDQSHZ), DDR_CFG2 (tCEH) and the TIMING fields the NV-DDR layer reads (T_CS, T_HOLD = tCH, T_WHR,
 * T_ADL, T_RHW, T_RR, T_WB, T_CCS); the others keep their SDR mode-0 values. lsmc.sim.nandsim.nvddr_words
 * is the reference. */
typedef struct { uint32_t timing[4], sample, ddr_cfg, ddr_cfg2; } nand_nvddr_regs;
void nand_nvddr_for_mode(int mode, uint32_t clk_hz, nand_nvddr_regs *out);
int nand_set_nvddr_regs(const nand_ch *ch, int mode);
/* Read-capture training (NV-DDR; the PHY samples DQ at both controller clock edges behind a delay line,
 * hw/ip/nand/doc/nand.md): DDR_CAPTURE settings in increasing sample position (SLOT half cycles later, TAP x
 * NAND_TRAIN_TAP_PS earlier), every NAND_TRAIN_STEP-th tap; READ ID 20h passes when it reads "ONFI" with
 * no PAIR_SPLIT (each ID byte comes on both DQS edges). The first passing run is the first byte's eye;
 * the setting nearest its middle is kept. first/last: the run's positions in ps; word: DDR_CAPTURE; any
 * may be NULL. NAND_DRV_MODE if nothing reads it. The delay line is the ECP5's DELAYF (TAPS and ~TAP_PS:
 * lsmc/boards/nand_pads.py TAPS, lsmc.sim.nandsim.TAP_PS; test_nand_pads checks them). */
#define NAND_TRAIN_STEP 8u
#define NAND_TRAIN_TAPS 128u
#define NAND_TRAIN_TAP_PS 25u
int nand_train_capture(const nand_ch *ch, int target, int32_t *first, int32_t *last, uint32_t *word);
/* RESET (FFh) in the interface the channel speaks; the target returns to SDR mode 0 (ONFI). In NV-DDR
 * the interface is the channel's: every target is reset (in NV-DDR), then the controller goes back to
 * SDR mode 0. */
int nand_reset(const nand_ch *ch, int target);
/* READ STATUS (70h): the status byte in c->status. */
int nand_read_status(const nand_ch *ch, int target, nand_comp *c);
/* buf: DDR scratch (8 bytes) for the DMA of the five ID bytes. */
int nand_read_id(const nand_ch *ch, int target, uint32_t buf, uint8_t id[5]);
/* Reads the parameter page (three copies) into DDR at buf (>= 768 bytes), checks the CRC-16 of the
 * first copy that matches and fills info. */
int nand_read_param(const nand_ch *ch, int target, uint32_t buf, nand_info *info);
/* Reset every target, ID + parameter page, switch all targets to the fastest common mode (SET
 * FEATURES 01h, checked with GET FEATURES), program the controller timing registers and geometry.
 * NV-DDR is preferred when every target's parameter page offers it (features bit 5; P1 = 10h | mode,
 * then the controller switches and trains its read capture), unless nand_sdr_only is set. */
extern int nand_sdr_only;
int nand_init(const nand_ch *ch, nand_info *info, int targets, uint32_t buf);
int nand_erase(const nand_ch *ch, int target, uint32_t block, nand_comp *c);
/* Program / read one page: with ecc the page's main area (page_bytes) is moved via DMA and ECC
 * protects it; without, `len` raw bytes from column 0. */
int nand_program(const nand_ch *ch, int target, uint32_t row, uint32_t addr, uint32_t len, int ecc, nand_comp *c);
int nand_read(const nand_ch *ch, int target, uint32_t row, uint32_t addr, uint32_t len, int ecc, nand_comp *c);
/* Bad-block scan: marker byte (spare byte 0) of pages 0 and 1; bad[b] = 1 for a bad block. */
int nand_scan_bad(const nand_ch *ch, int target, uint8_t *bad, uint32_t blocks, uint32_t *n_bad);

/* Bad-block table in RAM: factory markers (nand_bbt_scan) plus grown bad blocks (an erase that
 * failed marks its block; callers mark more with nand_bbt_mark, e.g. after a failed program). */
#define NAND_BBT_BLOCKS 4096u
int nand_bbt_scan(const nand_ch *ch, int target, uint32_t blocks, uint32_t *n_bad);
void nand_bbt_mark(const nand_ch *ch, int target, uint32_t block);
int nand_block_bad(const nand_ch *ch, int target, uint32_t block);

/* ECC statistics of every page read completion (PAGE_READ / READ_DATA) since nand_init. nand_read
 * with ECC re-reads an uncorrectable page up to NAND_READ_RETRIES times (a transient flip may pass). */
#define NAND_READ_RETRIES 2
typedef struct nand_ecc_stats {
    uint32_t reads;           /* page read completions */
    uint32_t corrected_bits;  /* bits corrected in total */
    uint32_t uncorrectable;   /* completions with an uncorrectable sector */
    uint32_t retries;         /* re-reads after an uncorrectable completion */
    uint32_t recovered;       /* reads that a retry turned good */
    uint8_t max_sector_bits;  /* most bits corrected in one sector */
} nand_ecc_stats;

/* One channel's driver state (behind its handle). */
struct nand_chan_state {
    nand_info dev;
    nand_ecc_stats ecc;
    uint32_t bbt[NAND_MAX_TARGETS][NAND_BBT_BLOCKS / 32];
};

/* After a failed nand_init the geometry is half filled in: forget it (page_bytes 0 = not initialised). */
void nand_forget(const nand_ch *ch);
/* After a timeout (R/B# stuck busy, a completion that never came) neither the controller's queue nor
 * the part's state can be trusted: soft-reset the controller, then nand_init every target again.
 * On failure the geometry is forgotten. */
int nand_reinit(const nand_ch *ch, int targets, uint32_t buf);

/* The channels x ways scheduler (lsmc/sim/nandsim.py run_channels is its reference model): keeps up
 * to `depth` commands queued on every channel that has a command list (the queue holds 8), waits for
 * the first channel with a completion and drains that channel's completions, so that each channel's
 * bus stays busy while the CPU serves the others. Tags are the command indices. */
typedef struct {
    const nand_cmd *cmds;  /* the channel's commands in order (n = 0: channel unused) */
    uint32_t n;
    uint32_t submitted, completed; /* progress, set by nand_run_channels */
    uint64_t last;         /* timer_now() when the channel's last completion was taken */
} nand_chan_prog;
typedef struct {
    int channel;           /* -1: no completion failed */
    uint32_t index;        /* the failing command's index in its list */
    nand_comp comp;
} nand_sched_err;
/* What the last nand_run_channels did: waits for a completion (rounds), passes of the wait that found
 * none (idle_polls) and the timer cycles they took from each wait's start (idle_cycles): the CPU's
 * slack. Near zero idle cycles, the scheduler itself (APB accesses, cache refills) is the limit. */
typedef struct {
    uint32_t rounds, idle_polls, completions;
    uint64_t idle_cycles;
} nand_sched_stats;
extern nand_sched_stats nand_sched_last;
/* progs[c] for channel c = 0..NAND_CHANNELS_MAX-1. Returns 0; the first completion error (positive: the
 * channel stops submitting, every command already queued is still collected; *err says where);
 * NAND_DRV_TIMEOUT when no channel completes anything for timeout_cycles; NAND_DRV_ARG for a depth
 * outside 1..8 or commands for an absent or uninitialised channel. on_comp (may be NULL) sees every
 * completion. */
int nand_run_channels(nand_chan_prog *progs, int depth, uint64_t timeout_cycles, nand_sched_err *err,
                      void (*on_comp)(int ch, uint32_t index, const nand_comp *c, void *ctx), void *ctx);

/* One channel's command lists for sequential pages (lsmc/sim/nandsim.py cache_read_program and
 * cache_program_program are the reference): `pages` pages of `block` on each of `ways` targets, page q
 * of way t at DDR dma + t * way_stride + q * page_bytes (ECC, DMA). Read: PAGE_READ (SPLIT) on every way,
 * then READ_CACHE 31h (SPLIT) and READ_DATA taking turns between the ways, READ_CACHE_END 3Fh last.
 * Program: PROGRAM_CACHE 80h..15h (SPLIT) for all pages but the last, PROGRAM for the last, the ways
 * taking turns, WAIT_STATUS before a way's next page and at the end. Return the number of commands
 * written to out (at most cap), or NAND_DRV_ARG (ways, pages or cap out of range). */
int nand_cache_read_cmds(const nand_ch *ch, nand_cmd *out, uint32_t cap, int ways, uint32_t pages, uint32_t block, uint32_t dma,
                         uint32_t way_stride);
int nand_cache_program_cmds(const nand_ch *ch, nand_cmd *out, uint32_t cap, int ways, uint32_t pages, uint32_t block, uint32_t dma,
                            uint32_t way_stride);
#define NAND_CACHE_READ_CMDS(ways, pages) ((ways) * (2 * (pages) + 1))

/* Multi-plane command lists (lsmc/sim/nandsim.py multiplane_program_program / multiplane_read_program are
 * the reference): `pages` pages per way spread over the part's planes (ch->dev->planes >= 2; `block` in
 * plane 0, pages a multiple of the planes): page i of way t lives in block block + i % planes at page
 * address i / planes, in DDR at dma + t * way_stride + i * page_bytes (ECC, DMA). Program: PROGRAM with
 * NAND_F_MPLANE (80h..11h, tDBSY) for every plane but the last and PROGRAM_CACHE (80h..15h, SPLIT) for the
 * last (PROGRAM, 10h, in the last group): one tPROG for all planes, overlapping the next group's transfer;
 * the ways take turns, WAIT_STATUS before a way's next group and at the end.
 * Read: PAGE_READ with NAND_F_MPLANE (00h..32h) and PAGE_READ (00h..30h, SPLIT) per way: one tR for all
 * planes; then per plane READ_DATA with NAND_F_MPLANE (06h-E0h selects the plane's page register), the
 * way's next multi-plane read starting after its last READ_DATA, one PAGE_READ after each READ_DATA (the
 * controller holds one front-end completion while a page's DMA is still out). Return the number of
 * commands, or NAND_DRV_ARG. */
int nand_mp_program_cmds(const nand_ch *ch, nand_cmd *out, uint32_t cap, int ways, uint32_t pages, uint32_t block, uint32_t dma,
                         uint32_t way_stride);
int nand_mp_read_cmds(const nand_ch *ch, nand_cmd *out, uint32_t cap, int ways, uint32_t pages, uint32_t block, uint32_t dma,
                      uint32_t way_stride);
#define NAND_MP_PROGRAM_CMDS(ways, pages, planes) ((ways) * ((pages) + (pages) / (planes)))
#define NAND_MP_READ_CMDS(ways, pages) ((ways) * 2 * (pages))
#define NAND_MAX_PLANES 4 /* nand_mp_read_cmds: planes it orders (the parameter page allows more) */
#define NAND_CACHE_PROGRAM_CMDS(ways, pages) ((ways) * (2 * (pages)))

#endif
