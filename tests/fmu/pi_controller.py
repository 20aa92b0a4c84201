"""A PI controller written in Python and exported as an FMU by pythonfmu:
the Python-controller path of docs/scenario.md ("FMU plants and controllers").

Each do_step is one sampling interval that ends at the computation time:
netloop sets the measurement y and reference r of that time, then steps, so
u = kp * e + ki * (sum of e * interval), with e = r - y of the step's end.
"""
from pythonfmu import Fmi2Causality, Fmi2Slave, Fmi2Variability, Real


class PiController(Fmi2Slave):
    author = "netloop tests"
    description = "Discrete PI controller (backward Euler integral)"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.y = 0.0
        self.r = 0.0
        self.u = 0.0
        self.kp = 2.0
        self.ki = 1.0
        self.integral = 0.0
        self.register_variable(Real("y", causality=Fmi2Causality.input))
        self.register_variable(Real("r", causality=Fmi2Causality.input))
        self.register_variable(Real("u", causality=Fmi2Causality.output))
        self.register_variable(Real("kp", causality=Fmi2Causality.parameter, variability=Fmi2Variability.tunable))
        self.register_variable(Real("ki", causality=Fmi2Causality.parameter, variability=Fmi2Variability.tunable))

    def do_step(self, current_time, step_size):
        e = self.r - self.y
        self.integral += self.ki * e * step_size
        self.u = self.kp * e + self.integral
        return True
