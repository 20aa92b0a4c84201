/* A bouncing ball as an FMI 2.0 Model Exchange FMU (model identifier
 * BouncingBall), with canGetAndSetFMUstate. Written for netloop's tests,
 * compiled by tests/fmu/build.sh. The model itself is bouncing_ball.h. */
#include <stdlib.h>

#include "fmi2Functions.h"
#include "bouncing_ball.h"

typedef struct {
    Model m;
    int initialised;
} Instance;

#include "fmi2_common.h"

FMI2_COMMON_FUNCTIONS

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String res,
                              const fmi2CallbackFunctions *cb, fmi2Boolean visible, fmi2Boolean logging) {
    (void)name; (void)guid; (void)res; (void)cb; (void)visible; (void)logging;
    if (type != fmi2ModelExchange) return NULL;
    Instance *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    defaults(&c->m);
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
    ((Instance *)c)->initialised = 1;
    return fmi2OK;
}
fmi2Status fmi2Terminate(fmi2Component c) { (void)c; return fmi2OK; }
fmi2Status fmi2Reset(fmi2Component c) {
    defaults(&((Instance *)c)->m);
    ((Instance *)c)->initialised = 0;
    return fmi2OK;
}

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real v[]) {
    Model *m = &((Instance *)c)->m;
    calculate(m);
    for (size_t k = 0; k < n; k++) {
        if (vr[k] >= VR_TIME) return fmi2Error;
        v[k] = m->r[vr[k]];
    }
    return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Real v[]) {
    Model *m = &((Instance *)c)->m;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] >= VR_TIME || vr[k] == VR_DER_H || vr[k] == VR_DER_V) return fmi2Error;
        m->r[vr[k]] = v[k];
    }
    return fmi2OK;
}

FMI2_NO_VARIABLES(Integer)
FMI2_NO_VARIABLES(Boolean)
FMI2_NO_VARIABLES(String)

FMI2_STATE_AS_COPY(Model)
FMI2_STATE_NOT_SERIALIZED
FMI2_NO_DIRECTIONAL_DERIVATIVES

/* Model Exchange */
fmi2Status fmi2EnterEventMode(fmi2Component c) { (void)c; return fmi2OK; }

fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *info) {
    Model *m = &((Instance *)c)->m;
    info->newDiscreteStatesNeeded = fmi2False;
    info->terminateSimulation = fmi2False;
    info->nominalsOfContinuousStatesChanged = fmi2False;
    info->valuesOfContinuousStatesChanged = fmi2False;
    if (handle_events(m)) info->valuesOfContinuousStatesChanged = fmi2True;
    info->nextEventTimeDefined = next_event_time(m, &info->nextEventTime);
    return fmi2OK;
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) { (void)c; return fmi2OK; }

fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean no_prior, fmi2Boolean *enter_event,
                                       fmi2Boolean *terminate) {
    (void)c; (void)no_prior;
    *enter_event = fmi2False;
    *terminate = fmi2False;
    return fmi2OK;
}

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real t) {
    ((Instance *)c)->m.time = t;
    return fmi2OK;
}

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t n) {
    return set_states(&((Instance *)c)->m, x, n) ? fmi2OK : fmi2Error;
}

fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t n) {
    return get_states(&((Instance *)c)->m, x, n) ? fmi2OK : fmi2Error;
}

fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real dx[], size_t n) {
    return get_derivatives(&((Instance *)c)->m, dx, n) ? fmi2OK : fmi2Error;
}

fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real z[], size_t n) {
    Model *m = &((Instance *)c)->m;
    if (n != 1) return fmi2Error;
    calculate(m);
    z[0] = m->r[VR_Z];
    return fmi2OK;
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x[], size_t n) {
    (void)c;
    for (size_t k = 0; k < n; k++) x[k] = 1.0;
    return fmi2OK;
}
