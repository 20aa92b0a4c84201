/* Benchmark half of `scripts/bench.sh fmu`: a minimal FMI 2.0 Co-Simulation
 * master that steps an unpacked FMU directly through the C API: instantiate,
 * set p1_0 = 1 and substeps = 10, initialise, then STEPS times
 * fmi2SetReal(u = 0), fmi2DoStep(t, 1 ms), fmi2GetReal(p1, p2), the calls
 * netloop makes per communication step. Time starts after initialisation.
 *
 *   bench_driver UNPACKED_DIR MODEL_IDENTIFIER STEPS
 *
 * Prints `driver_fmu_s=<wall seconds> steps=<N> p1=<final p1> p1_bits=<its
 * IEEE bits in hex>`. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fmi2Functions.h"

static void logger(fmi2ComponentEnvironment env, fmi2String name, fmi2Status status, fmi2String category,
                   fmi2String message, ...) {
    (void)env; (void)name; (void)status; (void)category;
    va_list args;
    va_start(args, message);
    vfprintf(stderr, message, args);
    va_end(args);
    fputc('\n', stderr);
}

#define LOAD(name)                                                                  \
    name##TYPE *name = (name##TYPE *)dlsym(lib, #name);                            \
    if (!name) {                                                                    \
        fprintf(stderr, "missing %s\n", #name);                                     \
        return 1;                                                                   \
    }

#define CHECK(call)                                                                 \
    if ((call) != fmi2OK) {                                                         \
        fprintf(stderr, "%s failed\n", #call);                                      \
        return 1;                                                                   \
    }

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: bench_driver UNPACKED_DIR MODEL_IDENTIFIER STEPS\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/binaries/linux64/%s.so", argv[1], argv[2]);
    long steps = atol(argv[3]);
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    LOAD(fmi2Instantiate)
    LOAD(fmi2SetupExperiment)
    LOAD(fmi2EnterInitializationMode)
    LOAD(fmi2ExitInitializationMode)
    LOAD(fmi2SetReal)
    LOAD(fmi2SetInteger)
    LOAD(fmi2GetReal)
    LOAD(fmi2DoStep)
    LOAD(fmi2FreeInstance)
    fmi2CallbackFunctions cb = {logger, calloc, free, NULL, NULL};
    fmi2Component c = fmi2Instantiate("plant", fmi2CoSimulation, "", "", &cb, fmi2False, fmi2False);
    if (!c) return 1;
    const fmi2ValueReference vr_u = 0, vr_p1_0 = 9, vr_substeps = 10, vr_out[2] = {1, 2};
    const fmi2Real one = 1.0, zero = 0.0;
    const fmi2Integer substeps = 10;
    CHECK(fmi2SetupExperiment(c, fmi2False, 0.0, 0.0, fmi2False, 0.0))
    CHECK(fmi2SetReal(c, &vr_p1_0, 1, &one))
    CHECK(fmi2SetInteger(c, &vr_substeps, 1, &substeps))
    CHECK(fmi2EnterInitializationMode(c))
    CHECK(fmi2ExitInitializationMode(c))
    fmi2Real y[2] = {0, 0};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long n = 0; n < steps; n++) {
        CHECK(fmi2SetReal(c, &vr_u, 1, &zero))
        CHECK(fmi2DoStep(c, (double)n * 1e-3, 1e-3, fmi2True))
        CHECK(fmi2GetReal(c, vr_out, 2, y))
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    uint64_t bits;
    memcpy(&bits, &y[0], sizeof bits);
    printf("driver_fmu_s=%.6f steps=%ld p1=%e p1_bits=%016llx\n", wall, steps, y[0], (unsigned long long)bits);
    fmi2FreeInstance(c);
    return 0;
}
