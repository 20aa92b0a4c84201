// The bouncing ball in the equation language (examples/bouncing_ball_equations.toml).
// Thrown up at 15 m/s from 10 m; each impact with the floor is located
// inside its step and reverses the speed, scaled by the restitution e.
parameter g = 9.81;       // m/s^2
parameter e = 0.8;        // coefficient of restitution
parameter m = 1;          // kg, scales the input force
input force;              // N, upward (the loop's actuator)
state h(start = 10);      // m
state v(start = 15);      // m/s
der(h) = v;
der(v) = a;
a = -g + force / m;       // algebraic variables may come in any order
output h;
output energy = 0.5 * m * v^2 + m * g * h;
when h < 0 then h = 0, v = -e * pre(v);
