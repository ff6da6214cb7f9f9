//! The f64 ↔ f32 hand-over of the sign function and the Lyapunov solver
//! (`Inverter::{narrow, widen, symmetrize, symmetric_residual}`, glsl/inverse/convert.comp) against the same
//! arithmetic on the CPU: shapes around the 16 x 16 work group, transposed views and views with
//! offsets and padded rows, outputs poisoned with NaN (entries outside the view must stay NaN),
//! the input unread when β = 0, and the Σ out² it returns.

use crate::common;

use symraster::gl::{Buffer, BufferTarget, BufferUsage};
use symraster::inverse::Inverter;
use symraster::inverse::kernels::double::{DoubleOperand, DoubleSquare};
use symraster::tiled::{Operand, View};

/// Values in [−1, 1) from a seeded generator, some far outside f32's range when `wide`.
fn values(len: usize, seed: u64, wide: bool) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(1);
    (0..len)
        .map(|k| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = (s >> 11) as f64 / (1u64 << 52) as f64 - 1.0;
            if wide {
                v * 2f64.powi((k % 7) as i32 * 40 - 120)
            } else {
                v
            }
        })
        .collect()
}

fn storage<T: symraster::gl::Pod>(inv: &Inverter, contents: &[T]) -> Buffer<T> {
    let mut b: Buffer<T> = Buffer::uninitialized(
        inv.context(),
        BufferTarget::Storage,
        BufferUsage::Dynamic,
        contents.len(),
    )
    .unwrap();
    b.upload(contents).unwrap();
    b
}

/// A view of rows x cols at `offset`, row-major with `pad` entries after each row, or (when
/// `transposed`) the transpose of such a cols x rows block.
fn view(rows: usize, cols: usize, offset: usize, pad: usize, transposed: bool) -> (View, usize) {
    if transposed {
        let stored = View {
            offset,
            rows: cols,
            cols: rows,
            rs: rows + pad,
            cs: 1,
        };
        (stored.t(), offset + cols * (rows + pad))
    } else {
        let v = View {
            offset,
            rows,
            cols,
            rs: cols + pad,
            cs: 1,
        };
        (v, offset + rows * (cols + pad))
    }
}

fn at(v: &View, i: usize, j: usize) -> usize {
    v.offset + i * v.rs + j * v.cs
}

#[test]
fn narrow_and_widen_match_the_cpu_at_shapes_around_the_group() {
    let gpu = common::gpu();
    let inv = Inverter::new(&gpu).unwrap();
    for (rows, cols) in [(1, 1), (2, 3), (15, 17), (16, 16), (33, 31), (40, 1)] {
        for (transposed, wide) in [(false, false), (true, false), (true, true)] {
            let (dv, dlen) = view(rows, cols, 3, 2, false);
            let (sv, slen) = view(rows, cols, 5, 1, transposed);
            let d = values(dlen, (rows * 100 + cols) as u64, wide);
            let alpha = if wide { 2f64.powi(-10) } else { -0.75 };
            // Narrow: f32(α·d) into a NaN-poisoned single buffer.
            let dbuf = storage(&inv, &d);
            let sbuf = storage(&inv, &vec![f32::NAN; slen]);
            inv.narrow(
                Operand::new(&sbuf, sv),
                DoubleOperand {
                    buffer: &dbuf,
                    view: dv,
                },
                alpha,
            )
            .unwrap();
            let got = sbuf.download_range(0, slen).unwrap();
            let mut inside = vec![false; slen];
            for i in 0..rows {
                for j in 0..cols {
                    let k = at(&sv, i, j);
                    inside[k] = true;
                    assert_eq!(
                        got[k],
                        (alpha * d[at(&dv, i, j)]) as f32,
                        "narrow ({i}, {j}) of {rows}x{cols}"
                    );
                }
            }
            assert!(
                got.iter().zip(&inside).all(|(v, &i)| i || v.is_nan()),
                "narrow wrote outside its view"
            );
            // Widen with β: out = β·in + α·single into a NaN-poisoned out.
            let single: Vec<f32> = values(slen, 7 + rows as u64, false)
                .iter()
                .map(|&v| v as f32)
                .collect();
            let sbuf = storage(&inv, &single);
            let input = values(dlen, 11 + cols as u64, false);
            let ibuf = storage(&inv, &input);
            let obuf = storage(&inv, &vec![f64::NAN; dlen]);
            let out = DoubleOperand {
                buffer: &obuf,
                view: dv,
            };
            let sum = inv
                .widen(out, Operand::new(&sbuf, sv), alpha, Some((0.5, &ibuf)))
                .unwrap();
            let got = obuf.download_range(0, dlen).unwrap();
            let mut want_sum = 0.0;
            for i in 0..rows {
                for j in 0..cols {
                    let k = at(&dv, i, j);
                    let want = 0.5 * input[k] + alpha * f64::from(single[at(&sv, i, j)]);
                    want_sum += want * want;
                    assert!(
                        (got[k] - want).abs() <= 1e-15 * want.abs().max(1e-300),
                        "widen ({i}, {j}): {} against {want}",
                        got[k]
                    );
                }
            }
            assert!(
                (sum - want_sum).abs() <= 1e-12 * want_sum.max(1e-300),
                "Σ out² {sum} against {want_sum}"
            );
            // β = 0: the input (NaN here) is not read.
            let nan = storage(&inv, &vec![f64::NAN; dlen]);
            let sum = inv.widen(out, Operand::new(&sbuf, sv), 1.0, None).unwrap();
            assert!(sum.is_finite());
            let sum2 = inv
                .widen(out, Operand::new(&sbuf, sv), 1.0, Some((0.0, &nan)))
                .unwrap();
            assert_eq!(sum, sum2);
            let got = obuf.download_range(0, dlen).unwrap();
            for i in 0..rows {
                for j in 0..cols {
                    assert_eq!(got[at(&dv, i, j)], f64::from(single[at(&sv, i, j)]));
                }
            }
        }
    }
}

