//! The blocked method's pass-coverage check, shared by its full- and packed-format tests.

use std::collections::BTreeSet;
use symraster::execution::Execution;
use symraster::geometry::Pass;
use symraster::gl::Rgba32F;

/// Runs every pass of a blocked (RGBA32F) run with its target poisoned with NaN first: the texels that come out not NaN
/// must be exactly `intended(pass)`, with all four entries written. The rest is restored.
pub fn run_with_poisoned_blocks(
    run: &mut Execution<'_, Rgba32F>,
    intended: impl Fn(&Pass) -> BTreeSet<(usize, usize)>,
) {
    let mut last_drawn: Option<Pass> = None;
    while let Some(pass) = run.next_pass().cloned() {
        let target = run.target_of(&pass).unwrap();
        let w = target.width();
        let before = target.download().unwrap();
        target.fill([f32::NAN; 4]).unwrap();
        run.step().unwrap();
        let target = if pass.swap_after {
            run.pair().source().texture()
        } else {
            run.target_of(&pass).unwrap()
        };
        let after = target.download().unwrap();
        let written: BTreeSet<(usize, usize)> = (0..after.len())
            .filter(|&p| after[p].iter().any(|v| !v.is_nan()))
            .map(|p| (p % w, p / w))
            .collect();
        for &(x, y) in &written {
            assert!(
                after[y * w + x].iter().all(|v| !v.is_nan()),
                "({x}, {y}) partly"
            );
        }
        let drawn = if pass.kernel.is_copy() {
            last_drawn.clone().expect("a copy follows a pass")
        } else {
            pass.clone()
        };
        assert_eq!(
            written,
            intended(&drawn),
            "m={}: {} pass at step {} wrote the wrong texels",
            run.layout().order(),
            pass.kernel.name(),
            pass.step
        );
        let merged: Vec<[f32; 4]> = after
            .iter()
            .zip(&before)
            .map(|(a, b)| if a[0].is_nan() { *b } else { *a })
            .collect();
        target.upload(&merged).unwrap();
        if !pass.kernel.is_copy() {
            last_drawn = Some(pass);
        }
    }
}
