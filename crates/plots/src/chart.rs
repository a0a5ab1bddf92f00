//! The chart primitives every figure is made of, drawn with plotters as SVG and written by
//! [`crate::output`] as PNG, SVG, PDF and the CSV of the points drawn: [`Chart`] (lines with
//! bands or error bars, or dots with error bars on a categorical axis) and [`BarChart`]
//! (grouped, hatched bars with error bars). Every series has its own [`Style`] (colour, marker,
//! dashes, hatch), so figures read in greyscale. The font (DejaVu Sans) is embedded so that
//! figures render on machines without any fonts installed.

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::PlotError;
use crate::output::{FONT, MIN_FONT_PT, Print, Tidy, number, write_figure};
use crate::style::{Hatched, Key, KeyKind, Marker, Stroke, Style, Whisker};

/// Registers the embedded font as plotters' sans-serif family (once per process): plotters
/// measures text with it to lay out labels and legends.
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

/// Figure size in SVG pixels at the default width: 6.4 x 4.27 inches at
/// [`crate::output::BASE_DPI`] ([`Print::size`] at other widths).
#[cfg(test)]
pub const SIZE: (u32, u32) = (960, 640);

/// The printed size of tick labels, legend entries and keys, points.
pub const TICK_PT: f64 = 7.5;
/// The printed size of axis labels, points.
pub const AXIS_PT: f64 = 8.5;
/// The printed size of a title that fits the width, points (a longer one is smaller, down to
/// [`MIN_FONT_PT`]).
pub const TITLE_PT: f64 = 9.5;

/// The size plotters is given for text of at least `points` at print size: plotters sizes a
/// font by its line height, which it writes into the SVG as `font-size` divided by 1.24, and
/// draws some text (titles) at a whole number of pixels, rounded down; so the size is rounded
/// up to a whole pixel here.
pub fn font(points: f64) -> f64 {
    (Print::pixels(points) * 1.24).ceil()
}

/// The width of an average character of DejaVu Sans (text, digits, spaces) at `points`, SVG
/// pixels.
pub fn char_width(points: f64) -> f64 {
    0.58 * Print::pixels(points)
}

/// How much the frame (margins, label areas, legend sample) is scaled from the sizes it was
/// laid out at for 16-pixel labels: it grows with the text, not with the figure.
pub(crate) fn frame(pixels: f64) -> i32 {
    (pixels * font(TICK_PT) / 16.0).round() as i32
}

/// The frame around the plotting area, SVG pixels: left (the y axis's labels), right, top
/// (title), bottom (the x axis's labels).
pub(crate) fn plot_area(print: &Print) -> (f64, f64) {
    let (width, height) = print.size();
    let across = f64::from(width) - f64::from(frame(78.0) + frame(18.0) + frame(34.0));
    let down = f64::from(height)
        - f64::from(frame(56.0) + 2 * frame(18.0))
        - 1.5 * Print::pixels(TITLE_PT);
    (across.max(1.0), down.max(1.0))
}

/// A figure plotters can draw; [`Figure::save`] writes it as PNG, SVG, PDF and CSV.
pub trait Figure {
    /// Draws the figure into `root`, laid out for its print size.
    fn draw<DB: DrawingBackend>(
        &self,
        root: DrawingArea<DB, Shift>,
        print: &Print,
    ) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static;

    /// The points the figure draws, one row each.
    fn tidy(&self) -> Tidy;

    /// Writes `dir/stem.png` (at the print's resolution), `.svg`, `.pdf` (at its width) and
    /// `.csv` and returns their paths.
    fn save(&self, dir: &Path, stem: &str, print: Print) -> Result<Vec<PathBuf>, PlotError> {
        register_font()?;
        let mut svg = String::new();
        self.draw(
            SVGBackend::with_string(&mut svg, print.size()).into_drawing_area(),
            &print,
        )
        .map_err(|DrawError(message)| PlotError::Draw {
            path: dir.join(format!("{stem}.svg")),
            message,
        })?;
        write_figure(&svg, &self.tidy(), dir, stem, print.dpi)
    }
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// A line in the series' dash pattern, with a few markers along it when the chart has more
    /// than one series (distributions and time series: too many points for a marker each).
    Line,
    /// A thick black solid line (the combined or headline series).
    Bold,
    /// A grey long-dashed line (a published reference curve).
    Reference,
    /// A line in the series' dash pattern with a marker at each point.
    LinePoints,
    /// A marker at each point and no line (values of a categorical axis, which have nothing
    /// between them to join); the band is drawn as an error bar at each point.
    Points,
    /// A grey area behind every other series: its band, filled, with no line or markers (what
    /// the other series happen against: processors out of service, an outage's hours). Its
    /// points are what the figure's CSV lists.
    Shade,
}

