//! Accuracy-vs-memory curves with plotters: one panel per metric, one line per sketch,
//! PNG (bitmap backend) or SVG by the file extension.
//!
//! Text needs a font: plotters is built with its pure-Rust `ab_glyph` renderer, which has
//! no font of its own, so a TrueType font is loaded at run time from `$SMARTNIC_FONT` or
//! the usual system locations (DejaVu, Liberation, Lato, Noto). Without one the error says
//! how to fix it.

use std::path::Path;

use anyhow::{bail, Context};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::EvalRow;
use crate::sketch::SketchKind;

const FONT_PATHS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/lato/Lato-Regular.ttf",
    "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
];

/// Registers a sans-serif font with plotters once; returns where it came from.
fn ensure_font() -> anyhow::Result<&'static str> {
    static FONT: std::sync::OnceLock<Result<String, String>> = std::sync::OnceLock::new();
    let r = FONT.get_or_init(|| {
        let env = std::env::var("SMARTNIC_FONT").ok();
        let candidates = env.iter().map(String::as_str).chain(FONT_PATHS.iter().copied());
        for p in candidates {
            if let Ok(bytes) = std::fs::read(p) {
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
                    return Ok(p.to_string());
                }
            }
        }
        Err("no TrueType font found for plot labels: install one (apt-get install fonts-dejavu-core) \
             or point SMARTNIC_FONT at a .ttf file"
            .to_string())
    });
    match r {
        Ok(p) => Ok(p.as_str()),
        Err(e) => bail!("{e}"),
    }
}

/// True for metrics where higher is better (drawn on a linear axis).
fn is_score(metric: &str) -> bool {
    metric.ends_with("_f1")
        || metric.ends_with("_pr")
        || metric.ends_with("_rr")
        || metric.ends_with("_valid")
}

/// Draws `metrics` of `rows` into `path` (`.png` or `.svg`).
pub fn plot(rows: &[EvalRow], metrics: &[&str], path: &Path) -> anyhow::Result<()> {
    if metrics.is_empty() || rows.is_empty() {
        bail!("nothing to plot");
    }
    ensure_font()?;
    let cols = metrics.len().min(3);
    let nrows = metrics.len().div_ceil(cols);
    let size = (480 * cols as u32, 360 * nrows as u32);
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    match ext.as_str() {
        "png" => {
            let root = BitMapBackend::new(path, size).into_drawing_area();
            draw(&root, rows, metrics, nrows, cols)?;
            root.present().with_context(|| format!("writing {}", path.display()))?;
        }
        "svg" => {
            let root = SVGBackend::new(path, size).into_drawing_area();
            draw(&root, rows, metrics, nrows, cols)?;
            root.present().with_context(|| format!("writing {}", path.display()))?;
        }
        _ => bail!("--plot wants a .png or .svg file name, got {}", path.display()),
    }
    Ok(())
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    rows: &[EvalRow],
    metrics: &[&str],
    nrows: usize,
    cols: usize,
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
    let panels = root.split_evenly((nrows, cols));
    let mut kinds: Vec<SketchKind> = Vec::new();
    for r in rows {
        if !kinds.contains(&r.sketch) {
            kinds.push(r.sketch);
        }
    }
    let kb = |r: &EvalRow| r.memory as f64 / 1000.0;
    let (xmin, xmax) = rows.iter().map(kb).fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let (xmin, xmax) = if xmin < xmax { (xmin, xmax) } else { (xmin * 0.9, xmax * 1.1 + 1.0) };
    for (panel, &metric) in panels.iter().zip(metrics) {
        let vals: Vec<f64> =
            rows.iter().filter_map(|r| r.metrics.get(metric)).copied().filter(|v| v.is_finite()).collect();
        if vals.is_empty() {
            continue;
        }
        let series = |k: SketchKind| -> Vec<(f64, f64)> {
            rows.iter()
                .filter(|r| r.sketch == k)
                .filter_map(|r| r.metrics.get(metric).map(|&v| (kb(r), v)))
                .filter(|(_, v)| v.is_finite())
                .collect()
        };
        let err = |e: plotters::drawing::DrawingAreaErrorKind<DB::ErrorType>| anyhow::anyhow!("{e}");
        let mut builder = ChartBuilder::on(panel);
        builder.caption(metric, ("sans-serif", 18)).margin(8).x_label_area_size(32).y_label_area_size(56);
        if is_score(metric) {
            let lo = vals.iter().copied().fold(f64::MAX, f64::min).min(1.0);
            let lo = (lo - (1.0 - lo) * 0.1).max(0.0);
            let mut chart =
                builder.build_cartesian_2d(xmin..xmax, lo..1.0_f64.max(lo + 1e-6)).map_err(err)?;
            chart.configure_mesh().x_desc("memory (KB)").draw().map_err(err)?;
            for (i, &k) in kinds.iter().enumerate() {
                let c = Palette99::pick(i).to_rgba();
                chart
                    .draw_series(LineSeries::new(series(k), c.stroke_width(2)))
                    .map_err(err)?
                    .label(k.name())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2)));
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()
                .map_err(err)?;
        } else {
            let pos: Vec<f64> = vals.iter().copied().filter(|&v| v > 0.0).collect();
            let lo = pos.iter().copied().fold(f64::MAX, f64::min);
            let hi = pos.iter().copied().fold(f64::MIN, f64::max);
            let (lo, hi) = if pos.is_empty() { (1e-6, 1.0) } else { (lo / 2.0, hi * 2.0) };
            let mut chart = builder.build_cartesian_2d(xmin..xmax, (lo..hi).log_scale()).map_err(err)?;
            chart
                .configure_mesh()
                .x_desc("memory (KB)")
                .y_label_formatter(&|v| format!("{v:.0e}"))
                .draw()
                .map_err(err)?;
            for (i, &k) in kinds.iter().enumerate() {
                let c = Palette99::pick(i).to_rgba();
                // A zero error cannot sit on a log axis: it is drawn at the axis floor.
                let pts: Vec<(f64, f64)> = series(k).into_iter().map(|(x, v)| (x, v.max(lo))).collect();
                chart
                    .draw_series(LineSeries::new(pts, c.stroke_width(2)))
                    .map_err(err)?
                    .label(k.name())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2)));
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()
                .map_err(err)?;
        }
    }
    Ok(())
}
