//! The viewer's engine on the headless context: recorded frames (one per pass plus the
//! initial state) whose pixels are the colormap of the textures' contents.

use super::colormap;
use super::record::{Recording, frame_name, record};
use super::render::{FrameLayout, ViewState};
use super::session::{Operation, Problem, Session};
use symraster::draw::Kernel;
use symraster::{Format, Gpu, InputError, Layout, Method, assembly_plan, cholesky_plan, reference};

const SIZE: (u32, u32) = (640, 400);
const OUTLINE: [u8; 3] = [255, 48, 48];
const HIGHLIGHT: [u8; 3] = [255, 255, 255];

fn recording(operation: Operation, m: usize, seed: u64) -> Recording {
    Recording {
        operation,
        format: Format::Full,
        method: Method::Faithful,
        m,
        seed,
        size: SIZE,
        gif: None,
        gif_delay_ms: 100,
    }
}

fn pixel(image: &image::RgbaImage, (x, y): (u32, u32)) -> [u8; 3] {
    let p = image.get_pixel(x, y).0;
    [p[0], p[1], p[2]]
}

#[test]
fn recorder_writes_one_frame_per_pass_plus_the_initial_state() {
    let gpu = Gpu::new().unwrap();
    for (operation, m, passes) in [
        (
            Operation::Cholesky,
            5,
            cholesky_plan(Layout::new(5, Format::Full), Method::Faithful)
                .unwrap()
                .passes
                .len(),
        ),
        (
            Operation::Assembly,
            3,
            assembly_plan(Layout::new(3, Format::Full), 6, Method::Faithful)
                .unwrap()
                .passes
                .len(),
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut rec = recording(operation, m, 3);
        rec.gif = Some(dir.path().join("run.gif"));
        let done = record(&gpu, &rec, dir.path()).unwrap();
        assert_eq!(done.passes, passes);
        assert_eq!(done.frames.len(), passes + 1);
        let mut pngs: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".png"))
            .collect();
        pngs.sort();
        let expected: Vec<_> = (0..=passes).map(frame_name).collect();
        assert_eq!(pngs, expected, "{operation}");
        let gif = image::open(dir.path().join("run.gif")).unwrap();
        assert_eq!((gif.width(), gif.height()), SIZE);
        let file =
            std::io::BufReader::new(std::fs::File::open(dir.path().join("run.gif")).unwrap());
        let decoder = image::codecs::gif::GifDecoder::new(file).unwrap();
        use image::AnimationDecoder;
        assert_eq!(decoder.into_frames().count(), passes + 1);
        // The NaN poisoning must not leak into the result: it matches the CPU reference.
        let error = done.error.unwrap();
        assert!(error < 1e-5, "{operation} m={m}: relative error {error}");
    }
}

/// Every texel of every panel in frame `p` has the colour of its value, except where the
/// pass outline or the highlight frame is drawn over it.
fn check_frame(
    gpu: &Gpu,
    format: Format,
    operation: Operation,
    m: usize,
    seed: u64,
    p: usize,
    frame: &image::RgbaImage,
) {
    let mut session = Session::new(gpu, operation, format, Problem::random(m, seed)).unwrap();
    session.seek(p).unwrap();
    let snapshot = session.snapshot().unwrap();
    let layout = FrameLayout::new(&snapshot, &ViewState::default(), SIZE);
    let (mut matched, mut covered) = (0, 0);
    for place in &layout.places {
        let panel = &snapshot.panels[place.panel];
        let range = panel
            .range
            .unwrap_or(colormap::Range { min: 0.0, max: 1.0 });
        for y in 0..panel.height {
            for x in 0..panel.width {
                let want =
                    colormap::texel_colour(range, panel.value(x, y), panel.holds_entry(x, y), x, y);
                let got = pixel(frame, place.centre_pixel(x, y));
                if got == want {
                    matched += 1;
                } else {
                    assert!(
                        got == OUTLINE || got == HIGHLIGHT,
                        "{operation} frame {p}: {} texel ({x}, {y}) = {} is drawn {got:?}, \
                         expected {want:?}",
                        panel.name,
                        panel.value(x, y)
                    );
                    covered += 1;
                }
            }
        }
    }
    assert!(
        matched > 10 * covered.max(1),
        "{matched} matched, {covered} under outlines"
    );
}