/// One series of a chart.
pub struct Series {
    /// Legend text (empty for every series: no legend).
    pub label: String,
    /// (x, y) points in data units (x already transformed if the axis is logarithmic, the
    /// category's index on a categorical axis).
    pub points: Vec<(f64, f64)>,
    /// Drawing style.
    pub mark: Mark,
    /// The series' index for its [`Style`] (colour, marker, dashes); ignored by the bold and
    /// reference marks.
    pub style: usize,
    /// Optional interval (x, y low, y high) at some of the points: a band behind the line, or
    /// error bars where bands of different series would overlap.
    pub band: Option<Vec<(f64, f64, f64)>>,
}

impl Series {
    /// The series' style.
    pub fn style(&self) -> Style {
        match self.mark {
            Mark::Bold => Style::bold(),
            Mark::Reference => Style::reference(),
            Mark::Shade => Style::shade(),
            _ => Style::nth(self.style),
        }
    }
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

/// The half width of markers, pixels.
const MARKER: i32 = 5;

/// Markers along a [`Mark::Line`] series.
const SPARSE_MARKERS: usize = 8;

impl Figure for Chart {
    fn draw<DB: DrawingBackend>(
        &self,
        root: DrawingArea<DB, Shift>,
        print: &Print,
    ) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static,
    {
        self.draw_placed(root, print, self.legend.clone(), self.y)
    }

    fn tidy(&self) -> Tidy {
        self.points_drawn()
    }
}

/// A [`Chart`] whose legend goes where it hides the least of the data at the print size
/// ([`Chart::with_clear_legend`]).
pub struct ClearLegend(Chart);

impl std::ops::Deref for ClearLegend {
    type Target = Chart;
    fn deref(&self) -> &Chart {
        &self.0
    }
}

impl Figure for ClearLegend {
    fn draw<DB: DrawingBackend>(
        &self,
        root: DrawingArea<DB, Shift>,
        print: &Print,
    ) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static,
    {
        let (legend, y) = self.0.clear_legend(print);
        self.0.draw_placed(root, print, legend, y)
    }

