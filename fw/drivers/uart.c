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

static unsigned read_line(char *buf, unsigned cap)
{
    unsigned n = 0;
    for (;;) {
        int c = uart_getc_timeout(100000);
        if (c < 0)
            continue; /* a console waits for its user; nothing else is pending */
        if (c == '\r' || c == '\n') {
            putchar('\n');
            buf[n] = 0;
            return n;
        }
        if ((c == 8 || c == 127) && n) {
            n--;
            fputs("\b \b", stdout);
        } else if (c >= ' ' && c < 127 && n + 1 < cap) {
            buf[n++] = (char)c;
            putchar(c);
        }
        fflush(stdout);
    }
}

unsigned uart_read_command(const char *prompt, char *line, unsigned cap, char **argv, unsigned max)
{
    unsigned argc = 0;
    char *p;
    fputs(prompt, stdout);
    fflush(stdout);
    read_line(line, cap);
    for (p = strtok(line, " \t"); p && argc < max; p = strtok(NULL, " \t"))
        argv[argc++] = p;
    return argc;
}
