//! The report's Why section (issue 34) as a reader sees it: a small real
//! campaign (icons over https and h2, two RTTs, two repetitions), its
//! report.html opened at `#why` (which shows the Why sections alone) in
//! headless Chromium with no network, and the screenshot decoded: the
//! stacked bars' component colours must cover real areas, and the sections
//! `#why` hides (the HAR phases) must not show. Nothing here depends on
//! how long anything took.

use crate::common::{self, ok, spdylab};
use std::path::Path;
use std::process::Command;

/// The colours of the Why section's components (`report`'s
/// `why::COMPONENT_COLOURS`), and of the HAR phases' `connect`
/// (`rows::PHASES`), which only the phases section draws.
const SETUP: [u8; 3] = [0xfd, 0x8d, 0x3c];
const TRANSFER: [u8; 3] = [0x31, 0x82, 0xbd];
const REQUEST: [u8; 3] = [0x74, 0xc4, 0x76];
const PHASE_CONNECT: [u8; 3] = [0xff, 0x9f, 0x40];

const EXPERIMENT: &str = r#"
name = "why-shot"
sites = ["icons"]
protocols = ["https", "h2"]
reps = 2
warmup = 0
[link]
rtt = ["20ms", "80ms"]
rate = "8mbit"
"#;

/// The pixels of an RGB or RGBA PNG, as RGB triples.
fn pixels(png_path: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let file = std::fs::File::open(png_path).unwrap();
    let mut decoder = png::Decoder::new(file);
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let step = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("{}: {other:?}, not RGB", png_path.display()),
    };
    let rgb = buf[..info.buffer_size()]
        .chunks_exact(step)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    (info.width, info.height, rgb)
}

/// Pixels within 2 of `colour` on every channel.
fn count(pixels: &[[u8; 3]], colour: [u8; 3]) -> usize {
    pixels
        .iter()
        .filter(|p| (0..3).all(|i| p[i].abs_diff(colour[i]) <= 2))
        .count()
}

#[test]
fn the_why_section_renders_its_stacked_components_in_chromium() {
    let Some((dir, out)) = common::chromium_campaign("report-why", EXPERIMENT) else {
        return;
    };
    ok(&spdylab(&["report", out.to_str().unwrap()]));
    let html = out.join("report.html");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains(r#"<section class="why" id="why"><h2 id="why-icons">"#),
        "no Why section"
    );
    assert!(
        !page.contains("carries an explanation"),
        "the probes were not explained"
    );

    let shot = dir.join("why.png");
    let o = Command::new("unshare")
        .args([
            "--net",
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1200,1600",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}#why", html.display()))
        .output()
        .expect("chromium runs");
    assert!(
        o.status.success() && shot.exists(),
        "no screenshot: {}",
        common::describe(&o)
    );
    let (width, height, px) = pixels(&shot);
    assert_eq!((width, height), (1200, 1600));
    let (setup, transfer, request) = (count(&px, SETUP), count(&px, TRANSFER), count(&px, REQUEST));
    let connect = count(&px, PHASE_CONNECT);
    eprintln!(
        "pixels: setup {setup}, transfer {transfer}, request {request}; HAR connect {connect}"
    );
    // Four bars, each with a setup and a transfer segment some tens of
    // pixels tall and ~75 wide: thousands of pixels; a blank or missing
    // section has none (the legend's swatches are 120 each).
    assert!(setup > 500, "setup's colour covers {setup} pixels");
    assert!(transfer > 500, "transfer's colour covers {transfer} pixels");
    // `#why` shows the Why sections alone: the HAR phases' bars are hidden.
    assert!(connect < 20, "the phases section shows: {connect} pixels");
}
