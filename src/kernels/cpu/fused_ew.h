/*
 * fused_ew.h - the program the FusedElementwise CPU kernel runs
 * (fused_ew.c): a FusedElementwise body as plain data, one instruction
 * per body node, each a call of the ISA's unary or binary row function
 * (cpu_ops.h) on one tile of the output.
 *
 * The plan builds it from the body (plan/fused_prog.c) when every body
 * node is an op whose own CPU kernel is that row function (elementwise.c)
 * and every value is f32 with the output's element count, or (fused
 * inputs and constants only) one element broadcast, or (fused inputs
 * only) a row of the output's last dimension broadcast along the
 * others (a bias); it refuses otherwise, and the plan
 * then expands the body into steps as before. The kernel sees it through
 * sm_kernel_desc.ew; it is a fixed-size struct with no pointers, so it
 * is copied as it is (prepack hands the copy to run()).
 */
#ifndef SM_CPU_FUSED_EW_H
#define SM_CPU_FUSED_EW_H

#include <stdint.h>

#define SM_EW_MAX_INSTR 64  /* body nodes */
#define SM_EW_MAX_CONSTS 32 /* one-element constants the body reads */
#define SM_EW_MAX_IO 32     /* inputs and outputs of the fused node, each */

/* Where an instruction reads or writes a tile. */
typedef enum sm_ew_loc {
    SM_EW_IN,    /* fused input idx: the tile, or its one element */
    SM_EW_CONST, /* consts[idx], broadcast */
    SM_EW_TEMP,  /* tile buffer idx of the thread's workspace */
    SM_EW_OUT    /* fused output idx: the tile */
} sm_ew_loc;

typedef struct sm_ew_ref {
    int8_t loc; /* sm_ew_loc */
    int8_t idx;
} sm_ew_ref;

/* How an input covers the output. */
enum {
    SM_EW_FULL,      /* the output's element count, contiguous */
    SM_EW_BCAST_ONE, /* one element */
    SM_EW_BCAST_ROW  /* `row` elements, repeated along the other dims */
};

/* Shortest row a row broadcast may have (shorter rows would cut a tile
 * into too many calls; the plan expands such bodies). */
#define SM_EW_MIN_ROW 16

/* One body node: dst = unary f(x; a, b), or dst = x op y (binary). */
typedef struct sm_ew_instr {
    int8_t binary;
    int8_t f; /* an activation / SM_UNARY_*, or an SM_BIN_* */
    float a, b;
    sm_ew_ref x, y, dst;
} sm_ew_instr;

typedef struct sm_ew_prog {
    int n_in, n_out, n_instr, n_temps, n_consts;
    int64_t numel;                    /* elements of every output */
    int64_t row;                      /* the output's last dimension */
    int8_t in_bcast[SM_EW_MAX_IO];    /* input i: SM_EW_BCAST_* */
    float consts[SM_EW_MAX_CONSTS];   /* the body's one-element constants */
    sm_ew_instr ins[SM_EW_MAX_INSTR]; /* in body order */
} sm_ew_prog;

/* Floats per tile: a multiple of every ISA's vector length, so only the
 * last tile of a tensor has a partial vector, as in the unfused kernels;
 * small enough that a body's tiles stay in L1. */
#define SM_EW_TILE 1024

#endif
