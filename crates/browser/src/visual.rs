//! Sans-I/O: Speed Index, visually complete and the filmstrip of one page
//! load, from the frames of the screen Chromium showed during it.
//!
//! Frames: `Browser::run` starts `Page.startScreencast` (JPEG, quality
//! `QUALITY`, at most `MAX_WIDTH`×`MAX_HEIGHT`, i.e. the 1280×800 viewport
//! at 3/8, every second frame: at most 30 a second; the cheaper frames cost
//! the page less, docs/visual.md, "What it costs") before the navigation and acknowledges each
//! `Page.screencastFrame` as it comes. Chromium sends a frame when the
//! compositor produced one that changed the screen, at most one per display
//! frame (60 Hz), and holds the next until the last two are acknowledged: a
//! frame per change of the screen, up to about 60 a second, none while
//! nothing changes. Each frame's `metadata.timestamp` (its swap, wall-clock
//! seconds) is mapped onto the Network events' clock as LCP's time is, and
//! taken as ms after the document's request (`Recorder`).
//!
//! Visual progress as speedline (Lighthouse's) and WebPageTest's
//! visualmetrics compute it: each frame's histogram per colour channel
//! (256 bins each, pixels whose three channels are all at least 249 left
//! out: the page's blank background; speedline's `isWhitePixel`,
//! `client::ink::is_white`, by which the model weighs its images too), and
//! a frame's progress toward the final frame
//! from the first (a white screen at navigation start, whose histogram is
//! empty):
//!
//! ```text
//! progress = Σ_c,v min(|h(v) − h0(v)|, |hN(v) − h0(v)|) / Σ_c,v |hN(v) − h0(v)|
//! ```
//!
//! floored to a whole per cent (a final frame with no non-white pixel: no
//! progress to make, no figures). Speed Index = ∫ (1 − progress) dt from
//! navigation start, a step function (each frame's progress holds until the
//! next); visually complete: the first frame at 100 %.
//!
//! The final (reference) frame is the last frame that shows the page, never
//! a blank one (`Histogram::blank`: one colour, white or grey, over all but
//! `BLANK_SPREAD` of the screen): the screencast's last frame can be the
//! page's background painted before its content (a non-contentful first
//! paint: the grey `body` of run.sitespeed.io's pagexray page) when the
//! content's frame came after the screencast stopped, or a tab going away.
//! Against such a frame every frame of the page would be "complete" at the
//! background's time, before its first contentful paint (issue 47: visually
//! complete 600 ms, FCP 700 ms). Trailing blank frames are dropped, as
//! WebPageTest's visualmetrics (`--endwhite`) ends a video at its first
//! white frame after the start; a load of blank frames only has no figures.

use client::FilmFrame;

/// The screencast's JPEG quality (0–100).
pub(crate) const QUALITY: u32 = 50;
/// The screencast's largest frame, px: half the viewport in each direction.
pub(crate) const MAX_WIDTH: u32 = 480;
pub(crate) const MAX_HEIGHT: u32 = 300;
/// Every how many compositor frames the screencast sends one: 2, at most
/// 30 a second (a frame 33 ms apart at worst, finer than WebPageTest's
/// 10 fps video).
pub(crate) const EVERY_NTH_FRAME: u32 = 2;
/// At most this many frames kept for the filmstrip.
pub(crate) const FILMSTRIP_MAX: usize = 20;
/// A frame is blank when all but this share of its pixels are one colour
/// (`Histogram::blank`): 1 %, a cursor's or a scrollbar's worth of a 480×300
/// frame, while the pagexray page's first screen has ~60 % of its pixels
/// off its grey background.
pub(crate) const BLANK_SPREAD: f64 = 0.01;
/// How far (per channel) a pixel's value may be from the frame's colour and
/// still be of it: the JPEG's noise around a flat colour at `QUALITY`.
const BLANK_TOLERANCE: usize = 4;

/// Per channel (R, G, B), the count of non-white pixels at each value, and
/// the count of all pixels (white ones too).
#[derive(Clone)]
pub(crate) struct Histogram(Box<[[u32; 256]; 3]>, u64);

