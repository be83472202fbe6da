/*
 * keep_loops.h - SM_KEEP_LOOPS_BEGIN / SM_KEEP_LOOPS_END around functions
 * whose short copy and fill loops must stay loops: GCC would turn them
 * into memmove / memset calls, which cost more than the runs they move.
 * The switch is GCC's own (a function-level optimize pragma); clang has
 * no such pass to turn off per function, so there the pair is empty.
 */
#ifndef SM_KEEP_LOOPS_H
#define SM_KEEP_LOOPS_H

#if defined(__GNUC__) && !defined(__clang__)
#define SM_KEEP_LOOPS_BEGIN                                                    \
    _Pragma("GCC push_options")                                                \
        _Pragma("GCC optimize(\"no-tree-loop-distribute-patterns\")")
#define SM_KEEP_LOOPS_END _Pragma("GCC pop_options")
#else
#define SM_KEEP_LOOPS_BEGIN
#define SM_KEEP_LOOPS_END
#endif

#endif
