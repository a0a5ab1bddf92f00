//! Line charts for figures, drawn with plotters into PNG or SVG. The font (DejaVu Sans) is
//! embedded so that figures render on machines without any fonts installed.

use std::path::Path;
use std::sync::Once;

use anyhow::Context;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

/// DejaVu Sans, see `assets/fonts/LICENSE`.
static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

/// Registers the embedded font as plotters' sans-serif family (once per process).
fn register_font() -> anyhow::Result<()> {
    static ONCE: Once = Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| {
        result = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
            .map_err(|_| anyhow::anyhow!("the embedded font could not be loaded"));
    });
    result
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// A solid line.
    Line,
    /// A thick solid line (the combined or headline series).
    Bold,
    /// A dashed line (reference curves).
    Dashed,
    /// A line with a dot at each point.
    LinePoints,
}

/// One series of a chart.
pub struct Series {
    /// Legend text.
    pub label: String,
    /// (x, y) points in data units (x already transformed if the axis is logarithmic).
    pub points: Vec<(f64, f64)>,
    /// Drawing style.
    pub mark: Mark,
    /// Index into the palette; the bold series are black.
    pub color: usize,
    /// Optional band (x, y low, y high) drawn shaded behind the line.
    pub band: Option<Vec<(f64, f64, f64)>>,
}

/// An x axis: linear or base-10 logarithmic (points are given as log10(x); ticks show x).
#[derive(Debug, Clone, Copy)]
pub struct Axis {
    /// Lower end, in plotted units.
    pub from: f64,
    /// Upper end, in plotted units.
    pub to: f64,
    /// Whether plotted units are log10 of the data.
    pub log: bool,
}

/// A chart: title, axis labels with units, series, legend.
pub struct Chart {
    /// Title at the top.
    pub title: String,
    /// X axis label, with its unit.
    pub x_label: String,
    /// Y axis label, with its unit.
    pub y_label: String,
    /// X range.
    pub x: Axis,
    /// Y range.
    pub y: (f64, f64),
    /// The series.
    pub series: Vec<Series>,
    /// Where the legend goes.
    pub legend: SeriesLabelPosition,
}

const PALETTE: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
];

/// Figure size in pixels.
const SIZE: (u32, u32) = (960, 640);

impl Chart {
    /// Writes the chart as `path` (PNG or SVG by its extension).
    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        register_font()?;
        let svg = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
        let result = if svg {
            self.draw(SVGBackend::new(path, SIZE).into_drawing_area())
        } else {
            self.draw(BitMapBackend::new(path, SIZE).into_drawing_area())
        };
        result.with_context(|| format!("cannot draw {}", path.display()))
    }

    fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE).map_err(plot_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&self.title, ("sans-serif", 26))
            .margin(18)
            .x_label_area_size(56)
            .y_label_area_size(78)
            .build_cartesian_2d(self.x.from..self.x.to, self.y.0..self.y.1)
            .map_err(plot_error)?;
        let log = self.x.log;
        let x_format = move |v: &f64| {
            if log {
                format_number(10f64.powf(*v))
            } else {
                format_number(*v)
            }
        };
        chart
            .configure_mesh()
            .x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .axis_desc_style(("sans-serif", 20))
            .label_style(("sans-serif", 16))
            .x_labels(if log {
                ((self.x.to - self.x.from).ceil() as usize + 1).max(2)
            } else {
                10
            })
            .x_label_formatter(&x_format)
            .y_label_formatter(&|v| format_number(*v))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(plot_error)?;

        for series in &self.series {
            let color = match series.mark {
                Mark::Bold => BLACK,
                _ => PALETTE[series.color % PALETTE.len()],
            };
            if let Some(band) = &series.band {
                let mut polygon: Vec<(f64, f64)> = band.iter().map(|&(x, lo, _)| (x, lo)).collect();
                polygon.extend(band.iter().rev().map(|&(x, _, hi)| (x, hi)));
                chart
                    .draw_series(std::iter::once(Polygon::new(
                        polygon,
                        color.mix(0.15).filled(),
                    )))
                    .map_err(plot_error)?;
            }
            let width = if series.mark == Mark::Bold { 3 } else { 2 };
            let style = ShapeStyle::from(&color).stroke_width(width);
            let points = clip_x(&series.points, self.x.from, self.x.to);
            let drawn = match series.mark {
                Mark::Dashed => chart
                    .draw_series(DashedLineSeries::new(points, 10, 6, style))
                    .map_err(plot_error)?,
                _ => chart
                    .draw_series(LineSeries::new(points, style))
                    .map_err(plot_error)?,
            };
            drawn
                .label(series.label.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], style));
            if series.mark == Mark::LinePoints {
                chart
                    .draw_series(
                        series
                            .points
                            .iter()
                            .map(|&p| Circle::new(p, 3, color.filled())),
                    )
                    .map_err(plot_error)?;
            }
        }
        chart
            .configure_series_labels()
            .position(self.legend.clone())
            .label_font(("sans-serif", 16))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .draw()
            .map_err(plot_error)?;
        root.present().map_err(plot_error)?;
        Ok(())
    }
}

