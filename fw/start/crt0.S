/* Start-up of the bare-metal firmware: global pointer, stack, thread pointer (picolibc keeps errno
 * in TLS), trap vector, .data copy, .bss clear, interrupts on, main(), exit. */
    .section .text.init.enter, "ax"
    .globl _start
    .type _start, @function
_start:
    .option push
    .option norelax
    la      gp, __global_pointer$
    .option pop
    la      sp, __stack
    la      tp, __tls_base          /* single thread: the TLS block is .tdata/.tbss in place */
    csrci   mstatus, 8              /* no interrupts until the vector and memory are ready */
    csrw    mie, zero
    la      t0, trap_entry
    csrw    mtvec, t0               /* direct mode: every trap enters trap_entry */

    /* .data (and .tdata) from their load address if it differs (e.g. a ROM image). */
    la      a0, __data_start
    la      a1, __data_source
    la      a2, __data_end
    beq     a0, a1, 2f
1:  bgeu    a0, a2, 2f
    lw      t0, 0(a1)
    sw      t0, 0(a0)
    addi    a0, a0, 4
    addi    a1, a1, 4
    j       1b
2:
    /* .tbss and .bss are one zeroed range. */
    la      a0, __bss_start
    la      a1, __bss_end
3:  bgeu    a0, a1, 4f
    sw      zero, 0(a0)
    addi    a0, a0, 4
    j       3b
4:
    li      t0, 0x800               /* mie.MEIE: the interrupt controller's output */
    csrs    mie, t0
    csrsi   mstatus, 8              /* mstatus.MIE */
    li      a0, 0
    li      a1, 0
    call    main
    call    sys_exit                /* main's return value is the exit code */
5:  j       5b
    .size _start, . - _start

/* Trap entry: save the caller-saved registers (the C handler saves the rest), call
 * trap_handler(mcause, mepc, mtval); it returns the address to resume at. The default handler
 * (fw/drivers/irq.c) is weak: an application may define its own (the SoC self-test does). */
    .section .text.trap, "ax"
    .align  4
    .globl trap_entry
    .type trap_entry, @function
trap_entry:
    addi    sp, sp, -64
    sw      ra, 0(sp)
    sw      t0, 4(sp)
    sw      t1, 8(sp)
    sw      t2, 12(sp)
    sw      a0, 16(sp)
    sw      a1, 20(sp)
    sw      a2, 24(sp)
    sw      a3, 28(sp)
    sw      a4, 32(sp)
    sw      a5, 36(sp)
    sw      a6, 40(sp)
    sw      a7, 44(sp)
    sw      t3, 48(sp)
    sw      t4, 52(sp)
    sw      t5, 56(sp)
    sw      t6, 60(sp)
    csrr    a0, mcause
    csrr    a1, mepc
    csrr    a2, mtval
    call    trap_handler
    csrw    mepc, a0
    lw      ra, 0(sp)
    lw      t0, 4(sp)
    lw      t1, 8(sp)
    lw      t2, 12(sp)
    lw      a0, 16(sp)
    lw      a1, 20(sp)
    lw      a2, 24(sp)
    lw      a3, 28(sp)
    lw      a4, 32(sp)
    lw      a5, 36(sp)
    lw      a6, 40(sp)
    lw      a7, 44(sp)
    lw      t3, 48(sp)
    lw      t4, 52(sp)
    lw      t5, 56(sp)
    lw      t6, 60(sp)
    addi    sp, sp, 64
    mret
    .size trap_entry, . - trap_entry