#[test]
fn frame_pixels_are_the_colormap_of_the_texture_contents() {
    let gpu = Gpu::new().unwrap();
    let (m, seed) = (6, 11);
    for format in [Format::Full, Format::Packed] {
        for operation in [Operation::Cholesky, Operation::Assembly] {
            let dir = tempfile::tempdir().unwrap();
            let rec = Recording {
                format,
                ..recording(operation, m, seed)
            };
            let done = record(&gpu, &rec, dir.path()).unwrap();
            let last = done.passes;
            for p in [0, 1, 4, last / 2, last] {
                let frame = image::open(&done.frames[p]).unwrap().to_rgba8();
                assert_eq!(frame.dimensions(), SIZE);
                check_frame(&gpu, format, operation, m, seed, p, &frame);
            }
        }
    }
}

#[test]
fn initial_frame_shows_unwritten_texels_as_nan_and_final_frame_the_reference() {
    let gpu = Gpu::new().unwrap();
    let (m, seed) = (7, 5);
    let dir = tempfile::tempdir().unwrap();
    let done = record(&gpu, &recording(Operation::Cholesky, m, seed), dir.path()).unwrap();
    let problem = Problem::random(m, seed);

    // Before any pass the target holds only NaN: magenta at entries, grey checker elsewhere.
    let session = Session::new(&gpu, Operation::Cholesky, Format::Full, problem.clone()).unwrap();
    let first = session.snapshot().unwrap();
    assert!(first.panels[1].data.iter().all(|v| v.is_nan()));
    let frame = image::open(&done.frames[0]).unwrap().to_rgba8();
    let layout = FrameLayout::new(&first, &ViewState::default(), SIZE);
    let target = layout.thumbnail(1).unwrap();
    for (x, y) in [(0, 0), (2, 5), (6, 6)] {
        assert_eq!(
            pixel(&frame, target.centre_pixel(x, y)),
            colormap::NAN_COLOUR
        );
    }
    for (x, y) in [(1, 0), (6, 2)] {
        assert_eq!(
            pixel(&frame, target.centre_pixel(x, y)),
            colormap::UNUSED_COLOURS[(x + y) % 2]
        );
    }

    // After the last pass the large view shows L; compare with the CPU f64 factor, allowing one
    // colour level for f32 rounding.
    let mut session = session;
    session.seek(usize::MAX).unwrap();
    let last = session.snapshot().unwrap();
    assert_eq!(last.last_pass.as_ref().unwrap().kernel, Kernel::SquareRoot);
    let frame = image::open(done.frames.last().unwrap()).unwrap().to_rgba8();
    let layout = FrameLayout::new(&last, &ViewState::default(), SIZE);
    let large = layout.large().unwrap();
    let panel = &last.panels[large.panel];
    let range = panel.range.unwrap();
    let l = reference::cholesky(&problem.c.to_f64()).unwrap();
    let levels = (colormap::LEVELS - 1) as f32;
    let layout_of = Layout::new(m, Format::Full);
    for i in 0..m {
        for j in 0..=i {
            if i == m - 1 && j == m - 1 {
                continue; // under the outline of the last square root
            }
            let (x, y) = layout_of.texel_of(i, j);
            let got = pixel(&frame, large.centre_pixel(x, y));
            let t = range.normalize(l[(i, j)] as f32);
            let near: Vec<_> = [-1.0, 0.0, 1.0]
                .iter()
                .map(|d| colormap::viridis(t + d / levels))
                .collect();
            assert!(
                near.contains(&got),
                "L({i}, {j}) = {}: pixel {got:?}",
                l[(i, j)]
            );
        }
    }
}

#[test]
fn outline_is_on_the_texture_the_pass_wrote() {
    let gpu = Gpu::new().unwrap();
    let mut session = Session::new(
        &gpu,
        Operation::Assembly,
        Format::Full,
        Problem::random(4, 2),
    )
    .unwrap();
    // Column scaling writes b; outer-product addition writes C_T, which the swap makes C_S.
    session.step().unwrap();
    let s = session.snapshot().unwrap();
    assert_eq!(s.panels[s.outline.as_ref().unwrap().panel].name, "b");
    assert!(s.panels[3].data.iter().all(|v| v.is_finite()));
    session.step().unwrap();
    let s = session.snapshot().unwrap();
    let written = &s.panels[s.outline.as_ref().unwrap().panel];
    assert_eq!(written.name, "C_S");
    // The written texture holds A(:,0)·d(0)·A(:,0)ᵀ in its lower triangle.
    let p = Problem::random(4, 2);
    for i in 0..4 {
        for j in 0..=i {
            let want = p.a[(i, 0)] * p.d[0] * p.a[(j, 0)];
            let got = written.value(j, i);
            assert!(
                (got - want).abs() <= 1e-6 * want.abs().max(1.0),
                "({i},{j}) {got} vs {want}"
            );
        }
    }
    // Rewinding re-runs from the start to the same state.
    session.seek(1).unwrap();
    assert_eq!(session.position(), 1);
    let back = session.snapshot().unwrap();
    assert_eq!(back.panels[back.outline.as_ref().unwrap().panel].name, "b");
}

