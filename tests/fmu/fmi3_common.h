/* The FMI 3.0 functions every C test FMU of netloop defines the same way
 * (linear4_fmi3.c, bouncing_ball_fmi3.c), written once, as fmi2_common.h
 * does for FMI 2.0. Include it after fmi3Functions.h and after the FMU's
 * `Instance` type, which must hold its model as member `m` with a `time`;
 * then expand the macros:
 *
 *   FMI3_COMMON_FUNCTIONS       version, debug logging, fmi3FreeInstance, fmi3Terminate
 *   FMI3_START_TIME_IN_MODEL    fmi3EnterInitializationMode: `m.time` = the start time
 *
 * build.sh runs fmi3_stubs.py on the preprocessed source, so the functions
 * these macros define get no stub. */
#ifndef NETLOOP_FMI3_COMMON_H
#define NETLOOP_FMI3_COMMON_H

#include <stdlib.h>

#define FMI3_COMMON_FUNCTIONS                                                                        \
    const char *fmi3GetVersion(void) { return fmi3Version; }                                         \
    fmi3Status fmi3SetDebugLogging(fmi3Instance c, fmi3Boolean on, size_t n, const fmi3String cat[]) { \
        (void)c; (void)on; (void)n; (void)cat;                                                       \
        return fmi3OK;                                                                               \
    }                                                                                                \
    void fmi3FreeInstance(fmi3Instance c) { free(c); }                                               \
    fmi3Status fmi3Terminate(fmi3Instance c) { (void)c; return fmi3OK; }

/* Tolerance and stop time are not used: the FMU keeps only the start time. */
#define FMI3_START_TIME_IN_MODEL                                                                     \
    fmi3Status fmi3EnterInitializationMode(fmi3Instance c, fmi3Boolean tol_defined, fmi3Float64 tol,   \
                                           fmi3Float64 start, fmi3Boolean stop_defined,              \
                                           fmi3Float64 stop) {                                       \
        (void)tol_defined; (void)tol; (void)stop_defined; (void)stop;                                \
        ((Instance *)c)->m.time = start;                                                             \
        return fmi3OK;                                                                               \
    }

#endif
