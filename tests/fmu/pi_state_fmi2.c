/* A discrete PI controller, FMI 2.0 Co-Simulation (model identifier
 * PiState), with canGetAndSetFMUstate: the C twin of pi_controller.py that
 * netloop can roll back. Written for netloop's tests, compiled by
 * tests/fmu/build.sh.
 *
 * doStep(t, h) with the inputs y (measurement) and r (reference) of the
 * step's end: e = r - y, integral += ki * e * h, u = kp * e + integral. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"

enum { VR_Y = 0, VR_R = 1, VR_U = 2, VR_KP = 3, VR_KI = 4, VR_INTEGRAL = 5 };

typedef struct {
    double y, r, u, kp, ki, integral;
} Pi;

typedef struct {
    Pi m;
    char name[64];
} Instance;

#include "fmi2_common.h"

FMI2_COMMON_FUNCTIONS

static void pi_defaults(Pi *m) {
    memset(m, 0, sizeof *m);
    m->kp = 2.0;
    m->ki = 1.0;
}

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String res,
                              const fmi2CallbackFunctions *cb, fmi2Boolean visible, fmi2Boolean logging) {
    (void)guid; (void)res; (void)cb; (void)visible; (void)logging;
    if (type != fmi2CoSimulation) return NULL;
    Instance *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    snprintf(c->name, sizeof c->name, "%s", name ? name : "");
    pi_defaults(&c->m);
    return c;
}

void fmi2FreeInstance(fmi2Component c) { free(c); }
fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tol_defined, fmi2Real tol, fmi2Real start,
                               fmi2Boolean stop_defined, fmi2Real stop) {
    (void)c; (void)tol_defined; (void)tol; (void)start; (void)stop_defined; (void)stop;
    return fmi2OK;
}
fmi2Status fmi2EnterInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }
fmi2Status fmi2ExitInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }
fmi2Status fmi2Terminate(fmi2Component c) { (void)c; return fmi2OK; }
fmi2Status fmi2Reset(fmi2Component c) {
    pi_defaults(&((Instance *)c)->m);
    return fmi2OK;
}

static double *slot(Pi *m, fmi2ValueReference vr) {
    switch (vr) {
    case VR_Y: return &m->y;
    case VR_R: return &m->r;
    case VR_U: return &m->u;
    case VR_KP: return &m->kp;
    case VR_KI: return &m->ki;
    case VR_INTEGRAL: return &m->integral;
    default: return NULL;
    }
}

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real v[]) {
    Instance *i = c;
    for (size_t k = 0; k < n; k++) {
        double *p = slot(&i->m, vr[k]);
        if (!p) return fmi2Error;
        v[k] = *p;
    }
    return fmi2OK;
}
fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Real v[]) {
    Instance *i = c;
    for (size_t k = 0; k < n; k++) {
        double *p = slot(&i->m, vr[k]);
        if (!p || vr[k] == VR_U || vr[k] == VR_INTEGRAL) return fmi2Error;
        *p = v[k];
    }
    return fmi2OK;
}
FMI2_NO_VARIABLES(Integer)
FMI2_NO_VARIABLES(Boolean)
FMI2_NO_VARIABLES(String)

FMI2_STATE_AS_COPY(Pi)
FMI2_STATE_SERIALIZED(Pi)
FMI2_NO_DIRECTIONAL_DERIVATIVES
FMI2_CS_NO_INPUT_DERIVATIVES

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean no_prior) {
    (void)t; (void)no_prior;
    Pi *m = &((Instance *)c)->m;
    double e = m->r - m->y;
    m->integral += m->ki * e * h;
    m->u = m->kp * e + m->integral;
    return fmi2OK;
}

FMI2_CS_NO_ASYNC_STEPS