#[test]
fn packed_view_starts_or_says_unsupported() {
    let gpu = Gpu::new().unwrap();
    for operation in [Operation::Assembly, Operation::Cholesky] {
        match Session::new(&gpu, operation, Format::Packed, Problem::random(5, 1)) {
            Ok(mut s) => {
                s.seek(usize::MAX).unwrap();
                let e = s.result_error().unwrap();
                assert!(e < 1e-5, "packed {operation}: {e}");
                // Every texel of the packed texture is described with its entry or as unused.
                let snap = s.snapshot().unwrap();
                let text = snap.panels[0].describe(0, 0);
                assert!(text.contains("texel (0, 0)"), "{text}");
            }
            Err(symraster::Error::Input(InputError::Unsupported(msg))) => {
                assert!(msg.contains("packed"), "{msg}")
            }
            Err(e) => panic!("packed {operation}: unexpected error {e}"),
        }
    }
}

/// Blocked runs in the viewer, both blockings and formats: each panel of the pair shows every
/// lower entry of C or L exactly once (texels opened into their blocks), the first frame's
/// target is all NaN, the last source holds the result, and stepping to the end matches the
/// CPU reference.
#[test]
fn blocked_sessions_show_every_entry_once_and_end_at_the_reference() {
    use super::session::PanelKind;
    use symraster::{Blocking, Options};
    let gpu = Gpu::new().unwrap();
    for blocking in Blocking::ALL {
        for format in [Format::Full, Format::Packed] {
            for operation in [Operation::Cholesky, Operation::Assembly] {
                for m in [3, 17] {
                    let options = Options::new(format)
                        .method(Method::Blocked)
                        .blocking(blocking);
                    let what = format!("{operation} {format} {blocking} m={m}");
                    let mut session =
                        Session::new(&gpu, operation, options, Problem::random(m, 2)).unwrap();
                    let first = session.snapshot().unwrap();
                    assert!(
                        first.status().contains(&format!("blocked {blocking}")),
                        "{what}"
                    );
                    let pair: Vec<_> = first
                        .panels
                        .iter()
                        .filter(|p| matches!(p.kind, PanelKind::Matrix { .. }))
                        .collect();
                    assert_eq!(pair.len(), 2, "{what}");
                    for panel in &pair {
                        let PanelKind::Matrix { entries, .. } = &panel.kind else {
                            unreachable!()
                        };
                        let mut seen: Vec<_> = entries.iter().flatten().copied().collect();
                        seen.sort();
                        let want: Vec<_> =
                            (0..m).flat_map(|i| (0..=i).map(move |j| (i, j))).collect();
                        assert_eq!(seen, want, "{what}: {}", panel.name);
                    }
                    let target = pair.iter().find(|p| p.name.ends_with("_T")).unwrap();
                    assert!(target.data.iter().all(|v| v.is_nan()), "{what}");
                    session.seek(session.pass_count()).unwrap();
                    let last = session.snapshot().unwrap();
                    let error = last.error.unwrap();
                    assert!(error < 1e-5, "{what}: relative error {error}");
                    // The source shows the result at its entries.
                    let result = match operation {
                        Operation::Cholesky => {
                            reference::cholesky(&session.problem().c.to_f64()).unwrap()
                        }
                        Operation::Assembly => {
                            let p = session.problem();
                            let d: Vec<f64> = p.d.iter().map(|&x| x as f64).collect();
                            reference::assemble(&p.a.to_f64(), &d)
                        }
                    };
                    let source = last.panels.iter().find(|p| p.name.ends_with("_S")).unwrap();
                    let PanelKind::Matrix { entries, .. } = &source.kind else {
                        unreachable!()
                    };
                    for (p, entry) in entries.iter().enumerate() {
                        if let Some((i, j)) = entry {
                            let (got, want) = (source.data[p] as f64, result[(*i, *j)]);
                            assert!(
                                (got - want).abs() <= 1e-4 * (1.0 + want.abs()),
                                "{what}: ({i}, {j}) shows {got}, expected {want}"
                            );
                        }
                    }
                    // The last pass's outline is on a panel of the snapshot.
                    let outline = last.outline.as_ref().unwrap();
                    assert!(outline.panel < last.panels.len(), "{what}");
                }
            }
        }
    }
}
