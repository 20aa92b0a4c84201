/* FMI 3.0 Co-Simulation wrapper of linear4.h (model identifier Linear4).
 * The functions it does not define are generated as error-returning stubs
 * by fmi3_stubs.py. Written for netloop's tests, compiled by build.sh. */
#include <stdlib.h>

#include "fmi3Functions.h"
#include "linear4.h"

typedef struct {
    Linear4 m;
    int initialised;
} Instance;

#include "fmi3_common.h"

FMI3_COMMON_FUNCTIONS
FMI3_START_TIME_IN_MODEL

fmi3Instance fmi3InstantiateCoSimulation(fmi3String name, fmi3String token, fmi3String res, fmi3Boolean visible,
                                         fmi3Boolean logging, fmi3Boolean event_mode, fmi3Boolean early,
                                         const fmi3ValueReference req[], size_t nreq, fmi3InstanceEnvironment env,
                                         fmi3LogMessageCallback log, fmi3IntermediateUpdateCallback upd) {
    (void)name; (void)token; (void)res; (void)visible; (void)logging; (void)early; (void)req; (void)nreq;
    (void)env; (void)log; (void)upd;
    if (event_mode) return NULL;
    Instance *c = calloc(1, sizeof *c);
    if (c) linear4_defaults(&c->m);
    return c;
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance c) {
    Instance *i = c;
    linear4_init(&i->m);
    i->initialised = 1;
    return fmi3OK;
}

fmi3Status fmi3Reset(fmi3Instance c) {
    Instance *i = c;
    linear4_defaults(&i->m);
    i->initialised = 0;
    return fmi3OK;
}

fmi3Status fmi3GetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, fmi3Float64 v[], size_t nv) {
    Instance *i = c;
    if (nv < nvr) return fmi3Error;
    if (!i->initialised) linear4_init(&i->m);
    for (size_t k = 0; k < nvr; k++)
        if (!linear4_get(&i->m, vr[k], &v[k])) return fmi3Error;
    return fmi3OK;
}

fmi3Status fmi3SetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, const fmi3Float64 v[],
                          size_t nv) {
    Instance *i = c;
    if (nv < nvr) return fmi3Error;
    for (size_t k = 0; k < nvr; k++)
        if (!linear4_set(&i->m, vr[k], v[k])) return fmi3Error;
    return fmi3OK;
}

fmi3Status fmi3GetInt32(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, fmi3Int32 v[], size_t nv) {
    Instance *i = c;
    if (nv < nvr) return fmi3Error;
    for (size_t k = 0; k < nvr; k++) {
        if (vr[k] != VR_SUBSTEPS) return fmi3Error;
        v[k] = i->m.substeps;
    }
    return fmi3OK;
}

fmi3Status fmi3SetInt32(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, const fmi3Int32 v[], size_t nv) {
    Instance *i = c;
    if (nv < nvr) return fmi3Error;
    for (size_t k = 0; k < nvr; k++) {
        if (vr[k] != VR_SUBSTEPS || v[k] < 1) return fmi3Error;
        i->m.substeps = v[k];
    }
    return fmi3OK;
}

fmi3Status fmi3EnterStepMode(fmi3Instance c) { (void)c; return fmi3OK; }

fmi3Status fmi3DoStep(fmi3Instance c, fmi3Float64 t, fmi3Float64 h, fmi3Boolean no_prior, fmi3Boolean *event,
                      fmi3Boolean *terminate, fmi3Boolean *early, fmi3Float64 *last) {
    (void)no_prior;
    Instance *i = c;
    *event = fmi3False;
    *terminate = fmi3False;
    *early = fmi3False;
    if (i->m.fail_at >= 0.0 && t + h > i->m.fail_at) {
        *last = t;
        return fmi3Error;
    }
    linear4_step(&i->m, h);
    i->m.time = t + h;
    *last = t + h;
    return fmi3OK;
}
