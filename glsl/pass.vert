#version 330 core
// Every pass: the vertex V in texels of the viewport, with T0 and T1 handed to the rasterizer
// to interpolate (the paper's TEXCOORD0 and TEXCOORD1).
layout(location = 0) in vec2 position;
layout(location = 1) in vec3 t0;
layout(location = 2) in vec2 t1;
uniform vec2 viewport;
out vec3 T0;
out vec2 T1;
void main() {
    T0 = t0;
    T1 = t1;
    gl_Position = vec4(position / viewport * 2.0 - 1.0, 0.0, 1.0);
}
