/* ONFI NAND controller driver (nand/rtl NandController at NAND_BASE, registers from the generated
 * nand_regs.h). Commands go through the controller's queue; each returns a completion record.
 * docs/nand.md describes the controller, the timing derivation and the spare-area layout. */
#ifndef LSMC_NAND_H
#define LSMC_NAND_H

/* Build variable: fw/Makefile sets LSMC_NAND to 1 when the NAND controller's generated nand_regs.h is
 * there (the driver and the apps' NAND parts are built), else 0. */
#ifndef LSMC_NAND
#error "LSMC_NAND (0 or 1) is not defined: fw/Makefile defines it; host builds pass -DLSMC_NAND=1"
#endif

#include <stdint.h>

#include "onfi_timing.h"

/* Controller opcodes (CMD_CTRL.OPCODE). */
enum {
    NAND_OP_RESET = 0, NAND_OP_READ_ID = 1, NAND_OP_READ_PARAM = 2, NAND_OP_READ_STATUS = 3,
    NAND_OP_SET_FEATURES = 4, NAND_OP_GET_FEATURES = 5, NAND_OP_PAGE_READ = 6, NAND_OP_CHANGE_COL = 7,
    NAND_OP_PROGRAM = 8, NAND_OP_ERASE = 9, NAND_OP_WAIT_STATUS = 10, NAND_OP_READ_DATA = 11,
    NAND_OP_READ_CACHE = 12, NAND_OP_READ_CACHE_END = 13, NAND_OP_PROGRAM_CACHE = 14
};
/* Completion errors (COMP_INFO.C_ERR). */
enum {
    NAND_E_OK = 0, NAND_E_TIMEOUT = 1, NAND_E_FAIL = 2, NAND_E_BAD_CMD = 3, NAND_E_DMA_BOUNDS = 4,
    NAND_E_DMA_BUS = 5, NAND_E_ECC = 6
};
/* Driver results (negative) besides the completion errors above (positive). */
enum { NAND_OK = 0, NAND_DRV_TIMEOUT = -1, NAND_DRV_CRC = -2, NAND_DRV_ID = -3, NAND_DRV_ARG = -4, NAND_DRV_MODE = -5 };

#define NAND_F_ECC (1u << 9)
#define NAND_F_SPLIT (1u << 10)
#define NAND_F_DMA (1u << 11)
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
    uint16_t crc;
    int mode;       /* timing mode in use */
    int targets;
} nand_info;

/* ONFI asynchronous timing parameters (ns) of modes 0..5 (nand/model/onfi_timing.h, generated from
 * nand/data/onfi_timing.json), and their register encoding. */
typedef struct {
    ONFI_ASYNC_MEMBERS(uint16_t)
} nand_onfi_timing;
extern const nand_onfi_timing nand_onfi_modes[ONFI_ASYNC_MODE_COUNT];
typedef struct { uint32_t timing[4], sample; } nand_timing_regs;
void nand_timing_for_mode(int mode, uint32_t clk_hz, nand_timing_regs *out);

/* Channels: the controllers at NAND_CHANNEL_BASE(0..NAND_CHANNELS_MAX-1), present ones answer
 * NAND_ID_MAGIC. Every call below acts on the selected channel (0 after reset); the geometry, bad-block
 * table and ECC statistics are the driver's one set, so a caller switching channels re-runs nand_init. */
#define NAND_ID_MAGIC 0x4E414E44u /* "NAND" */
int nand_channel_present(int ch);
int nand_channels(void);            /* channels present, counted from 0 */
int nand_select(int ch);            /* NAND_DRV_ARG if channel ch is absent */
int nand_channel(void);             /* the selected channel */
uint32_t nand_reg(uint32_t off);
void nand_reg_write(uint32_t off, uint32_t v);
const char *nand_err_name(int err);

/* Low level: queue one command / take the next completion (NAND_DRV_TIMEOUT after timeout cycles). */
int nand_submit(const nand_cmd *c);
int nand_complete(nand_comp *out, uint64_t timeout_cycles);
/* Submit + complete; returns the completion error (0 OK), or a negative driver error. */
int nand_exec(const nand_cmd *c, nand_comp *out);

int nand_set_mode_regs(int mode);
int nand_reset(int target);
/* READ STATUS (70h): the status byte in c->status. */
int nand_read_status(int target, nand_comp *c);
/* buf: DDR scratch (8 bytes) for the DMA of the five ID bytes. */
int nand_read_id(int target, uint32_t buf, uint8_t id[5]);
/* Reads the parameter page (three copies) into DDR at buf (>= 768 bytes), checks the CRC-16 of the
 * first copy that matches and fills info. */
int nand_read_param(int target, uint32_t buf, nand_info *info);
/* Reset every target, ID + parameter page, switch all targets to the fastest common mode (SET
 * FEATURES 01h, checked with GET FEATURES), program the controller timing registers and geometry. */
int nand_init(nand_info *info, int targets, uint32_t buf);
int nand_erase(int target, uint32_t block, nand_comp *c);
/* Program / read one page: with ecc the page's main area (page_bytes) is moved via DMA and ECC
 * protects it; without, `len` raw bytes from column 0. */
int nand_program(int target, uint32_t row, uint32_t addr, uint32_t len, int ecc, nand_comp *c);
int nand_read(int target, uint32_t row, uint32_t addr, uint32_t len, int ecc, nand_comp *c);
/* Bad-block scan: marker byte (spare byte 0) of pages 0 and 1; bad[b] = 1 for a bad block. */
int nand_scan_bad(int target, uint8_t *bad, uint32_t blocks, uint32_t *n_bad);

/* Bad-block table in RAM: factory markers (nand_bbt_scan) plus grown bad blocks (an erase that
 * failed marks its block; callers mark more with nand_bbt_mark, e.g. after a failed program). */
#define NAND_BBT_BLOCKS 4096u
int nand_bbt_scan(int target, uint32_t blocks, uint32_t *n_bad);
void nand_bbt_mark(int target, uint32_t block);
int nand_block_bad(int target, uint32_t block);

/* ECC statistics of every page read completion (PAGE_READ / READ_DATA) since nand_init. nand_read
 * with ECC re-reads an uncorrectable page up to NAND_READ_RETRIES times (a transient flip may pass). */
#define NAND_READ_RETRIES 2
typedef struct {
    uint32_t reads;           /* page read completions */
    uint32_t corrected_bits;  /* bits corrected in total */
    uint32_t uncorrectable;   /* completions with an uncorrectable sector */
    uint32_t retries;         /* re-reads after an uncorrectable completion */
    uint32_t recovered;       /* reads that a retry turned good */
    uint8_t max_sector_bits;  /* most bits corrected in one sector */
} nand_ecc_stats;
extern nand_ecc_stats nand_ecc;

extern nand_info nand_dev;
/* 0 when the firmware was built without the generated nand_regs.h: no function below exists. */
extern const int nand_driver_present;

/* After a failed nand_init the geometry is half filled in: forget it (page_bytes 0 = not initialised). */
void nand_forget(void);
/* After a timeout (R/B# stuck busy, a completion that never came) neither the controller's queue nor
 * the part's state can be trusted: soft-reset the controller, then nand_init every target again.
 * On failure the geometry is forgotten. */
int nand_reinit(int targets, uint32_t buf);

#endif