    fn tidy(&self) -> Tidy {
        self.0.points_drawn()
    }
}

impl Chart {
    /// Draws the chart with its legend at `legend` and its y axis over `y`.
    fn draw_placed<DB: DrawingBackend>(
        &self,
        root: DrawingArea<DB, Shift>,
        print: &Print,
        legend: SeriesLabelPosition,
        y: (f64, f64),
    ) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        let mut chart = titled_chart(&root, &self.title, print)?
            .build_cartesian_2d(self.x.from..self.x.to, y.0..y.1)?;
        let (across, down) = plot_area(print);
        let log = self.x.log;
        let categories = self.categories.clone();
        let x_format = move |v: &f64| match &categories {
            Some(names) => category_at(names, *v),
            None if log => format_number(10f64.powf(*v)),
            None => format_number(*v),
        };
        // Category names that do not fit side by side are drawn below the axis on two lines.
        let (label_size, wrapped) = match &self.categories {
            Some(names) => category_layout(names, across),
            None => (font(TICK_PT), None),
        };
        let hide_categories = wrapped.is_some();
        let x_format = move |v: &f64| {
            if hide_categories {
                String::new()
            } else {
                x_format(v)
            }
        };
        chart
            .configure_mesh()
            .x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .axis_desc_style(("sans-serif", font(AXIS_PT)))
            .label_style(("sans-serif", font(TICK_PT)))
            .x_label_style(("sans-serif", label_size))
            .x_labels(match &self.categories {
                Some(names) => names.len().max(2),
                None if log => ((self.x.to - self.x.from).ceil() as usize + 1).max(2),
                // a label (up to 6 characters) and as much room again each
                None => ticks(across, 12.0 * char_width(TICK_PT)),
            })
            .y_labels(ticks(down, 2.5 * Print::pixels(TICK_PT)))
            .x_label_formatter(&x_format)
            .y_label_formatter(&|v| format_number(*v))
            .max_light_lines(0)
            .bold_line_style(RGBColor(225, 225, 225))
            .draw()?;
        if let Some(lines) = wrapped {
            let font = ("sans-serif", label_size)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Top));
            for (i, name) in lines.iter().enumerate() {
                let (x, y) = chart.backend_coord(&(i as f64, y.0));
                for (k, line) in name.iter().enumerate() {
                    let at = (x, y + frame(6.0) + k as i32 * (label_size as i32 + 2));
                    root.draw(&Text::new(line.as_str(), at, font.clone()))?;
                }
            }
        }

        let error_bars = self.error_bars();
        let count = self.series.len();
        // Intervals first, under every line and marker.
        for (i, series) in self.series.iter().enumerate() {
            let Some(band) = &series.band else { continue };
            let color = series.style().color;
            if series.mark == Mark::Shade {
                let mut polygon: Vec<(f64, f64)> = band.iter().map(|&(x, lo, _)| (x, lo)).collect();
                polygon.extend(band.iter().rev().map(|&(x, _, hi)| (x, hi)));
                chart.draw_series(std::iter::once(Polygon::new(
                    polygon,
                    color.mix(crate::style::SHADE_OPACITY).filled(),
                )))?;
                continue;
            }
            let shift = self.dodge(i, error_bars);
            // a band needs two points; a single interval is an error bar
            if error_bars || band.len() < 2 {
                let line = ShapeStyle::from(&color).stroke_width(2);
                chart.draw_series(
                    band.iter()
                        .map(|&(x, lo, hi)| Whisker::new(x + shift, lo, hi, line, MARKER + 1)),
                )?;
            } else {
                let mut polygon: Vec<(f64, f64)> = band.iter().map(|&(x, lo, _)| (x, lo)).collect();
                polygon.extend(band.iter().rev().map(|&(x, _, hi)| (x, hi)));
                chart.draw_series(std::iter::once(Polygon::new(
                    polygon,
                    color.mix(0.10).filled(),
                )))?;
                let edge = ShapeStyle::from(&color.mix(0.55)).stroke_width(1);
                for pick in [
                    |b: &(f64, f64, f64)| (b.0, b.1),
                    |b: &(f64, f64, f64)| (b.0, b.2),
                ] {
                    let line = clip_x(
                        &band.iter().map(pick).collect::<Vec<_>>(),
                        self.x.from,
                        self.x.to,
                    );
                    chart.draw_series(std::iter::once(PathElement::new(line, edge)))?;
                }
            }
        }
        for (i, series) in self.series.iter().enumerate() {
            let style = series.style();
            let shift = self.dodge(i, error_bars);
            let points: Vec<(f64, f64)> =
                series.points.iter().map(|&(x, y)| (x + shift, y)).collect();
            let width = match series.mark {
                Mark::Bold => 3,
                _ => 2,
            };
            let line = ShapeStyle::from(&style.color).stroke_width(width);
            if series.mark == Mark::Shade {
                // the area is drawn with the intervals; here only its legend entry
                chart
                    .draw_series(std::iter::empty::<Marker<(f64, f64)>>())?
                    .label(series.label.clone())
                    .legend(move |at| Key::new(at, style, KeyKind::Area));
                continue;
            }
            if series.mark != Mark::Points {
                let clipped = clip_x(&points, self.x.from, self.x.to);
                chart.draw_series(std::iter::once(Stroke::new(clipped, style.dash, line)))?;
            }
            let markers: Vec<(f64, f64)> = match series.mark {
                Mark::Points | Mark::LinePoints => points,
                Mark::Line if count > 1 => sparse_markers(
                    &points,
                    self.x.from,
                    self.x.to,
                    (i as f64 + 0.5) / count as f64,
                ),
                _ => Vec::new(),
            };
            let kind = match series.mark {
                Mark::Points => KeyKind::Point,
                Mark::LinePoints => KeyKind::Line {
                    marker: true,
                    width,
                },
                Mark::Line => KeyKind::Line {
                    marker: count > 1,
                    width,
                },
                Mark::Bold | Mark::Reference | Mark::Shade => KeyKind::Line {
                    marker: false,
                    width,
                },
            };
            chart
                .draw_series(
                    markers
                        .into_iter()
                        .filter(|p| (self.x.from..=self.x.to).contains(&p.0))
                        .map(|p| Marker::new(p, style, MARKER)),
                )?
                .label(series.label.clone())
                .legend(move |at| Key::new(at, style, kind));
        }
        // series without labels need no legend (a single series the axis label names)
        if self.series.iter().all(|s| s.label.is_empty()) {
            root.present()?;
            return Ok(());
        }
        chart
            .configure_series_labels()
            .position(legend)
            .legend_area_size(frame(40.0))
            .label_font(("sans-serif", font(TICK_PT)))
            .background_style(WHITE.mix(0.9))
            .border_style(RGBColor(180, 180, 180))
            .draw()?;
        root.present()?;
        Ok(())
    }

    /// The points the chart draws, one row each.
    fn points_drawn(&self) -> Tidy {
        let with_band = self.series.iter().any(|s| s.band.is_some());
        let mut tidy = Tidy::new(if with_band {
            &["series", "x", "y", "low", "high"]
        } else {
            &["series", "x", "y"]
        });
        for series in &self.series {
            for &(x, y) in &series.points {
                let x_text = match &self.categories {
                    Some(names) => category_at(names, x),
                    None if self.x.log => number(10f64.powf(x)),
                    None => number(x),
                };
                let mut row = vec![series.label.clone(), x_text, number(y)];
                if with_band {
                    let interval = series
                        .band
                        .iter()
                        .flatten()
                        .find(|b| b.0.to_bits() == x.to_bits());
                    row.push(interval.map_or(String::new(), |b| number(b.1)));
                    row.push(interval.map_or(String::new(), |b| number(b.2)));
                }
                tidy.rows.push(row);
            }
        }
        tidy
    }
}

