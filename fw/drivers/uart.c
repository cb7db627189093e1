#include "uart.h"

#include <stdio.h>
#include <string.h>

#include "mmio.h"
#include "soc.h"
#include "timer.h"

uint32_t uart_tx_dropped;
int uart_crlf = 1;

void uart_init(uint32_t divider)
{
    mmio_write32(UART_BASE + UART_CLOCK_DIVIDER, divider);
    mmio_write32(UART_BASE + UART_FRAME_CONFIG, 7u); /* 8 data bits, no parity, 1 stop bit */
}

int uart_putc(char c)
{
    if (((mmio_read32(UART_BASE + UART_STATUS) >> 16) & 0xFFu) == 0) {
        uint64_t end = timer_deadline(UART_TX_TIMEOUT);
        while (((mmio_read32(UART_BASE + UART_STATUS) >> 16) & 0xFFu) == 0) {
            if (timer_expired(end)) {
                uart_tx_dropped++;
                return -1;
            }
        }
    }
    mmio_write32(UART_BASE + UART_DATA, (uint8_t)c);
    return (uint8_t)c;
}

void uart_puts(const char *s)
{
    while (*s)
        uart_putc(*s++);
}

int uart_getc_timeout(uint64_t cycles)
{
    uint64_t end = timer_deadline(cycles);
    do {
        if (mmio_read32(UART_BASE + UART_STATUS) >> 24) {
            uint32_t d = mmio_read32(UART_BASE + UART_DATA);
            if (d & UART_DATA_VALID)
                return (int)(d & 0xFFu);
        }
    } while (!timer_expired(end));
    return -1;
}

#ifndef LSMC_HOST_SHIM
/* picolibc's stdio: printf goes to the UART, "\n" becomes "\r\n" for terminals (not in sim). */
static int stdout_put(char c, FILE *f)
{
    (void)f;
    if (c == '\n' && uart_crlf)
        uart_putc('\r');
    uart_putc(c);
    return (uint8_t)c;
}

static FILE uart_stdout = FDEV_SETUP_STREAM(stdout_put, NULL, NULL, _FDEV_SETUP_WRITE);
FILE *const stdout = &uart_stdout;
FILE *const stderr = &uart_stdout;
#endif

/* One line into buf (NUL-terminated). A line that does not fit, or that holds a byte other than
 * printable ASCII, is read to its end and refused as a whole (UART_LINE_TOO_LONG / UART_LINE_BAD_BYTE):
 * running a cut prefix of what was typed would run something else. */
static int read_line(char *buf, unsigned cap)
{
    unsigned n = 0;
    int too_long = 0, bad = 0;
    for (;;) {
        int c = uart_getc_timeout(100000);
        if (c < 0)
            continue; /* a console waits for its user; nothing else is pending */
        if (c == '\r' || c == '\n') {
            putchar('\n');
            buf[n] = 0;
            return too_long ? UART_LINE_TOO_LONG : bad ? UART_LINE_BAD_BYTE : (int)n;
        }
        if (c == 8 || c == 127) {
            if (n && !too_long) {
                n--;
                fputs("\b \b", stdout);
            }
        } else if ((c < ' ' && c != '\t') || c > '~') {
            bad = 1;
        } else if (n + 1 < cap) {
            buf[n++] = (char)c;
            putchar(c);
        } else {
            too_long = 1;
        }
        fflush(stdout);
    }
}

int uart_read_command(const char *prompt, char *line, unsigned cap, char **argv, unsigned max)
{
    unsigned argc = 0;
    char *p;
    int n;
    fputs(prompt, stdout);
    fflush(stdout);
    if ((n = read_line(line, cap)) < 0)
        return n;
    for (p = strtok(line, " \t"); p; p = strtok(NULL, " \t")) {
        if (argc == max)
            return UART_TOO_MANY_WORDS;
        argv[argc++] = p;
    }
    return (int)argc;
}

int uart_next_command(const char *prompt, char *line, unsigned cap, char **argv, unsigned max)
{
    for (;;) {
        int argc = uart_read_command(prompt, line, cap, argv, max);
        if (argc > 0)
            return argc;
        if (argc < 0)
            printf("console: error: %s\n", uart_command_error(argc, cap, max));
    }
}

const char *uart_command_error(int rc, unsigned cap, unsigned max)
{
    static char msg[80];
    if (rc == UART_LINE_TOO_LONG)
        snprintf(msg, sizeof msg, "line too long (more than %u characters): ignored", cap - 1);
    else if (rc == UART_LINE_BAD_BYTE)
        snprintf(msg, sizeof msg, "line holds a byte that is not printable ASCII: ignored");
    else
        snprintf(msg, sizeof msg, "too many words (more than %u): ignored", max);
    return msg;
}
