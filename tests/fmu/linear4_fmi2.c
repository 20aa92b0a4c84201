/* FMI 2.0 Co-Simulation wrapper of linear4.h (model identifier Linear4),
 * with canGetAndSetFMUstate. Written for netloop's tests, compiled by
 * tests/fmu/build.sh. */
#define _POSIX_C_SOURCE 200809L /* sleep() under -std=c99 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fmi2Functions.h"
#include "linear4.h"

typedef struct {
    Linear4 m;
    fmi2CallbackFunctions cb;
    char name[64];
    int initialised;
} Instance;

#include "fmi2_common.h"

static void log_error(Instance *c, const char *msg) {
    if (c->cb.logger)
        c->cb.logger(c->cb.componentEnvironment, c->name, fmi2Error, "error", "%s", msg);
}

FMI2_COMMON_FUNCTIONS

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String res,
                              const fmi2CallbackFunctions *cb, fmi2Boolean visible, fmi2Boolean logging) {
    (void)guid; (void)res; (void)visible; (void)logging;
    if (type != fmi2CoSimulation) return NULL;
    Instance *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    if (cb) c->cb = *cb;
    snprintf(c->name, sizeof c->name, "%s", name ? name : "");
    linear4_defaults(&c->m);
    return c;
}

void fmi2FreeInstance(fmi2Component c) { free(c); }

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tol_defined, fmi2Real tol, fmi2Real start,
                               fmi2Boolean stop_defined, fmi2Real stop) {
    (void)tol_defined; (void)tol; (void)stop_defined; (void)stop;
    ((Instance *)c)->m.time = start;
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }

fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
    Instance *i = c;
    linear4_init(&i->m);
    i->initialised = 1;
    return fmi2OK;
}

fmi2Status fmi2Terminate(fmi2Component c) { (void)c; return fmi2OK; }

fmi2Status fmi2Reset(fmi2Component c) {
    Instance *i = c;
    linear4_defaults(&i->m);
    i->initialised = 0;
    return fmi2OK;
}

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real v[]) {
    Instance *i = c;
    if (!i->initialised) linear4_init(&i->m); /* outputs before exit: the start state */
    for (size_t k = 0; k < n; k++)
        if (!linear4_get(&i->m, vr[k], &v[k])) return fmi2Error;
    return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Real v[]) {
    Instance *i = c;
    for (size_t k = 0; k < n; k++)
        if (!linear4_set(&i->m, vr[k], v[k])) return fmi2Error;
    return fmi2OK;
}

fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Integer v[]) {
    Instance *i = c;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] == VR_SUBSTEPS) v[k] = i->m.substeps;
        else if (vr[k] == VR_FAIL_MODE) v[k] = i->m.fail_mode;
        else return fmi2Error;
    }
    return fmi2OK;
}

fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Integer v[]) {
    Instance *i = c;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] == VR_SUBSTEPS && v[k] >= 1) i->m.substeps = v[k];
        else if (vr[k] == VR_FAIL_MODE && v[k] >= 0 && v[k] <= 3) i->m.fail_mode = v[k];
        else return fmi2Error;
    }
    return fmi2OK;
}

FMI2_NO_VARIABLES(Boolean)
FMI2_NO_VARIABLES(String)

FMI2_STATE_AS_COPY(Linear4)
FMI2_STATE_SERIALIZED(Linear4)
FMI2_NO_DIRECTIONAL_DERIVATIVES

FMI2_CS_NO_INPUT_DERIVATIVES

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean no_prior) {
    (void)no_prior;
    Instance *i = c;
    if (i->m.fail_at >= 0.0 && t + h > i->m.fail_at) {
        switch (i->m.fail_mode) {
        case 1:
            log_error(i, "fail_at reached (fatal)");
            return fmi2Fatal;
        case 2:
            abort();
        case 3:
            for (;;) sleep(1);
        default:
            log_error(i, "fail_at reached");
            return fmi2Error;
        }
    }
    linear4_step(&i->m, h);
    i->m.time = t + h;
    return fmi2OK;
}

FMI2_CS_NO_ASYNC_STEPS
