/* The FMI 2.0 functions every C test FMU of netloop defines the same way
 * (linear4_fmi2.c, bouncing_ball_fmi2.c, pi_state_fmi2.c), written once.
 * Include it after fmi2Functions.h and after the FMU's `Instance` type,
 * which must hold its model as member `m`; then expand the macros for the
 * groups the FMU has:
 *
 *   FMI2_COMMON_FUNCTIONS                types platform, version, debug logging
 *   FMI2_NO_VARIABLES(Integer)           get/set of a type the FMU has none of
 *   FMI2_STATE_AS_COPY(Model)            fmi2Get/Set/FreeFMUstate: a copy of `m`
 *   FMI2_STATE_SERIALIZED(Model)         ... and its serialisation, as bytes
 *   FMI2_STATE_NOT_SERIALIZED            ... or none (every call an error)
 *   FMI2_NO_DIRECTIONAL_DERIVATIVES      fmi2GetDirectionalDerivative: an error
 *   FMI2_CS_NO_INPUT_DERIVATIVES         Co-Simulation: fmi2Set/GetReal*Derivatives
 *   FMI2_CS_NO_ASYNC_STEPS               Co-Simulation: fmi2CancelStep, fmi2Get*Status
 */
#ifndef NETLOOP_FMI2_COMMON_H
#define NETLOOP_FMI2_COMMON_H

#include <stdlib.h>
#include <string.h>

#define FMI2_COMMON_FUNCTIONS                                                                        \
    const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }                             \
    const char *fmi2GetVersion(void) { return fmi2Version; }                                         \
    fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cat[]) { \
        (void)c; (void)on; (void)n; (void)cat;                                                       \
        return fmi2OK;                                                                               \
    }

/* fmi2GetT/fmi2SetT for a variable type T the FMU has no variable of: an
 * empty call succeeds, any value reference is an error. */
#define FMI2_NO_VARIABLES(T)                                                                         \
    fmi2Status fmi2Get##T(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2##T v[]) {   \
        (void)c; (void)vr; (void)v;                                                                  \
        return n ? fmi2Error : fmi2OK;                                                               \
    }                                                                                                \
    fmi2Status fmi2Set##T(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2##T v[]) { \
        (void)c; (void)vr; (void)v;                                                                  \
        return n ? fmi2Error : fmi2OK;                                                               \
    }

/* The FMU state is a copy of the model `((Instance *)c)->m`, of type
 * Model (inputs included, as FMI 2.0 says). */
#define FMI2_STATE_AS_COPY(Model)                                                                    \
    fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *state) {                               \
        Instance *i = c;                                                                             \
        if (!*state) *state = malloc(sizeof(Model));                                                 \
        if (!*state) return fmi2Fatal;                                                               \
        memcpy(*state, &i->m, sizeof(Model));                                                        \
        return fmi2OK;                                                                               \
    }                                                                                                \
    fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate state) {                                \
        Instance *i = c;                                                                             \
        if (!state) return fmi2Error;                                                                \
        memcpy(&i->m, state, sizeof(Model));                                                         \
        return fmi2OK;                                                                               \
    }                                                                                                \
    fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *state) {                              \
        (void)c;                                                                                     \
        free(*state);                                                                                \
        *state = NULL;                                                                               \
        return fmi2OK;                                                                               \
    }

/* The serialised state: the bytes of the Model copy. */
#define FMI2_STATE_SERIALIZED(Model)                                                                 \
    fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate s, size_t *size) {          \
        (void)c; (void)s;                                                                            \
        *size = sizeof(Model);                                                                       \
        return fmi2OK;                                                                               \
    }                                                                                                \
    fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate s, fmi2Byte b[], size_t size) {  \
        (void)c;                                                                                     \
        if (size < sizeof(Model)) return fmi2Error;                                                  \
        memcpy(b, s, sizeof(Model));                                                                 \
        return fmi2OK;                                                                               \
    }                                                                                                \
    fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte b[], size_t size,            \
                                       fmi2FMUstate *s) {                                            \
        (void)c;                                                                                     \
        if (size < sizeof(Model)) return fmi2Error;                                                  \
        if (!*s) *s = malloc(sizeof(Model));                                                         \
        if (!*s) return fmi2Fatal;                                                                   \
        memcpy(*s, b, sizeof(Model));                                                                \
        return fmi2OK;                                                                               \
    }

#define FMI2_STATE_NOT_SERIALIZED                                                                    \
    fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate s, size_t *size) {          \
        (void)c; (void)s; (void)size;                                                                \
        return fmi2Error;                                                                            \
    }                                                                                                \
    fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate s, fmi2Byte b[], size_t size) {  \
        (void)c; (void)s; (void)b; (void)size;                                                       \
        return fmi2Error;                                                                            \
    }                                                                                                \
    fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte b[], size_t size,            \
                                       fmi2FMUstate *s) {                                            \
        (void)c; (void)b; (void)size; (void)s;                                                       \
        return fmi2Error;                                                                            \
    }

#define FMI2_NO_DIRECTIONAL_DERIVATIVES                                                              \
    fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference u[], size_t nu, \
                                            const fmi2ValueReference z[], size_t nz,                 \
                                            const fmi2Real dv[], fmi2Real dz[]) {                    \
        (void)c; (void)u; (void)nu; (void)z; (void)nz; (void)dv; (void)dz;                           \
        return fmi2Error;                                                                            \
    }

#define FMI2_CS_NO_INPUT_DERIVATIVES                                                                 \
    fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n, \
                                           const fmi2Integer o[], const fmi2Real v[]) {              \
        (void)c; (void)vr; (void)n; (void)o; (void)v;                                                \
        return fmi2Error;                                                                            \
    }                                                                                                \
    fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n, \
                                            const fmi2Integer o[], fmi2Real v[]) {                   \
        (void)c; (void)vr; (void)n; (void)o; (void)v;                                                \
        return fmi2Error;                                                                            \
    }

/* Steps are synchronous: nothing to cancel, no status to ask for. */
#define FMI2_CS_NO_ASYNC_STEPS                                                                       \
    fmi2Status fmi2CancelStep(fmi2Component c) { (void)c; return fmi2Error; }                       \
    fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *v) {               \
        (void)c; (void)s; (void)v;                                                                   \
        return fmi2Discard;                                                                          \
    }                                                                                                \
    fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *v) {             \
        (void)c; (void)s; (void)v;                                                                   \
        return fmi2Discard;                                                                          \
    }                                                                                                \
    fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *v) {       \
        (void)c; (void)s; (void)v;                                                                   \
        return fmi2Discard;                                                                          \
    }                                                                                                \
    fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *v) {       \
        (void)c; (void)s; (void)v;                                                                   \
        return fmi2Discard;                                                                          \
    }                                                                                                \
    fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *v) {         \
        (void)c; (void)s; (void)v;                                                                   \
        return fmi2Discard;                                                                          \
    }

#endif