impl Chart {
    /// Whether the intervals are drawn as error bars, the series side by side: always on a
    /// categorical axis, and on a numeric one when the bands of two series would overlap at
    /// some x (overlapping shaded bands blur into each other).
    pub fn error_bars(&self) -> bool {
        if self.series.iter().any(|s| s.mark == Mark::Points) {
            return true;
        }
        let bands: Vec<&Vec<(f64, f64, f64)>> = (self.series.iter())
            .filter(|s| s.mark != Mark::Shade)
            .filter_map(|s| s.band.as_ref())
            .collect();
        bands.iter().enumerate().any(|(i, a)| {
            bands[i + 1..].iter().any(|b| {
                a.iter().any(|&(x, lo, hi)| {
                    b.iter()
                        .any(|&(bx, blo, bhi)| bx == x && lo <= bhi && blo <= hi)
                })
            })
        })
    }

    /// How far the `i`-th series is moved along x so that error bars and markers at the same
    /// x stand side by side: within 0.6 of a category on a categorical axis, 1.2 % of the axis
    /// per series on a numeric one; nothing when the intervals are bands.
    fn dodge(&self, i: usize, error_bars: bool) -> f64 {
        let count = self.series.len();
        if !error_bars || count < 2 {
            return 0.0;
        }
        let step = if self.categories.is_some() {
            0.6 / count as f64
        } else {
            0.012 * (self.x.to - self.x.from)
        };
        (i as f64 - (count as f64 - 1.0) / 2.0) * step
    }

    /// The chart with its legend in the corner where it hides the least of the data at the size
    /// it is printed at ([`Chart::clear_legend`]).
    pub fn with_clear_legend(self) -> ClearLegend {
        ClearLegend(self)
    }