/// Two frames are the same screen when their non-white pixels are: a white
/// screen of any size is `Histogram::white()`.
impl PartialEq for Histogram {
    fn eq(&self, other: &Histogram) -> bool {
        self.0 == other.0
    }
}

impl Eq for Histogram {}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Histogram({} pixels)", self.pixels())
    }
}

impl Histogram {
    /// A white screen's: empty.
    pub fn white() -> Histogram {
        Histogram(Box::new([[0; 256]; 3]), 0)
    }

    /// Of interleaved 8-bit RGB pixels.
    pub fn of_rgb(rgb: &[u8]) -> Histogram {
        let mut h = Histogram::white();
        for p in rgb.chunks_exact(3) {
            h.1 += 1;
            if client::ink::is_white(p) {
                continue;
            }
            for (c, v) in p.iter().enumerate() {
                h.0[c][*v as usize] += 1;
            }
        }
        h
    }

    /// Of a JPEG (RGB or greyscale); None if it does not decode.
    pub fn of_jpeg(bytes: &[u8]) -> Option<Histogram> {
        let mut d = jpeg_decoder::Decoder::new(bytes);
        let pixels = d.decode().ok()?;
        match d.info()?.pixel_format {
            jpeg_decoder::PixelFormat::RGB24 => Some(Histogram::of_rgb(&pixels)),
            jpeg_decoder::PixelFormat::L8 => {
                let rgb: Vec<u8> = pixels.iter().flat_map(|v| [*v; 3]).collect();
                Some(Histogram::of_rgb(&rgb))
            }
            _ => None,
        }
    }

    /// How many pixels it counts (non-white).
    pub fn pixels(&self) -> u64 {
        self.0[0].iter().map(|n| u64::from(*n)).sum()
    }

    /// Whether the frame is blank: not the page but one flat colour — the
    /// white screen, a background painted before any content, a closing
    /// tab — over all but `BLANK_SPREAD` of its pixels (each channel within
    /// `BLANK_TOLERANCE` of one value; white: all of them ≥ `client::ink::WHITE`). A
    /// histogram of no pixels (`white`) is blank.
    pub fn blank(&self) -> bool {
        let all = self.1.max(self.pixels());
        let least = all as f64 * (1.0 - BLANK_SPREAD);
        let whites = all - self.pixels();
        if whites as f64 >= least {
            return true;
        }
        self.0.iter().all(|channel| {
            let most = (0..256usize)
                .map(|v| {
                    let lo = v.saturating_sub(BLANK_TOLERANCE);
                    let hi = (v + BLANK_TOLERANCE).min(255);
                    channel[lo..=hi].iter().map(|n| u64::from(*n)).sum::<u64>()
                })
                .max()
                .unwrap_or(0);
            most as f64 >= least
        })
    }
}

/// The visual progress (whole per cent, 0–100) of `current` from `initial`
/// toward `target`; None when `target` does not differ from `initial`.
pub(crate) fn progress(
    current: &Histogram,
    initial: &Histogram,
    target: &Histogram,
) -> Option<u32> {
    let (mut matched, mut total) = (0u64, 0u64);
    for c in 0..3 {
        for v in 0..256 {
            let i = i64::from(initial.0[c][v]);
            let now = (i64::from(current.0[c][v]) - i).unsigned_abs();
            let goal = (i64::from(target.0[c][v]) - i).unsigned_abs();
            matched += now.min(goal);
            total += goal;
        }
    }
    (total > 0).then(|| (matched * 100 / total) as u32)
}

/// What the frames of one load give.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Visual {
    pub speed_index_ms: f64,
    pub visually_complete_ms: f64,
    /// Each frame's progress (per cent), in the order given.
    pub progress: Vec<u32>,
}

