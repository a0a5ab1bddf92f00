//! The chart primitives every figure is made of, drawn with plotters into PNG or SVG: [`Chart`]
//! (lines with bands, or dots with error bars on a categorical axis) and [`BarChart`] (grouped
//! bars with error bars). The font (DejaVu Sans) is embedded so that figures render on machines
//! without any fonts installed.

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

use crate::error::PlotError;

/// DejaVu Sans, see `assets/fonts/LICENSE`.
static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

/// Registers the embedded font as plotters' sans-serif family (once per process).
fn register_font() -> Result<(), PlotError> {
    static ONCE: Once = Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| {
        result = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
            .map_err(|_| PlotError::Font);
    });
    result
}

/// What plotters said when it could not draw.
#[derive(Debug)]
pub struct DrawError(String);

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for DrawError {
    fn from(e: DrawingAreaErrorKind<E>) -> DrawError {
        DrawError(e.to_string())
    }
}

/// A figure plotters can draw; [`Figure::save`] writes it as PNG or SVG.
pub trait Figure {
    /// Draws the figure into `root`.
    fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static;

    /// Writes the figure as `path` (PNG or SVG by its extension).
    fn save(&self, path: &Path) -> Result<(), PlotError> {
        register_font()?;
        let svg = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
        let result = if svg {
            self.draw(SVGBackend::new(path, SIZE).into_drawing_area())
        } else {
            self.draw(BitMapBackend::new(path, SIZE).into_drawing_area())
        };
        result.map_err(|DrawError(message)| PlotError::Draw {
            path: path.to_path_buf(),
            message,
        })
    }

    /// Writes `dir/stem.png` and `dir/stem.svg` and returns their paths.
    fn save_png_and_svg(&self, dir: &Path, stem: &str) -> Result<Vec<PathBuf>, PlotError> {
        ["png", "svg"]
            .into_iter()
            .map(|extension| {
                let path = dir.join(format!("{stem}.{extension}"));
                self.save(&path)?;
                Ok(path)
            })
            .collect()
    }
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
    /// A dot at each point and no line (values of a categorical axis, which have nothing
    /// between them to join); the band is drawn as an error bar at each point.
    Points,
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
    /// Categorical x axis: the name of the category at each integer x (0, 1, ...), shown as the
    /// tick labels instead of numbers.
    pub categories: Option<Vec<String>>,
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

impl Figure for Chart {
    fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        let mut chart = titled_chart(&root, &self.title)
            .build_cartesian_2d(self.x.from..self.x.to, self.y.0..self.y.1)?;
        let log = self.x.log;
        let categories = self.categories.clone();
        let x_format = move |v: &f64| match &categories {
            Some(names) => category_at(names, *v),
            None if log => format_number(10f64.powf(*v)),
            None => format_number(*v),
        };
        chart
            .configure_mesh()
            .x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .axis_desc_style(("sans-serif", 20))
            .label_style(("sans-serif", 16))
            .x_labels(match &self.categories {
                Some(names) => names.len().max(2),
                None if log => ((self.x.to - self.x.from).ceil() as usize + 1).max(2),
                None => 10,
            })
            .x_label_formatter(&x_format)
            .y_label_formatter(&|v| format_number(*v))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()?;

        for series in &self.series {
            let color = match series.mark {
                Mark::Bold => BLACK,
                _ => PALETTE[series.color % PALETTE.len()],
            };
            if let Some(band) = &series.band {
                if series.mark == Mark::Points {
                    chart.draw_series(band.iter().map(|&(x, lo, hi)| {
                        ErrorBar::new_vertical(
                            x,
                            lo,
                            (lo + hi) / 2.0,
                            hi,
                            color.stroke_width(2),
                            10,
                        )
                    }))?;
                } else {
                    let mut polygon: Vec<(f64, f64)> =
                        band.iter().map(|&(x, lo, _)| (x, lo)).collect();
                    polygon.extend(band.iter().rev().map(|&(x, _, hi)| (x, hi)));
                    chart.draw_series(std::iter::once(Polygon::new(
                        polygon,
                        color.mix(0.15).filled(),
                    )))?;
                }
            }
            let width = if series.mark == Mark::Bold { 3 } else { 2 };
            let style = ShapeStyle::from(&color).stroke_width(width);
            let points = clip_x(&series.points, self.x.from, self.x.to);
            let dots = |radius: u32| {
                series
                    .points
                    .iter()
                    .map(move |&p| Circle::new(p, radius, color.filled()))
            };
            match series.mark {
                Mark::Points => {
                    chart
                        .draw_series(dots(4))?
                        .label(series.label.clone())
                        .legend(move |(x, y)| Circle::new((x + 12, y), 4, color.filled()));
                }
                Mark::Dashed => {
                    chart
                        .draw_series(DashedLineSeries::new(points, 10, 6, style))?
                        .label(series.label.clone())
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], style));
                }
                _ => {
                    chart
                        .draw_series(LineSeries::new(points, style))?
                        .label(series.label.clone())
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], style));
                    if series.mark == Mark::LinePoints {
                        chart.draw_series(dots(3))?;
                    }
                }
            }
        }
        chart
            .configure_series_labels()
            .position(self.legend.clone())
            .label_font(("sans-serif", 16))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .draw()?;
        root.present()?;
        Ok(())
    }
}

