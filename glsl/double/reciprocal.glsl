// reciprocal(p): 1/p within an ulp or so, float's reciprocal refined by two Newton steps in
// f64 (a double division is a long instruction sequence on a GPU, and a factor's columns wait
// on theirs one after another); p outside float's comfortable range, or not a number, is
// divided. Prepended to the f64 Cholesky's kernels (src/double/kernels.rs).
double reciprocal(double p) {
    double m = abs(p);
    if (!(m >= 1e-30lf && m <= 1e30lf)) return 1.0lf / p;
    double r = double(1.0 / float(p));
    r = fma(r, fma(-p, r, 1.0lf), r);
    return fma(r, fma(-p, r, 1.0lf), r);
}
