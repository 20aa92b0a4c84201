/* The bouncing ball of bouncing_ball_fmi2.c as an FMI 3.0 Model Exchange
 * FMU (model identifier BouncingBall3). Written for netloop's tests,
 * compiled by tests/fmu/build.sh; the functions it does not define are
 * generated as error-returning stubs by fmi3_stubs.py. The model itself is
 * bouncing_ball.h. */
#include <stdlib.h>

#include "fmi3Functions.h"
#include "bouncing_ball.h"

typedef struct {
    Model m;
} Instance;

#include "fmi3_common.h"

FMI3_COMMON_FUNCTIONS
FMI3_START_TIME_IN_MODEL

fmi3Instance fmi3InstantiateModelExchange(fmi3String name, fmi3String token, fmi3String res, fmi3Boolean visible,
                                          fmi3Boolean logging, fmi3InstanceEnvironment env,
                                          fmi3LogMessageCallback log) {
    (void)name; (void)token; (void)res; (void)visible; (void)logging; (void)env; (void)log;
    Instance *c = calloc(1, sizeof *c);
    if (c) defaults(&c->m);
    return c;
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance c) { (void)c; return fmi3OK; }
fmi3Status fmi3Reset(fmi3Instance c) {
    defaults(&((Instance *)c)->m);
    return fmi3OK;
}

fmi3Status fmi3GetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, fmi3Float64 v[], size_t nv) {
    Model *m = &((Instance *)c)->m;
    if (nv < nvr) return fmi3Error;
    calculate(m);
    for (size_t k = 0; k < nvr; k++) {
        if (vr[k] >= N_VR) return fmi3Error;
        v[k] = m->r[vr[k]];
    }
    return fmi3OK;
}

fmi3Status fmi3SetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, const fmi3Float64 v[],
                          size_t nv) {
    Model *m = &((Instance *)c)->m;
    if (nv < nvr) return fmi3Error;
    for (size_t k = 0; k < nvr; k++) {
        if (vr[k] >= N_VR || vr[k] == VR_DER_H || vr[k] == VR_DER_V || vr[k] == VR_TIME || vr[k] == VR_Z)
            return fmi3Error;
        m->r[vr[k]] = v[k];
    }
    return fmi3OK;
}

fmi3Status fmi3EnterEventMode(fmi3Instance c) { (void)c; return fmi3OK; }

fmi3Status fmi3UpdateDiscreteStates(fmi3Instance c, fmi3Boolean *update_needed, fmi3Boolean *terminate,
                                    fmi3Boolean *nominals_changed, fmi3Boolean *values_changed,
                                    fmi3Boolean *next_defined, fmi3Float64 *next_time) {
    Model *m = &((Instance *)c)->m;
    *update_needed = fmi3False;
    *terminate = fmi3False;
    *nominals_changed = fmi3False;
    *values_changed = fmi3False;
    if (handle_events(m)) *values_changed = fmi3True;
    *next_defined = next_event_time(m, next_time);
    return fmi3OK;
}

fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance c) { (void)c; return fmi3OK; }

fmi3Status fmi3CompletedIntegratorStep(fmi3Instance c, fmi3Boolean no_prior, fmi3Boolean *enter_event,
                                       fmi3Boolean *terminate) {
    (void)c; (void)no_prior;
    *enter_event = fmi3False;
    *terminate = fmi3False;
    return fmi3OK;
}

fmi3Status fmi3SetTime(fmi3Instance c, fmi3Float64 t) {
    ((Instance *)c)->m.time = t;
    return fmi3OK;
}

fmi3Status fmi3SetContinuousStates(fmi3Instance c, const fmi3Float64 x[], size_t n) {
    return set_states(&((Instance *)c)->m, x, n) ? fmi3OK : fmi3Error;
}

fmi3Status fmi3GetContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t n) {
    return get_states(&((Instance *)c)->m, x, n) ? fmi3OK : fmi3Error;
}

fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance c, fmi3Float64 dx[], size_t n) {
    return get_derivatives(&((Instance *)c)->m, dx, n) ? fmi3OK : fmi3Error;
}

fmi3Status fmi3GetEventIndicators(fmi3Instance c, fmi3Float64 z[], size_t n) {
    Model *m = &((Instance *)c)->m;
    if (n != 1) return fmi3Error;
    calculate(m);
    z[0] = m->r[VR_Z];
    return fmi3OK;
}

fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t n) {
    (void)c;
    for (size_t k = 0; k < n; k++) x[k] = 1.0;
    return fmi3OK;
}

fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance c, size_t *n) {
    (void)c;
    *n = 1;
    return fmi3OK;
}

fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance c, size_t *n) {
    (void)c;
    *n = 2;
    return fmi3OK;
}