    /// Where the legend hides the least of the data at `print`'s size: the corner whose
    /// legend-sized box holds the fewest drawn points (lines sampled between their points,
    /// bands); when every corner hides some, the upper left with the top of the y axis raised
    /// to make room. Returns the corner and the y range. A chart whose series have no labels
    /// has no legend.
    fn clear_legend(&self, print: &Print) -> (SeriesLabelPosition, (f64, f64)) {
        if self.series.iter().all(|s| s.label.is_empty()) {
            return (self.legend.clone(), self.y);
        }
        let longest = self
            .series
            .iter()
            .map(|s| s.label.chars().count())
            .max()
            .unwrap_or(0) as f64;
        // the legend's box: its sample, the text and margins; a row per series
        let (across, down) = plot_area(print);
        let row = 1.75 * Print::pixels(TICK_PT);
        let (width, height) = (
            ((f64::from(frame(60.0)) + char_width(TICK_PT) * longest) / across).min(1.0),
            ((row * self.series.len() as f64 + f64::from(frame(20.0))) / down).min(0.9),
        );
        let (x0, x1) = (self.x.from, self.x.to);
        let (y0, y1) = self.y;
        let mut drawn: Vec<(f64, f64)> = Vec::new();
        // a shaded area is background: the legend may cover it
        for series in self.series.iter().filter(|s| s.mark != Mark::Shade) {
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
        let mut placed = (self.legend.clone(), self.y);
        if let Some((best, right, upper)) = corners
            .iter()
            .min_by_key(|&&(_, right, upper)| covered(right, upper))
        {
            placed.0 = best.clone();
            if covered(*right, *upper) > 0 {
                // every corner hides data: raise the top so the legend has the upper left to
                // itself
                let span = y1 - y0;
                placed.1.1 = y1 + span * (height / (1.0 - height).max(0.2)) + 0.02 * span;
                placed.0 = SeriesLabelPosition::UpperLeft;
            }
        }
        placed
    }
}

/// Up to [`SPARSE_MARKERS`] points on a line (sorted by x) spread evenly over `from..to`, the
/// `phase` (0..1) of the spacing in: series with different phases get their markers at
/// different x, so markers of overlapping lines do not hide each other.
fn sparse_markers(points: &[(f64, f64)], from: f64, to: f64, phase: f64) -> Vec<(f64, f64)> {
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return Vec::new();
    };
    let (lo, hi) = (from.max(first.0), to.min(last.0));
    let spacing = (to - from) / SPARSE_MARKERS as f64;
    (0..SPARSE_MARKERS)
        .map(|k| from + (k as f64 + phase) * spacing)
        .filter(|&x| x >= lo && x <= hi)
        .filter_map(|x| {
            let j = points.iter().position(|p| p.0 >= x)?;
            let (b, a) = (points[j], points[j.saturating_sub(1)]);
            if b.0 == x || b.0 == a.0 {
                return Some(if b.0 == x { b } else { (x, a.1) });
            }
            let t = (x - a.0) / (b.0 - a.0);
            Some((x, a.1 + t * (b.1 - a.1)))
        })
        .collect()
}

/// How many tick labels fit along `length` pixels, each wanting `room` pixels: 3 to 10.
pub(crate) fn ticks(length: f64, room: f64) -> usize {
    ((length / room.max(1.0)) as usize).clamp(3, 10)
}

/// The tick label size (as plotters takes it, [`font`]) for category names side by side under
/// a plot `across` pixels wide, and, when they do not fit on one line at [`MIN_FONT_PT`], each
/// name on two lines (split at the space nearest its middle); never below [`MIN_FONT_PT`].
fn category_layout(names: &[String], across: f64) -> (f64, Option<Vec<Vec<String>>>) {
    let slot = across / names.len().max(1) as f64;
    // the points at which `chars` characters fill 92 % of a slot
    let points_for = |chars: usize| 0.92 * slot / (char_width(1.0) * chars.max(1) as f64);
    let longest = names.iter().map(|n| n.chars().count()).max().unwrap_or(1);
    if points_for(longest) >= MIN_FONT_PT {
        return (font(points_for(longest).min(TICK_PT)), None);
    }
    let lines: Vec<Vec<String>> = names.iter().map(|n| split_in_two(n)).collect();
    let longest = lines
        .iter()
        .flatten()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(1);
    (
        font(points_for(longest).clamp(MIN_FONT_PT, TICK_PT)),
        Some(lines),
    )
}

/// `name` in two lines at the space nearest its middle (one line if it has no space).
fn split_in_two(name: &str) -> Vec<String> {
    let middle = name.len() / 2;
    let split = name
        .char_indices()
        .filter(|&(_, c)| c == ' ')
        .map(|(i, _)| i)
        .min_by_key(|&i| i.abs_diff(middle));
    match split {
        Some(i) => vec![name[..i].to_string(), name[i + 1..].to_string()],
        None => vec![name.to_string()],
    }
}

/// One group of bars: a value (with its confidence interval) per category.
pub struct BarGroup {
    /// Legend text.
    pub label: String,
    /// Per category: (value, interval low, interval high); NaN leaves the bar out.
    pub values: Vec<(f64, f64, f64)>,
}

