//! Mixed precision: an inverse from the f32 GPU polished in f64 on the CPU by Newton-Schulz
//! steps X ← X + X(I − AX). Each step squares the residual R = I − AX, so from an f32 inverse
//! (‖R‖ ≈ κ(A)·u₃₂) double accuracy (‖R‖ ≈ κ(A)·u₆₄) takes one or two steps when κ(A)·u₃₂ is
//! well below 1. It is used only when ‖R‖_F < 1/2 at the start (else the iteration would
//! diverge or gain too little: the f32 inverse is returned as is, `refined` false) and stops
//! when the residual no longer halves. Each step costs 4s³ flops in f64 on the CPU (faer).

use crate::cpu::{from_faer, to_faer};
use crate::matrix::Matrix;
use faer::Mat;

/// A refined inverse.
#[derive(Clone, Debug)]
pub struct Refined {
    /// The inverse.
    pub x: Matrix<f64>,
    /// ‖I − AX‖_F before each step and after the last.
    pub residuals: Vec<f64>,
    /// Whether any step was taken (the starting residual was below 1/2).
    pub refined: bool,
    /// Why X is the f64 CPU inverse (faer), refined, instead of the GPU's: the f32 inverse
    /// failed (`invert_f64`); `None`: X is the GPU's.
    pub fallback: Option<String>,
}

fn residual(a: &Mat<f64>, x: &Mat<f64>) -> (Mat<f64>, f64) {
    let n = a.nrows();
    let r = Mat::<f64>::identity(n, n) - a * x;
    let norm = r.norm_l2();
    (r, norm)
}

/// Refines `x` ≈ `a`⁻¹ by at most `max_steps` Newton-Schulz steps in f64.
pub fn refine_inverse(a: &Matrix<f64>, x: &Matrix<f64>, max_steps: usize) -> Refined {
    let fa = to_faer(a);
    let mut fx = to_faer(x);
    let (mut r, mut norm) = residual(&fa, &fx);
    let mut residuals = vec![norm];
    let mut refined = false;
    if norm < 0.5 {
        for _ in 0..max_steps {
            let next = &fx + &fx * &r;
            let (r_next, norm_next) = residual(&fa, &next);
            if norm_next.is_nan() || norm_next >= norm {
                break;
            }
            refined = true;
            residuals.push(norm_next);
            let halves = norm_next <= 0.5 * norm;
            fx = next;
            r = r_next;
            norm = norm_next;
            if !halves {
                break;
            }
        }
    }
    Refined {
        x: from_faer(&fx),
        residuals,
        refined,
        fallback: None,
    }
}
