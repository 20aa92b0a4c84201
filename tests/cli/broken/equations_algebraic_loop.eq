state x;
der(x) = a;
a = b - x;
b = 2 * a;
output x;
