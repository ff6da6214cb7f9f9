// Copy: the pixel's value from the other texture of the ping-pong pair (Algorithm 5).
uniform sampler2D L;
void main() {
    result = fetch(L, gl_FragCoord.xy);
}