impl Chart {
    /// Puts the legend in the corner where it hides the least of the data: the corner whose
    /// legend-sized box holds the fewest drawn points (lines sampled between their points, bands).
    pub fn with_clear_legend(mut self) -> Chart {
        let (width, height) = (0.32, 0.07 * self.series.len() as f64 + 0.04);
        let (x0, x1) = (self.x.from, self.x.to);
        let (y0, y1) = self.y;
        let mut drawn: Vec<(f64, f64)> = Vec::new();
        for series in &self.series {
            let joined = if series.mark == Mark::Points {
                &[][..]
            } else {
                &series.points[..]
            };
            for pair in joined.windows(2) {
                for step in 0..=20 {
                    let t = f64::from(step) / 20.0;
                    drawn.push((
                        pair[0].0 + t * (pair[1].0 - pair[0].0),
                        pair[0].1 + t * (pair[1].1 - pair[0].1),
                    ));
                }
            }
            drawn.extend(series.points.iter().copied());
            for &(x, lo, hi) in series.band.iter().flatten() {
                drawn.extend([(x, lo), (x, hi), (x, (lo + hi) / 2.0)]);
            }
        }
        let relative: Vec<(f64, f64)> = drawn
            .iter()
            .map(|&(x, y)| ((x - x0) / (x1 - x0), (y - y0) / (y1 - y0)))
            .collect();
        let corners = [
            (SeriesLabelPosition::UpperLeft, false, true),
            (SeriesLabelPosition::UpperRight, true, true),
            (SeriesLabelPosition::LowerRight, true, false),
            (SeriesLabelPosition::LowerLeft, false, false),
        ];
        let covered = |right: bool, upper: bool| {
            relative
                .iter()
                .filter(|&&(x, y)| {
                    let in_x = if right { x >= 1.0 - width } else { x <= width };
                    let in_y = if upper {
                        y >= 1.0 - height
                    } else {
                        y <= height
                    };
                    in_x && in_y
                })
                .count()
        };
        if let Some((best, _, _)) = corners
            .iter()
            .min_by_key(|&&(_, right, upper)| covered(right, upper))
        {
            self.legend = best.clone();
        }
        self
    }
}

/// One group of bars: a value (with its confidence interval) per category.
pub struct BarGroup {
    /// Legend text.
    pub label: String,
    /// Per category: (value, interval low, interval high); NaN leaves the bar out.
    pub values: Vec<(f64, f64, f64)>,
}

/// Grouped bars over categories, with error bars for the confidence intervals.
pub struct BarChart {
    /// Title at the top.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label, with its unit.
    pub y_label: String,
    /// The category names along x.
    pub categories: Vec<String>,
    /// One group (colour) per series.
    pub groups: Vec<BarGroup>,
}

impl Figure for BarChart {
    fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        let top = self
            .groups
            .iter()
            .flat_map(|g| g.values.iter())
            .map(|&(v, _, hi)| if hi.is_finite() { hi } else { v })
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        // Room above the tallest bar for the legend.
        let y_max = if top > 0.0 {
            top * (1.15 + 0.07 * self.groups.len() as f64)
        } else {
            1.0
        };
        let n = self.categories.len().max(1);
        let mut chart = titled_chart(&root, &self.title)
            .build_cartesian_2d(-0.5..(n as f64 - 0.5), 0.0..y_max)?;
        let names = self.categories.clone();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .axis_desc_style(("sans-serif", 20))
            .label_style(("sans-serif", 16))
            .x_labels(n.max(2))
            .x_label_formatter(&|v| category_at(&names, *v))
            .y_label_formatter(&|v| format_number(*v))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()?;
        let groups = self.groups.len().max(1) as f64;
        let slot = 0.8 / groups;
        for (g, group) in self.groups.iter().enumerate() {
            let color = PALETTE[g % PALETTE.len()];
            let offset = -0.4 + slot * g as f64;
            let bars = group
                .values
                .iter()
                .enumerate()
                .filter(|(_, v)| v.0.is_finite())
                .map(|(c, &(v, _, _))| {
                    let left = c as f64 + offset + slot * 0.08;
                    let right = c as f64 + offset + slot * 0.92;
                    Rectangle::new([(left, 0.0), (right, v)], color.mix(0.8).filled())
                });
            chart
                .draw_series(bars)?
                .label(group.label.clone())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 6), (x + 18, y + 6)], color.mix(0.8).filled())
                });
            let whiskers = group
                .values
                .iter()
                .enumerate()
                .filter(|(_, v)| v.0.is_finite() && v.1.is_finite() && v.2.is_finite())
                .map(|(c, &(v, lo, hi))| {
                    ErrorBar::new_vertical(
                        c as f64 + offset + slot / 2.0,
                        lo.max(0.0),
                        v,
                        hi,
                        BLACK.stroke_width(1),
                        8,
                    )
                });
            chart.draw_series(whiskers)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font(("sans-serif", 16))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .draw()?;
        root.present()?;
        Ok(())
    }
}

/// The category name at `x` if `x` is (close to) its index, else nothing.
fn category_at(names: &[String], x: f64) -> String {
    let index = x.round();
    if (x - index).abs() > 1e-6 || index < 0.0 {
        return String::new();
    }
    names.get(index as usize).cloned().unwrap_or_default()
}

/// A chart builder with the house frame every figure shares: the title on top, margins and
/// room for the axis labels.
pub fn titled_chart<'a, 'b, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    title: &str,
) -> ChartBuilder<'a, 'b, DB> {
    let mut builder = ChartBuilder::on(root);
    builder
        .caption(title, ("sans-serif", 26))
        .margin(18)
        .x_label_area_size(56)
        .y_label_area_size(78);
    builder
}

/// Compact tick labels: 1, 2.5, 1000, 1e+06.
pub fn format_number(v: f64) -> String {
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
            categories: None,
        };
        for name in ["a.png", "a.svg"] {
            let path = dir.path().join(name);
            chart.save(&path).unwrap();
            assert!(std::fs::metadata(&path).unwrap().len() > 1000);
        }
    }
}
