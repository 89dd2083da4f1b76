/* FULL records' layouts: where the three Mach structures sit in a record of each layout, and
 * where each special register sits in them (full.h). The decoder (full.c), the views
 * (full_views.c) and the statistics (full_stats.c) all read them, so they are here, below all
 * three, rather than in one of them. */
#include "full.h"

const struct full_layout full_layouts[FULL_N_LAYOUTS] = {
    [FULL_PACKED] = {1004, 4, 164, 428, "packed"},
    [FULL_PAD_OPCODE] = {1008, 8, 168, 432, "padded_after_opcode"},
    [FULL_PAD_THREAD] = {1008, 4, 168, 432, "padded_after_thread_state"},
};

const struct full_spr full_sprs[FULL_N_SPRS] = {
    {"msr", FULL_PART_THREAD, TS_SRR1},	     {"cr", FULL_PART_THREAD, TS_CR},
    {"xer", FULL_PART_THREAD, TS_XER},	     {"lr", FULL_PART_THREAD, TS_LR},
    {"ctr", FULL_PART_THREAD, TS_CTR},	     {"mq", FULL_PART_THREAD, TS_MQ},
    {"vrsave", FULL_PART_THREAD, TS_VRSAVE}, {"fpscr", FULL_PART_FP, FS_FPSCR},
    {"vscr", FULL_PART_VECTOR, VS_VSCR},     {"vrvalid", FULL_PART_VECTOR, VS_VRVALID},
};
