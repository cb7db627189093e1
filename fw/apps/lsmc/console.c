/* UART console: `lsmc> ` prompt, one command per line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "regs.h"
#include "soc.h"
#include "sys.h"
#include "uart.h"

#define LINE_MAX 96
#define ARGS_MAX 6

static const char help_text[] =
    "commands:\n"
    "  help                 this text\n"
    "  run N [overlap%] [G] one job of N entries (two runs of N/2 short keys), checked against the C merge\n"
    "  bench                Table III (512 .. 8192 entries)\n"
    "  errtest              error paths: malformed input, overflows, short DMA buffer, timeout\n"
    "  job                  run the job the host loaded at DDR 0x40000000 (docs/firmware.md)\n"
    "  regs                 dump the compaction IP and DMA registers\n"
    "  reset                soft reset of the compaction IP\n"
    "  mode [irq|poll]      how the firmware waits for the IP\n"
    "  exit [code]          end (simulation: exit code)\n";

void regs_dump(void)
{
    static const struct { const char *name; uint32_t off; } cip_regs[] = {
        {"ENCODER_DATA_OUT_CNT", CIP_ENCODER_DATA_OUT_CNT}, {"INVALID_ADDR_OUT_CNT", CIP_INVALID_ADDR_OUT_CNT},
        {"KEY0_ENTRY_IN_CNT", CIP_KEY0_ENTRY_IN_CNT},       {"KEY1_ENTRY_IN_CNT", CIP_KEY1_ENTRY_IN_CNT},
        {"COUNT_CONTROL", CIP_COUNT_CONTROL},               {"THROUGHPUT_COUNTER", CIP_THROUGHPUT_COUNTER},
        {"ID", CIP_ID},                                     {"VERSION", CIP_VERSION},
        {"GROUP", CIP_GROUP},                               {"STATUS", CIP_STATUS},
        {"ERR_INDEX", CIP_ERR_INDEX},                       {"IRQ_ENABLE", CIP_IRQ_ENABLE},
        {"IRQ_STATUS", CIP_IRQ_STATUS},                     {"IN0_BYTES", CIP_IN0_BYTES},
        {"IN1_BYTES", CIP_IN1_BYTES},                       {"OUT_CAPACITY", CIP_OUT_CAPACITY},
        {"INV_CAPACITY", CIP_INV_CAPACITY},                 {"HW_CYCLES", CIP_HW_CYCLES},
        {"OUT_KEYS", CIP_OUT_KEYS},
    };
    unsigned i, ch;
    uint32_t st = cip_read(CIP_STATUS);

    printf("compaction IP @ 0x%08lx:\n", (unsigned long)CIP_BASE);
    for (i = 0; i < sizeof cip_regs / sizeof cip_regs[0]; i++)
        printf("  %02lx %-22s 0x%08lx\n", (unsigned long)cip_regs[i].off, cip_regs[i].name,
               (unsigned long)cip_read(cip_regs[i].off));
    printf("  STATUS: %s%s%s code %lu (%s) input %lu\n", (st & (1u << CIP_STATUS_BUSY_SHIFT)) ? "BUSY " : "",
           (st & (1u << CIP_STATUS_DONE_SHIFT)) ? "DONE " : "", (st & (1u << CIP_STATUS_ERROR_SHIFT)) ? "ERROR " : "",
           (unsigned long)((st & CIP_STATUS_ERR_CODE_MASK) >> CIP_STATUS_ERR_CODE_SHIFT),
           kb16_err_name((st & CIP_STATUS_ERR_CODE_MASK) >> CIP_STATUS_ERR_CODE_SHIFT),
           (unsigned long)((st >> CIP_STATUS_ERR_INPUT_SHIFT) & 1u));
    for (ch = 0; ch < DMA_CHANNELS; ch++) {
        uint32_t s = dma_reg(ch, DMA_CH_STATUS);
        printf("dma%u: ADDR 0x%08lx LEN %lu STATUS 0x%08lx (code %lu %s) BYTES %lu IRQ_EN 0x%lx IRQ_ST 0x%lx\n", ch,
               (unsigned long)dma_reg(ch, DMA_CH_ADDR), (unsigned long)dma_reg(ch, DMA_CH_LEN), (unsigned long)s,
               (unsigned long)((s & DMA_CH_STATUS_ERR_CODE_MASK) >> DMA_CH_STATUS_ERR_CODE_SHIFT),
               dma_err_name((s & DMA_CH_STATUS_ERR_CODE_MASK) >> DMA_CH_STATUS_ERR_CODE_SHIFT),
               (unsigned long)dma_reg(ch, DMA_CH_BYTES), (unsigned long)dma_reg(ch, DMA_CH_IRQ_ENABLE),
               (unsigned long)dma_reg(ch, DMA_CH_IRQ_STATUS));
    }
}

/* Read one line with echo and backspace; returns its length. */
static int parse_uint(const char *s, unsigned long *v)
{
    char *end;
    if (!s || !*s)
        return -1;
    *v = strtoul(s, &end, 0);
    return *end ? -1 : 0;
}

void console_run(void)
{
    char line[LINE_MAX];
    char *argv[ARGS_MAX];
    unsigned long v;

    printf("type 'help' for commands\n");
    for (;;) {
        int argc = (int)uart_read_command("lsmc> ", line, sizeof line, argv, ARGS_MAX);
        if (argc == 0)
            continue;
        if (!strcmp(argv[0], "help")) {
            fputs(help_text, stdout);
        } else if (!strcmp(argv[0], "run")) {
            bench_cfg cfg = {KB16_KIND_SHORT, 25, 16, 0x5EED0000u};
            bench_row row;
            unsigned long ov = 25, g = 16;
            if (argc < 2 || parse_uint(argv[1], &v) || (argc > 2 && (parse_uint(argv[2], &ov) || ov > 100)) ||
                (argc > 3 && parse_uint(argv[3], &g))) {
                printf("usage: run N [overlap%%] [G]\n");
                continue;
            }
            cfg.overlap_pct = (unsigned)ov;
            cfg.group = (unsigned)g;
            bench_run_one((unsigned)v, &cfg, &row, 1);
        } else if (!strcmp(argv[0], "bench")) {
            bench_table(bench_sizes_table3, 5);
        } else if (!strcmp(argv[0], "errtest")) {
            errtest_run();
        } else if (!strcmp(argv[0], "job")) {
            job_run(1);
        } else if (!strcmp(argv[0], "regs")) {
            regs_dump();
        } else if (!strcmp(argv[0], "reset")) {
            printf("soft reset: %s\n", cip_soft_reset() == CIP_OK ? "ok" : "TIMEOUT (IP still busy)");
        } else if (!strcmp(argv[0], "mode")) {
            if (argc > 1 && !strcmp(argv[1], "irq"))
                app_use_irq = 1;
            else if (argc > 1 && !strcmp(argv[1], "poll"))
                app_use_irq = 0;
            else if (argc > 1)
                printf("usage: mode [irq|poll]\n");
            printf("mode: %s\n", app_use_irq ? "irq" : "poll");
        } else if (!strcmp(argv[0], "exit")) {
            v = 0;
            if (argc > 1 && parse_uint(argv[1], &v)) {
                printf("usage: exit [code]\n");
                continue;
            }
            sys_exit((int)v);
            return; /* host-test builds only: sys_exit returns there */
        } else {
            printf("unknown command '%s' (try 'help')\n", argv[0]);
        }
    }
}