/// How many of `frames` (ascending in time) are the page's: up to its last
/// frame that is not blank (`Histogram::blank`; the module doc). The frames
/// after it are not the page; 0 when none is.
pub(crate) fn page_frames<T>(frames: &[T], histogram: impl Fn(&T) -> &Histogram) -> usize {
    frames
        .iter()
        .rposition(|f| !histogram(f).blank())
        .map_or(0, |i| i + 1)
}

/// Speed Index and visually complete of `frames` (ms after navigation start,
/// ascending, each ≥ 0, with its histogram), the screen white at 0 ms. The
/// final frame is the last that is not blank; the blank ones after it are
/// left out (`page_frames`), and `progress` has one entry per frame kept.
/// None without frames, or when every frame is blank (nothing to progress
/// to).
pub(crate) fn visual(frames: &[(f64, Histogram)]) -> Option<Visual> {
    let frames = &frames[..page_frames(frames, |(_, h)| h)];
    let (_, target) = frames.last()?;
    let white = Histogram::white();
    let progress: Vec<u32> = frames
        .iter()
        .map(|(_, h)| progress(h, &white, target))
        .collect::<Option<_>>()?;
    let (mut si, mut last_t, mut last_p) = (0.0, 0.0, 0.0);
    let mut complete = None;
    for ((t, _), p) in frames.iter().zip(&progress) {
        si += (t - last_t).max(0.0) * (1.0 - last_p);
        (last_t, last_p) = (*t, f64::from(*p) / 100.0);
        if *p >= 100 && complete.is_none() {
            complete = Some(*t);
        }
    }
    Some(Visual {
        speed_index_ms: si,
        // The final frame is at 100 % of itself.
        visually_complete_ms: complete.unwrap_or(last_t),
        progress,
    })
}

/// The visual progress (whole per cent) of each frame of a filmstrip, from
/// its JPEGs in order, toward the last: as `visual` computes it, since a
/// filmstrip's last frame is the final one (its histogram is the final
/// frame's: no frame after it changed the screen) and each frame's histogram
/// is that of the same JPEG bytes. For `lab::har::write_filmstrip`, which
/// writes it beside the frames (`progress.json`) for the report's curves.
/// None when a frame does not decode, or when the last is blank (`filmstrip`
/// keeps none after the last frame of the page). A filmstrip
/// of more than `FILMSTRIP_MAX` changes leaves frames out: its curve is a
/// coarser step function than the one Speed Index integrates.
pub fn filmstrip_progress(jpegs: &[&[u8]]) -> Option<Vec<u32>> {
    let histograms: Vec<Histogram> = jpegs
        .iter()
        .map(|j| Histogram::of_jpeg(j))
        .collect::<Option<_>>()?;
    let target = histograms.last()?;
    if target.blank() {
        return None;
    }
    let white = Histogram::white();
    histograms
        .iter()
        .map(|h| progress(h, &white, target))
        .collect()
}