#[test]
fn symmetrize_averages_both_triangles_in_place() {
    let gpu = common::gpu();
    let inv = Inverter::new(&gpu).unwrap();
    for n in [1, 2, 3, 16, 17, 45] {
        let x = values(n * n, n as u64, false);
        let mut sq = DoubleSquare::new(&inv, "a test square", n).unwrap();
        sq.buffer.upload(&x).unwrap();
        inv.symmetrize(&sq).unwrap();
        let got = sq.download().unwrap();
        for i in 0..n {
            for j in 0..n {
                let want = if i == j {
                    x[i * n + i]
                } else {
                    0.5 * (x[i * n + j] + x[j * n + i])
                };
                assert_eq!(got[(i, j)], want, "({i}, {j}) of {n}");
            }
        }
    }
}

/// The Lyapunov residual of a symmetric Q finished in place from R = Q − A·X: R + Rᵀ − Q, both
/// triangles, exactly (the same three f64 terms as the CPU's, in the same order), and Σ R² over
/// the whole square; Q unchanged.
#[test]
fn symmetric_residual_adds_the_transpose_and_removes_q() {
    let gpu = common::gpu();
    let inv = Inverter::new(&gpu).unwrap();
    for n in [1, 2, 3, 16, 17, 45] {
        let r = values(n * n, 7 + n as u64, false);
        let q0 = values(n * n, 90 + n as u64, false);
        let q: Vec<f64> = (0..n * n)
            .map(|k| {
                let (i, j) = (k / n, k % n);
                q0[i.max(j) * n + i.min(j)]
            })
            .collect();
        let mut rs = DoubleSquare::new(&inv, "a test residual", n).unwrap();
        rs.buffer.upload(&r).unwrap();
        let mut qs = DoubleSquare::new(&inv, "a test Q", n).unwrap();
        qs.buffer.upload(&q).unwrap();
        let sum = inv.symmetric_residual(&rs, &qs).unwrap();
        let got = rs.download().unwrap();
        let mut want_sum = 0.0;
        for i in 0..n {
            for j in 0..n {
                let (a, b) = (i.max(j), i.min(j));
                let want = r[a * n + b] + r[b * n + a] - q[a * n + b];
                assert_eq!(got[(i, j)], want, "({i}, {j}) of {n}");
                want_sum += want * want;
            }
        }
        assert!(
            (sum - want_sum).abs() <= 1e-12 * want_sum,
            "n {n}: Σ R² {sum} against {want_sum}"
        );
        assert_eq!(qs.download().unwrap().as_slice(), &q[..], "Q changed");
    }
}