fn plot_error<E: std::error::Error + Send + Sync + 'static>(
    e: DrawingAreaErrorKind<E>,
) -> anyhow::Error {
    anyhow::anyhow!("{e}")
}

/// Compact tick labels: 1, 2.5, 1000, 1e+06.
fn format_number(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && !(1e-3..1e6).contains(&a) {
        format!("{v:.0e}")
    } else if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round())
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The part of a polyline inside `from..=to` on the x axis, with the points where it crosses
/// the edges, so nothing is drawn on the plot's border.
fn clip_x(points: &[(f64, f64)], from: f64, to: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len());
    for (i, &p) in points.iter().enumerate() {
        if let Some(&q) = i.checked_sub(1).and_then(|j| points.get(j)) {
            let mut crossings: Vec<(f64, (f64, f64))> = [from, to]
                .into_iter()
                .filter(|&edge| (q.0 - edge) * (p.0 - edge) < 0.0)
                .map(|edge| {
                    let t = (edge - q.0) / (p.0 - q.0);
                    (t, (edge, q.1 + t * (p.1 - q.1)))
                })
                .collect();
            crossings.sort_by(|a, b| a.0.total_cmp(&b.0));
            out.extend(crossings.into_iter().map(|(_, point)| point));
        }
        if (from..=to).contains(&p.0) {
            out.push(p);
        }
    }
    out
}

/// The points of an empirical CDF as a step line, with x transformed by `x_of`.
pub fn ecdf_steps(
    values: &[i64],
    cumulative: &[f64],
    x_of: impl Fn(f64) -> f64,
) -> Vec<(f64, f64)> {
    let mut points = Vec::with_capacity(values.len() * 2);
    let mut previous = 0.0;
    for (&v, &c) in values.iter().zip(cumulative) {
        let x = x_of(v as f64);
        points.push((x, previous));
        points.push((x, c));
        previous = c;
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_are_compact() {
        assert_eq!(format_number(1000.0), "1000");
        assert_eq!(format_number(0.25), "0.25");
        assert_eq!(format_number(2.0e7), "2e7");
        assert_eq!(format_number(12.5), "12.5");
    }

    #[test]
    fn clipping_keeps_the_level_at_the_edges() {
        let steps = ecdf_steps(&[-10, 0, 10], &[0.2, 0.6, 1.0], |x| x);
        let clipped = clip_x(&steps, -5.0, 5.0);
        assert_eq!(
            clipped,
            vec![(-5.0, 0.2), (0.0, 0.2), (0.0, 0.6), (5.0, 0.6)]
        );
    }

    #[test]
    fn steps_rise_at_each_value() {
        let p = ecdf_steps(&[1, 3], &[0.4, 1.0], |x| x);
        assert_eq!(p, vec![(1.0, 0.0), (1.0, 0.4), (3.0, 0.4), (3.0, 1.0)]);
    }

    #[test]
    fn draws_png_and_svg_without_system_fonts() {
        let dir = tempfile::tempdir().unwrap();
        let chart = Chart {
            title: "test".into(),
            x_label: "x (s)".into(),
            y_label: "y".into(),
            x: Axis {
                from: 0.0,
                to: 3.0,
                log: true,
            },
            y: (0.0, 1.0),
            series: vec![Series {
                label: "a".into(),
                points: vec![(0.0, 0.0), (3.0, 1.0)],
                mark: Mark::LinePoints,
                color: 0,
                band: Some(vec![(0.0, 0.0, 0.1), (3.0, 0.9, 1.0)]),
            }],
            legend: SeriesLabelPosition::LowerRight,
        };
        for name in ["a.png", "a.svg"] {
            let path = dir.path().join(name);
            chart.save(&path).unwrap();
            assert!(std::fs::metadata(&path).unwrap().len() > 1000);
        }
    }
}
