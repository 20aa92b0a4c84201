// A tank filled by a pump and drained through an orifice (Torricelli's
// law), the plant of examples/tank_level_wifi.toml.
parameter area = 2;       // m^2, the tank's cross-section
parameter c = 0.5;        // m^2.5/s: the outflow is c sqrt(h)
input q;                  // m^3/s, the pump's flow
state h(start = 0.5);     // m, the level
der(h) = (q - c * sqrt(max(h, 0))) / area;
output h;
