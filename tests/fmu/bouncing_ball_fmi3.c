/* The bouncing ball of bouncing_ball_fmi2.c as an FMI 3.0 Model Exchange
 * FMU (model identifier BouncingBall3). Written for netloop's tests,
 * compiled by tests/fmu/build.sh; the functions it does not define are
 * generated as error-returning stubs by fmi3_stubs.py.
 *
 * States h (height, m) and v (velocity, m/s): der(h) = v, der(v) = f - g,
 * f an input (acceleration). A state event (event indicator z = h) bounces
 * the ball: h = 0, v = -e v; below v_min it comes to rest (z = 1, no more
 * motion). A time event at t_kick (when t_kick >= 0) adds kick to v. */
#include <stdlib.h>
#include <string.h>

#include "fmi3Functions.h"

enum { VR_H, VR_DER_H, VR_V, VR_DER_V, VR_G, VR_E, VR_V_MIN, VR_F, VR_T_KICK, VR_KICK, VR_TIME, VR_Z, N_VR };

typedef struct {
    double r[N_VR];
    double time;
    int kicked, resting;
} Model;

typedef struct {
    Model m;
} Instance;

static void defaults(Model *m) {
    memset(m, 0, sizeof *m);
    m->r[VR_H] = 1.0;
    m->r[VR_G] = 9.81;
    m->r[VR_E] = 0.7;
    m->r[VR_V_MIN] = 0.1;
    m->r[VR_T_KICK] = -1.0;
}

/* The calculated variables: derivatives, event indicator, time. */
static void calculate(Model *m) {
    m->r[VR_DER_H] = m->resting ? 0.0 : m->r[VR_V];
    m->r[VR_DER_V] = m->resting ? 0.0 : m->r[VR_F] - m->r[VR_G];
    m->r[VR_Z] = m->resting ? 1.0 : m->r[VR_H];
    m->r[VR_TIME] = m->time;
}

const char *fmi3GetVersion(void) { return fmi3Version; }

fmi3Status fmi3SetDebugLogging(fmi3Instance c, fmi3Boolean on, size_t n, const fmi3String cat[]) {
    (void)c; (void)on; (void)n; (void)cat;
    return fmi3OK;
}

fmi3Instance fmi3InstantiateModelExchange(fmi3String name, fmi3String token, fmi3String res, fmi3Boolean visible,
                                          fmi3Boolean logging, fmi3InstanceEnvironment env,
                                          fmi3LogMessageCallback log) {
    (void)name; (void)token; (void)res; (void)visible; (void)logging; (void)env; (void)log;
    Instance *c = calloc(1, sizeof *c);
    if (c) defaults(&c->m);
    return c;
}

void fmi3FreeInstance(fmi3Instance c) { free(c); }

fmi3Status fmi3EnterInitializationMode(fmi3Instance c, fmi3Boolean tol_defined, fmi3Float64 tol, fmi3Float64 start,
                                       fmi3Boolean stop_defined, fmi3Float64 stop) {
    (void)tol_defined; (void)tol; (void)stop_defined; (void)stop;
    ((Instance *)c)->m.time = start;
    return fmi3OK;
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance c) { (void)c; return fmi3OK; }
fmi3Status fmi3Terminate(fmi3Instance c) { (void)c; return fmi3OK; }
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
    if (!m->kicked && m->r[VR_T_KICK] >= 0.0 && m->time >= m->r[VR_T_KICK]) {
        m->kicked = 1;
        m->r[VR_V] += m->r[VR_KICK];
        if (m->r[VR_KICK] > 0.0) m->resting = 0;
        *values_changed = fmi3True;
    }
    if (!m->resting && m->r[VR_H] <= 0.0 && m->r[VR_V] < 0.0) {
        m->r[VR_H] = 0.0;
        m->r[VR_V] = -m->r[VR_E] * m->r[VR_V];
        if (m->r[VR_V] < m->r[VR_V_MIN]) {
            m->r[VR_V] = 0.0;
            m->resting = 1;
        }
        *values_changed = fmi3True;
    }
    *next_defined = !m->kicked && m->r[VR_T_KICK] >= 0.0;
    *next_time = *next_defined ? m->r[VR_T_KICK] : 0.0;
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
    Model *m = &((Instance *)c)->m;
    if (n != 2) return fmi3Error;
    m->r[VR_H] = x[0];
    m->r[VR_V] = x[1];
    return fmi3OK;
}

fmi3Status fmi3GetContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t n) {
    Model *m = &((Instance *)c)->m;
    if (n != 2) return fmi3Error;
    x[0] = m->r[VR_H];
    x[1] = m->r[VR_V];
    return fmi3OK;
}

fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance c, fmi3Float64 dx[], size_t n) {
    Model *m = &((Instance *)c)->m;
    if (n != 2) return fmi3Error;
    calculate(m);
    dx[0] = m->r[VR_DER_H];
    dx[1] = m->r[VR_DER_V];
    return fmi3OK;
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
