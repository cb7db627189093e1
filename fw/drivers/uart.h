/* UART (spinal.lib Apb3UartCtrl): polled TX behind picolibc's stdout, polled RX for the console. */
#ifndef LSMC_UART_H
#define LSMC_UART_H

#include <stdint.h>

/* Bit time = (divider + 1) * 8 clock cycles (the controller samples 8 times per bit). */
static inline uint32_t uart_divider_for(uint32_t clk_hz, uint32_t baud) { return clk_hz / (baud * 8u) - 1u; }
void uart_init(uint32_t divider);
/* Send one byte; gives up (returns -1) if the TX FIFO stays full for UART_TX_TIMEOUT cycles. */
int uart_putc(char c);
void uart_puts(const char *s);
/* One received byte, or -1 if none arrived within `cycles` (0: just look). */
int uart_getc_timeout(uint64_t cycles);
/* Console input: print `prompt`, read one line with echo and backspace into `line` (waits for the
 * user as long as it takes), split it at blanks into at most `max` words; returns their count, or one
 * of the errors below (the whole line is refused: nothing of it may run). */
int uart_read_command(const char *prompt, char *line, unsigned cap, char **argv, unsigned max);
#define UART_LINE_TOO_LONG (-1)  /* more than cap - 1 characters */
#define UART_LINE_BAD_BYTE (-2)  /* a control or non-ASCII byte */
#define UART_TOO_MANY_WORDS (-3) /* more than max words */
/* The message for an error of uart_read_command() (a static buffer). */
const char *uart_command_error(int rc, unsigned cap, unsigned max);
/* A console's next command: uart_read_command() until a line holds words; a refused line is reported
 * ("console: error: ...") and the prompt comes back. Returns the word count (> 0). */
int uart_next_command(const char *prompt, char *line, unsigned cap, char **argv, unsigned max);
/* Bytes dropped because TX was stuck (a dead UART must not hang the firmware). */
extern uint32_t uart_tx_dropped;
/* stdout sends "\r\n" for "\n" when set (default; the simulation clears it). */
extern int uart_crlf;

#define UART_TX_TIMEOUT 1000000u

#endif
