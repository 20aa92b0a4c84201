/* The 4-state linear plant of the FMU tests: two masses on springs,
 * x = [p1, v1, p2, v2], force u on mass 1,
 *   p1' = v1
 *   v1' = (-k1 p1 - c1 v1 + k2 (p2 - p1) + c2 (v2 - v1) + u) / m1
 *   p2' = v2
 *   v2' = (-k2 (p2 - p1) - c2 (v2 - v1)) / m2
 * integrated by `substeps` classic RK4 steps per communication step, the
 * input held. Shared by the FMI 2.0 and FMI 3.0 wrappers. */
#ifndef LINEAR4_H
#define LINEAR4_H

#include <string.h>

/* Value references: the same in both versions' modelDescription.xml. */
enum {
    VR_U = 0,
    VR_P1 = 1,
    VR_P2 = 2,
    VR_K1 = 3,
    VR_K2 = 4,
    VR_C1 = 5,
    VR_C2 = 6,
    VR_M1 = 7,
    VR_M2 = 8,
    VR_P1_0 = 9,
    VR_SUBSTEPS = 10,
    VR_FAIL_AT = 11,
    VR_TIME = 12,
    VR_FAIL_MODE = 13,
};

typedef struct {
    double x[4];
    double u;
    double k1, k2, c1, c2, m1, m2;
    double p1_0;
    int substeps;
    /* doStep returns an error when it would pass this time (if >= 0). */
    double fail_at;
    /* How it fails at fail_at (FMI 2.0 wrapper): 0 returns fmi2Error,
     * 1 fmi2Fatal, 2 calls abort(), 3 hangs. */
    int fail_mode;
    double time;
} Linear4;

static void linear4_defaults(Linear4 *m) {
    memset(m, 0, sizeof *m);
    m->k1 = 4.0;
    m->k2 = 2.0;
    m->c1 = 0.4;
    m->c2 = 0.2;
    m->m1 = 1.0;
    m->m2 = 0.5;
    m->p1_0 = 0.0;
    m->substeps = 10;
    m->fail_at = -1.0;
}

static void linear4_init(Linear4 *m) {
    m->x[0] = m->p1_0;
    m->x[1] = 0.0;
    m->x[2] = 0.0;
    m->x[3] = 0.0;
}

static void linear4_rhs(const Linear4 *m, const double *x, double *dx) {
    double spring2 = m->k2 * (x[2] - x[0]) + m->c2 * (x[3] - x[1]);
    dx[0] = x[1];
    dx[1] = (-m->k1 * x[0] - m->c1 * x[1] + spring2 + m->u) / m->m1;
    dx[2] = x[3];
    dx[3] = -spring2 / m->m2;
}

static void linear4_step(Linear4 *m, double h) {
    int n = m->substeps > 0 ? m->substeps : 1;
    double dt = h / n;
    for (int s = 0; s < n; s++) {
        double k1[4], k2[4], k3[4], k4[4], y[4];
        linear4_rhs(m, m->x, k1);
        for (int i = 0; i < 4; i++) y[i] = m->x[i] + 0.5 * dt * k1[i];
        linear4_rhs(m, y, k2);
        for (int i = 0; i < 4; i++) y[i] = m->x[i] + 0.5 * dt * k2[i];
        linear4_rhs(m, y, k3);
        for (int i = 0; i < 4; i++) y[i] = m->x[i] + dt * k3[i];
        linear4_rhs(m, y, k4);
        for (int i = 0; i < 4; i++)
            m->x[i] += dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
    }
}

/* Reads a Real by value reference; returns 0 if unknown. */
static int linear4_get(const Linear4 *m, unsigned vr, double *v) {
    switch (vr) {
    case VR_U: *v = m->u; return 1;
    case VR_P1: *v = m->x[0]; return 1;
    case VR_P2: *v = m->x[2]; return 1;
    case VR_K1: *v = m->k1; return 1;
    case VR_K2: *v = m->k2; return 1;
    case VR_C1: *v = m->c1; return 1;
    case VR_C2: *v = m->c2; return 1;
    case VR_M1: *v = m->m1; return 1;
    case VR_M2: *v = m->m2; return 1;
    case VR_P1_0: *v = m->p1_0; return 1;
    case VR_FAIL_AT: *v = m->fail_at; return 1;
    case VR_TIME: *v = m->time; return 1;
    default: return 0;
    }
}

static int linear4_set(Linear4 *m, unsigned vr, double v) {
    switch (vr) {
    case VR_U: m->u = v; return 1;
    case VR_K1: m->k1 = v; return 1;
    case VR_K2: m->k2 = v; return 1;
    case VR_C1: m->c1 = v; return 1;
    case VR_C2: m->c2 = v; return 1;
    case VR_M1: m->m1 = v; return 1;
    case VR_M2: m->m2 = v; return 1;
    case VR_P1_0: m->p1_0 = v; return 1;
    case VR_FAIL_AT: m->fail_at = v; return 1;
    default: return 0;
    }
}

#endif
