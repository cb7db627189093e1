#include "uart.h"

#include <stdio.h>

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
