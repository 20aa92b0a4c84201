parameter g = 9.81;
state h(start = 1);
state v;
der(v) = -g *;
der(h) = v;
output h;
