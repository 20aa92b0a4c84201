/* The bouncing ball of the FMU tests, shared by its FMI 2.0 and FMI 3.0
 * Model Exchange wrappers (bouncing_ball_fmi2.c, bouncing_ball_fmi3.c).
 *
 * States h (height, m) and v (velocity, m/s): der(h) = v, der(v) = f - g,
 * f an input (acceleration). A state event (event indicator z = h) bounces
 * the ball: h = 0, v = -e v; below v_min it comes to rest (z = 1, no more
 * motion). A time event at t_kick (when t_kick >= 0) adds kick to v. */
#ifndef BOUNCING_BALL_H
#define BOUNCING_BALL_H

#include <string.h>

/* Value references, as in both modelDescription.xml files; VR_TIME and
 * VR_Z only FMI 3.0's (the FMI 2.0 FMU has the first VR_TIME of them). */
enum { VR_H, VR_DER_H, VR_V, VR_DER_V, VR_G, VR_E, VR_V_MIN, VR_F, VR_T_KICK, VR_KICK, VR_TIME, VR_Z, N_VR };

typedef struct {
    double r[N_VR];
    double time;
    int kicked, resting;
} Model;

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

/* The event iteration: the kick when its time has come, the bounce when
 * the ball is at or below the floor moving down. Returns whether the
 * continuous states changed. */
static int handle_events(Model *m) {
    int changed = 0;
    if (!m->kicked && m->r[VR_T_KICK] >= 0.0 && m->time >= m->r[VR_T_KICK]) {
        m->kicked = 1;
        m->r[VR_V] += m->r[VR_KICK];
        if (m->r[VR_KICK] > 0.0) m->resting = 0;
        changed = 1;
    }
    if (!m->resting && m->r[VR_H] <= 0.0 && m->r[VR_V] < 0.0) {
        m->r[VR_H] = 0.0;
        m->r[VR_V] = -m->r[VR_E] * m->r[VR_V];
        if (m->r[VR_V] < m->r[VR_V_MIN]) {
            m->r[VR_V] = 0.0;
            m->resting = 1;
        }
        changed = 1;
    }
    return changed;
}

/* Whether a time event is still ahead (the kick), and when (else 0). */
static int next_event_time(const Model *m, double *t) {
    int defined = !m->kicked && m->r[VR_T_KICK] >= 0.0;
    *t = defined ? m->r[VR_T_KICK] : 0.0;
    return defined;
}

/* The continuous states x = [h, v]; 0 when n is not 2. */
static int set_states(Model *m, const double x[], size_t n) {
    if (n != 2) return 0;
    m->r[VR_H] = x[0];
    m->r[VR_V] = x[1];
    return 1;
}

static int get_states(const Model *m, double x[], size_t n) {
    if (n != 2) return 0;
    x[0] = m->r[VR_H];
    x[1] = m->r[VR_V];
    return 1;
}

/* Their derivatives [der(h), der(v)]; 0 when n is not 2. */
static int get_derivatives(Model *m, double dx[], size_t n) {
    if (n != 2) return 0;
    calculate(m);
    dx[0] = m->r[VR_DER_H];
    dx[1] = m->r[VR_DER_V];
    return 1;
}

#endif