/// The filmstrip: of `frames` (time, JPEG, histogram; as for `visual`), each
/// that changed the screen from the one before (the first from white), at
/// most `max`: if more changed, the first and the last and evenly spaced
/// ones between.
pub(crate) fn filmstrip(frames: &[(f64, &[u8], &Histogram)], max: usize) -> Vec<FilmFrame> {
    let white = Histogram::white();
    let mut before = &white;
    let mut changed = Vec::new();
    for (i, (_, _, h)) in frames.iter().enumerate() {
        if *h != before {
            changed.push(i);
        }
        before = h;
    }
    let n = changed.len();
    let picked: Vec<usize> = if n <= max {
        changed
    } else if max <= 1 {
        changed[n - 1..].to_vec()
    } else {
        (0..max).map(|k| changed[k * (n - 1) / (max - 1)]).collect()
    };
    picked
        .into_iter()
        .map(|i| FilmFrame {
            ms: frames[i].0,
            jpeg: frames[i].1.to_vec(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 10×10 screen: `dark` pixels of grey 10, `red` of pure red, the rest white.
    fn screen(dark: usize, red: usize) -> Histogram {
        let mut rgb = Vec::new();
        for i in 0..100 {
            rgb.extend(if i < dark {
                [10, 10, 10]
            } else if i < dark + red {
                [255, 0, 0]
            } else {
                [255, 255, 255]
            });
        }
        Histogram::of_rgb(&rgb)
    }

    #[test]
    fn white_and_near_white_pixels_are_background() {
        let h = Histogram::of_rgb(&[255, 255, 255, 249, 250, 251, 248, 255, 255, 0, 0, 0]);
        assert_eq!(h.pixels(), 2);
        assert_eq!(h.0[0][248], 1);
        assert_eq!(h.0[1][0], 1);
        assert_eq!(screen(0, 0), Histogram::white());
    }

    #[test]
    fn progress_as_speedline() {
        let white = Histogram::white();
        let target = screen(40, 10);
        // Per channel |target − white|: 40 at 10 and 10 at 255 (R) or 0 (G, B):
        // total 150. 20 dark pixels match 20 of each channel's 40: 60.
        assert_eq!(progress(&screen(20, 0), &white, &target), Some(40));
        // Too many dark pixels count only as many as the target has.
        assert_eq!(progress(&screen(60, 0), &white, &target), Some(80));
        assert_eq!(progress(&target, &white, &target), Some(100));
        assert_eq!(progress(&white, &white, &target), Some(0));
        // 1/3 floors to 33.
        assert_eq!(progress(&screen(0, 10), &white, &screen(20, 10)), Some(33));
        // Nothing to progress to.
        assert_eq!(progress(&target, &white, &white), None);
    }

    /// Three frames: still white at 100 ms, half the content at 200 ms, all
    /// of it at 300 ms. SI = 200 ms × 1 + 100 ms × 0.5 = 250 ms.
    #[test]
    fn speed_index_of_three_frames_by_hand() {
        let frames = [
            (100.0, screen(0, 0)),
            (200.0, screen(20, 0)),
            (300.0, screen(40, 0)),
        ];
        let v = visual(&frames).unwrap();
        assert_eq!(v.progress, vec![0, 50, 100]);
        assert_eq!(v.speed_index_ms, 100.0 + 100.0 + 100.0 * 0.5);
        assert_eq!(v.visually_complete_ms, 300.0);
        // The first frame already complete: SI is its time.
        let v = visual(&[(150.0, screen(40, 0)), (400.0, screen(40, 0))]).unwrap();
        assert_eq!((v.speed_index_ms, v.visually_complete_ms), (150.0, 150.0));
    }

    #[test]
    fn a_frame_that_overshoots_then_returns_is_complete_when_first_at_100() {
        // A spinner (red) shown at 100 ms, gone at 250 ms; content at 200 ms.
        let frames = [
            (100.0, screen(0, 30)),
            (200.0, screen(40, 30)),
            (250.0, screen(40, 0)),
        ];
        let v = visual(&frames).unwrap();
        // The red pixels do not count toward a final frame without red;
        // at 200 ms every dark pixel is there: complete by the histogram.
        assert_eq!(v.progress, vec![0, 100, 100]);
        assert_eq!(v.visually_complete_ms, 200.0);
        assert_eq!(v.speed_index_ms, 200.0);
    }

    #[test]
    fn no_frames_or_only_blank_ones_give_none() {
        assert_eq!(visual(&[]), None);
        assert_eq!(visual(&[(10.0, screen(0, 0)), (20.0, screen(0, 0))]), None);
        // A white screen after the page is not its final frame.
        let v = visual(&[(10.0, screen(5, 0)), (20.0, screen(0, 0))]).unwrap();
        assert_eq!((v.visually_complete_ms, v.progress.len()), (10.0, 1));
    }

    /// Chromium's frames as recorded (crates/browser/tests/data/screencast):
    /// the pagexray page's grey background, painted before its content, and
    /// its first screen.
    fn recorded(name: &str) -> Histogram {
        let path = format!(
            "{}/tests/data/screencast/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let jpeg = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        Histogram::of_jpeg(&jpeg).unwrap_or_else(|| panic!("{path}: not a JPEG"))
    }

    #[test]
    fn a_recorded_grey_background_is_blank_and_the_page_is_not() {
        let (grey, page) = (recorded("grey-background.jpg"), recorded("page.jpg"));
        assert!(grey.blank(), "{grey:?}");
        assert!(!page.blank(), "{page:?}");
        // Every pixel counted: 480×267, the headless window's aspect.
        assert_eq!(grey.1, 480 * 267);
        assert!(Histogram::white().blank());
        // Half the screen one colour, half another: not blank.
        let half: Vec<u8> = (0..100)
            .flat_map(|i| if i < 50 { [10; 3] } else { [200; 3] })
            .collect();
        assert!(!Histogram::of_rgb(&half).blank());
        // 1 % off the colour is still blank; 2 % is not.
        let dotted = |off: usize| -> Vec<u8> {
            (0..100)
                .flat_map(|i| if i < off { [10; 3] } else { [200; 3] })
                .collect()
        };
        assert!(Histogram::of_rgb(&dotted(1)).blank());
        assert!(!Histogram::of_rgb(&dotted(2)).blank());
    }

    /// The recorded frames in the orders issue 47's filmstrip showed: the
    /// background, then the page, then the background again (a frame that
    /// is not the page after it). The page is the reference frame: visually
    /// complete at the page's frame, never at a grey one, and Speed Index
    /// between the first paint and it.
    #[test]
    fn a_recorded_screencast_ending_grey_completes_on_the_page() {
        let (grey, page) = (recorded("grey-background.jpg"), recorded("page.jpg"));
        let frames = [
            (600.0, grey.clone()),
            (700.0, page.clone()),
            (800.0, grey.clone()),
            (900.0, grey.clone()),
        ];
        let v = visual(&frames).unwrap();
        assert_eq!(
            v.progress.len(),
            2,
            "the grey frames after the page left out"
        );
        assert_eq!(v.progress[1], 100);
        assert!(v.progress[0] < 100, "the background is not the page: {v:?}");
        assert_eq!(v.visually_complete_ms, 700.0);
        assert!(
            v.speed_index_ms > 600.0 && v.speed_index_ms < 700.0,
            "{v:?}"
        );
        // Before: the last frame (grey) was the reference, and the first
        // grey frame complete at 600 ms, before the page was on screen.
        assert_eq!(progress(&grey, &Histogram::white(), &grey), Some(100));
        // The background alone (the probe whose screencast stopped before
        // its content's frame): no figures rather than wrong ones.
        assert_eq!(visual(&[(1069.0, grey.clone())]), None);
        assert_eq!(
            filmstrip_progress(&[&std::fs::read(format!(
                "{}/tests/data/screencast/grey-background.jpg",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap()]),
            None
        );
    }

    #[test]
    fn a_filmstrips_progress_is_none_for_what_does_not_decode() {
        assert_eq!(filmstrip_progress(&[]), None);
        assert_eq!(filmstrip_progress(&[&b"frame"[..]]), None);
    }

    #[test]
    fn filmstrip_keeps_changes_at_most_max() {
        let hs: Vec<Histogram> = (0..30).map(|i| screen(usize::div_ceil(i, 2), 0)).collect();
        let frames: Vec<(f64, &[u8], &Histogram)> = hs
            .iter()
            .enumerate()
            .map(|(i, h)| (i as f64 * 10.0, &[1u8, 2][..], h))
            .collect();
        // Frame 0 is white (no change from the white start); then a change
        // every other frame: 1, 3, …, 29 (15 changes).
        let all = filmstrip(&frames, 20);
        let times: Vec<f64> = all.iter().map(|f| f.ms).collect();
        assert_eq!(times.len(), 15);
        assert_eq!((times[0], times[14]), (10.0, 290.0));
        let few = filmstrip(&frames, 4);
        let times: Vec<f64> = few.iter().map(|f| f.ms).collect();
        assert_eq!(times, vec![10.0, 90.0, 190.0, 290.0]);
        assert_eq!(few[0].jpeg, vec![1, 2]);
    }
}