/// Grouped bars over categories, with error bars for the confidence intervals; each group has
/// its own colour and hatch.
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
    fn draw<DB: DrawingBackend>(
        &self,
        root: DrawingArea<DB, Shift>,
        print: &Print,
    ) -> Result<(), DrawError>
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
        // Room above the tallest bar for the legend: its rows' share of the plot's height.
        let (across, down) = plot_area(print);
        let legend = (1.75 * Print::pixels(TICK_PT) * self.groups.len() as f64
            + f64::from(frame(30.0)))
            / down;
        let y_max = if top > 0.0 {
            top * 1.08 / (1.0 - legend).max(0.25)
        } else {
            1.0
        };
        let n = self.categories.len().max(1);
        let (label_size, wrapped) = category_layout(&self.categories, across);
        let hide_names = wrapped.is_some();
        let mut chart = titled_chart(&root, &self.title, print)?
            .build_cartesian_2d(-0.5..(n as f64 - 0.5), 0.0..y_max)?;
        let names = self.categories.clone();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .axis_desc_style(("sans-serif", font(AXIS_PT)))
            .label_style(("sans-serif", font(TICK_PT)))
            .x_label_style(("sans-serif", label_size))
            .y_labels(ticks(down, 2.5 * Print::pixels(TICK_PT)))
            .x_labels(n.max(2))
            .x_label_formatter(&|v| {
                if hide_names {
                    String::new()
                } else {
                    category_at(&names, *v)
                }
            })
            .y_label_formatter(&|v| format_number(*v))
            .max_light_lines(0)
            .bold_line_style(RGBColor(225, 225, 225))
            .draw()?;
        // Category names that do not fit side by side are drawn below the axis on two lines.
        if let Some(lines) = wrapped {
            let font = ("sans-serif", label_size)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Top));
            for (i, name) in lines.iter().enumerate() {
                let (x, y) = chart.backend_coord(&(i as f64, 0.0));
                for (k, line) in name.iter().enumerate() {
                    let at = (x, y + frame(6.0) + k as i32 * (label_size as i32 + 2));
                    root.draw(&Text::new(line.as_str(), at, font.clone()))?;
                }
            }
        }
        let groups = self.groups.len().max(1) as f64;
        let slot = 0.8 / groups;
        for (g, group) in self.groups.iter().enumerate() {
            let style = Style::nth(g);
            let offset = -0.4 + slot * g as f64;
            let bars = group
                .values
                .iter()
                .enumerate()
                .filter(|(_, v)| v.0.is_finite())
                .map(|(c, &(v, _, _))| {
                    let left = c as f64 + offset + slot * 0.08;
                    let right = c as f64 + offset + slot * 0.92;
                    Hatched::new([(left, 0.0), (right, v)], style)
                });
            chart
                .draw_series(bars)?
                .label(group.label.clone())
                .legend(move |at| Key::new(at, style, KeyKind::Bar));
            let whiskers = group
                .values
                .iter()
                .enumerate()
                .filter(|(_, v)| v.0.is_finite() && v.1.is_finite() && v.2.is_finite())
                .map(|(c, &(_, lo, hi))| {
                    Whisker::new(
                        c as f64 + offset + slot / 2.0,
                        lo.max(0.0),
                        hi,
                        BLACK.stroke_width(1),
                        4,
                    )
                });
            chart.draw_series(whiskers)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .legend_area_size(frame(40.0))
            .label_font(("sans-serif", font(TICK_PT)))
            .background_style(WHITE.mix(0.9))
            .border_style(RGBColor(180, 180, 180))
            .draw()?;
        root.present()?;
        Ok(())
    }

    fn tidy(&self) -> Tidy {
        let mut tidy = Tidy::new(&["series", "x", "y", "low", "high"]);
        for group in &self.groups {
            for (category, &(v, lo, hi)) in self.categories.iter().zip(&group.values) {
                if v.is_finite() {
                    tidy.rows.push(vec![
                        group.label.clone(),
                        category.clone(),
                        number(v),
                        number(lo),
                        number(hi),
                    ]);
                }
            }
        }
        tidy
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

/// A chart builder with the house frame every figure shares: the title on top (drawn into
/// `root` here, on two lines when one does not hold it at [`MIN_FONT_PT`]), margins and room
/// for the axis labels, all sized for the text at `print`'s size.
pub fn titled_chart<'a, 'b, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    title: &str,
    print: &Print,
) -> Result<ChartBuilder<'a, 'b, DB>, DrawError>
where
    DB::ErrorType: 'static,
{
    let (points, lines) = title_layout(title, print);
    let size = font(points);
    let style = ("sans-serif", size)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    let (width, _) = root.dim_in_pixel();
    let line = (size * 1.05).round() as i32;
    for (k, text) in lines.iter().enumerate() {
        let at = (width as i32 / 2, frame(12.0) + k as i32 * line);
        root.draw(&Text::new(text.as_str(), at, style.clone()))?;
    }
    let mut builder = ChartBuilder::on(root);
    builder
        .margin(frame(18.0))
        .margin_top(frame(18.0) + lines.len() as i32 * line)
        .margin_right(frame(34.0))
        .x_label_area_size(frame(56.0))
        .y_label_area_size(frame(78.0));
    Ok(builder)
}

/// The size of a title, points, and its lines: [`TITLE_PT`], or smaller (down to
/// [`MIN_FONT_PT`]) for a title that would not fit across the figure, then on two lines
/// (split at the space nearest its middle).
fn title_layout(title: &str, print: &Print) -> (f64, Vec<String>) {
    let across = f64::from(print.size().0) - f64::from(2 * frame(18.0));
    // titles hold capitals and wide signs: 0.64 of the size per character
    let fit =
        |text: &str| across / (0.64 * Print::pixels(1.0) * text.chars().count().max(1) as f64);
    if fit(title) >= MIN_FONT_PT {
        return (fit(title).min(TITLE_PT), vec![title.to_string()]);
    }
    let lines = split_in_two(title);
    let widest = lines.iter().map(|l| fit(l)).fold(f64::INFINITY, f64::min);
    (widest.clamp(MIN_FONT_PT, TITLE_PT), lines)
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

    /// Two series with intervals on a log axis; `apart` keeps their bands from overlapping.
    fn two_series(apart: bool) -> Chart {
        let second = if apart { 5.0 } else { 0.05 };
        Chart {
            title: "test".into(),
            x_label: "x (s)".into(),
            y_label: "y".into(),
            x: Axis {
                from: 0.0,
                to: 3.0,
                log: true,
            },
            y: (0.0, 7.0),
            series: vec![
                Series {
                    label: "a".into(),
                    points: vec![(0.0, 0.05), (3f64.log10(), 0.5), (3.0, 0.95)],
                    mark: Mark::LinePoints,
                    style: 0,
                    band: Some(vec![(0.0, 0.0, 0.1), (3.0, 0.9, 1.0)]),
                },
                Series {
                    label: "b, with \"quotes\"".into(),
                    points: vec![(0.0, second), (3.0, second + 1.0)],
                    mark: Mark::LinePoints,
                    style: 1,
                    band: Some(vec![(0.0, second - 0.05, second + 0.05)]),
                },
            ],
            legend: SeriesLabelPosition::LowerRight,
            categories: None,
        }
    }

    /// The default width at `dpi`.
    fn at(dpi: u32) -> Print {
        Print {
            dpi,
            ..Print::default()
        }
    }

    /// A PNG's width and height from its header.
    fn png_size(path: &Path) -> (u32, u32) {
        let bytes = std::fs::read(path).unwrap();
        assert!(
            bytes.starts_with(b"\x89PNG"),
            "{} is no PNG",
            path.display()
        );
        let word = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
        (word(16), word(20))
    }

    #[test]
    fn writes_png_svg_pdf_and_the_csv_of_the_points_drawn() {
        let dir = tempfile::tempdir().unwrap();
        let chart = two_series(true);
        let files = chart.save(dir.path(), "a", at(150)).unwrap();
        let names: Vec<String> = files
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a.png", "a.svg", "a.pdf", "a.csv"]);
        assert_eq!(png_size(&files[0]), SIZE);
        let svg = std::fs::read_to_string(&files[1]).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("test"));
        let pdf = std::fs::read(&files[2]).unwrap();
        assert!(pdf.starts_with(b"%PDF"), "not a PDF");
        // The embedded font, subset, carries the text.
        assert!(
            pdf.windows(10).any(|w| w == b"DejaVuSans"),
            "the PDF lacks the embedded font"
        );
        let mut csv = csv::Reader::from_path(&files[3]).unwrap();
        assert_eq!(
            csv.headers().unwrap(),
            vec!["series", "x", "y", "low", "high"]
        );
        let rows: Vec<Vec<String>> = csv
            .records()
            .map(|r| r.unwrap().iter().map(String::from).collect())
            .collect();
        let row = |fields: &[&str]| fields.iter().map(|f| f.to_string()).collect::<Vec<_>>();
        // One row per point drawn, x back in data units (the axis is log10), the interval
        // where the series has one at that x.
        assert_eq!(
            rows,
            vec![
                row(&["a", "1", "0.05", "0", "0.1"]),
                row(&["a", "3", "0.5", "", ""]),
                row(&["a", "1000", "0.95", "0.9", "1"]),
                row(&["b, with \"quotes\"", "1", "5", "4.95", "5.05"]),
                row(&["b, with \"quotes\"", "1000", "6", "", ""]),
            ]
        );
        let total: usize = chart.series.iter().map(|s| s.points.len()).sum();
        assert_eq!(rows.len(), total);
    }

    #[test]
    fn the_png_grows_with_the_resolution() {
        let dir = tempfile::tempdir().unwrap();
        let chart = two_series(true);
        let at_300 = chart.save(dir.path(), "a", at(300)).unwrap();
        assert_eq!(png_size(&at_300[0]), (1920, 1280));
        let bytes = std::fs::read(&at_300[0]).unwrap();
        // pHYs: 300 dpi is 11811 pixels per metre
        let phys = bytes.windows(4).position(|w| w == b"pHYs").unwrap();
        let per_metre = u32::from_be_bytes(bytes[phys + 4..phys + 8].try_into().unwrap());
        assert_eq!(per_metre, 11811);
        let at_75 = chart.save(dir.path(), "b", at(75)).unwrap();
        assert_eq!(png_size(&at_75[0]), (480, 320));
        // the SVG and the PDF page do not change with the PNG's resolution
        assert_eq!(
            std::fs::read(&at_300[1]).unwrap(),
            std::fs::read(&at_75[1]).unwrap()
        );
        assert!(chart.save(dir.path(), "c", at(0)).is_err());
    }

    #[test]
    fn overlapping_bands_become_error_bars_side_by_side() {
        let apart = two_series(true);
        assert!(!apart.error_bars());
        assert_eq!(apart.dodge(0, false), 0.0);
        let close = two_series(false);
        assert!(close.error_bars());
        let (a, b) = (close.dodge(0, true), close.dodge(1, true));
        assert!(a < 0.0 && b > 0.0 && (a + b).abs() < 1e-12, "{a} {b}");
        // drawn: whiskers (lines with caps) and no shaded band
        let dir = tempfile::tempdir().unwrap();
        close.save(dir.path(), "close", at(150)).unwrap();
        let svg = std::fs::read_to_string(dir.path().join("close.svg")).unwrap();
        assert!(!svg.contains("fill-opacity=\"0.1\""), "a band was drawn");
        apart.save(dir.path(), "apart", at(150)).unwrap();
        let svg = std::fs::read_to_string(dir.path().join("apart.svg")).unwrap();
        assert!(svg.contains("opacity=\"0.1\""), "no band drawn");
    }

    #[test]
    fn each_series_is_drawn_in_its_own_colour_and_dashes() {
        let dir = tempfile::tempdir().unwrap();
        two_series(true).save(dir.path(), "s", at(150)).unwrap();
        let svg = std::fs::read_to_string(dir.path().join("s.svg")).unwrap();
        for i in 0..2 {
            let RGBColor(r, g, b) = Style::nth(i).color;
            let hex = format!("#{r:02X}{g:02X}{b:02X}");
            assert!(svg.contains(&hex), "series {i}'s colour {hex} missing");
        }
        // series 0 is solid, series 1 dashed: its line is drawn in many pieces
        let RGBColor(r, g, b) = Style::nth(1).color;
        let pieces = svg
            .matches(&format!("<polyline fill=\"none\" opacity=\"1\" stroke=\"#{r:02X}{g:02X}{b:02X}\" stroke-width=\"2\""))
            .count();
        assert!(pieces > 10, "{pieces} pieces of a dashed line");
    }

    #[test]
    fn long_category_names_go_on_two_lines() {
        let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            category_layout(&names(&["KTH", "SDSC"]), 760.0),
            (font(TICK_PT), None)
        );
        let many: Vec<String> = names(&["paper site", "exact estimates", "feedback: slowdown"])
            .into_iter()
            .cycle()
            .take(12)
            .collect();
        let (size, lines) = category_layout(&many, 760.0);
        assert!(size >= font(MIN_FONT_PT), "{size}");
        let lines = lines.unwrap();
        assert_eq!(lines[1], ["exact", "estimates"]);
        assert_eq!(lines[2], ["feedback:", "slowdown"]);
        assert_eq!(split_in_two("thirds"), ["thirds"]);
    }

    #[test]
    fn sparse_markers_sit_on_the_line_at_staggered_places() {
        let steps = ecdf_steps(&[0, 10, 20], &[0.2, 0.6, 1.0], |x| x);
        let a = sparse_markers(&steps, 0.0, 20.0, 0.25);
        let b = sparse_markers(&steps, 0.0, 20.0, 0.75);
        assert!(a.len() >= 7 && b.len() >= 7, "{a:?} {b:?}");
        assert!(a.iter().zip(&b).all(|(p, q)| p.0 != q.0));
        // on the steps: the level reached at the last value at or before x
        assert_eq!(a[0], (0.625, 0.2));
        assert_eq!(a[4], (10.625, 0.6));
    }
}
