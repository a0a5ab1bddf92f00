//! How series tell themselves apart without colour: each series' [`Style`] has its own colour
//! (Okabe and Ito's palette for colour-blind readers), marker shape (filled or open), dash
//! pattern and, for bars, hatching, so that a figure printed in greyscale still reads. The
//! drawing elements here ([`Stroke`], [`Marker`], [`Whisker`], [`Hatched`], [`Key`]) work in
//! the backend's pixels, so dash lengths and marker sizes are the same on every axis.

use plotters::element::{Drawable, PointCollection};
use plotters::prelude::*;
use plotters_backend::{BackendCoord, DrawingErrorKind};

/// Okabe and Ito's colours, without the yellow (too light on white) and the black (kept for
/// the bold series): blue, vermillion, bluish green, reddish purple, orange, sky blue, grey.
pub const PALETTE: [RGBColor; 7] = [
    RGBColor(0x00, 0x72, 0xb2),
    RGBColor(0xd5, 0x5e, 0x00),
    RGBColor(0x00, 0x9e, 0x73),
    RGBColor(0xcc, 0x79, 0xa7),
    RGBColor(0xe6, 0x9f, 0x00),
    RGBColor(0x56, 0xb4, 0xe9),
    RGBColor(0x66, 0x66, 0x66),
];

/// Dash patterns (on, off, on, off, ... in pixels); empty: solid.
const DASHES: [&[i32]; 5] = [&[], &[14, 6], &[3, 5], &[14, 5, 3, 5], &[24, 8]];

/// The shape of a marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A circle.
    Circle,
    /// A square.
    Square,
    /// A triangle pointing up.
    TriangleUp,
    /// A diamond.
    Diamond,
    /// A triangle pointing down.
    TriangleDown,
    /// A diagonal cross.
    Cross,
}

/// Marker shapes with whether they are filled, in the order the series take them.
const MARKERS: [(Shape, bool); 8] = [
    (Shape::Circle, true),
    (Shape::Square, false),
    (Shape::TriangleUp, true),
    (Shape::Diamond, false),
    (Shape::TriangleDown, true),
    (Shape::Circle, false),
    (Shape::Square, true),
    (Shape::Cross, false),
];

/// Hatching of bars, in the order the groups take it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hatch {
    /// Solid fill of the group's colour.
    Solid,
    /// Lines rising to the right.
    Rising,
    /// Lines falling to the right.
    Falling,
    /// Both diagonals.
    Crossed,
    /// Horizontal lines.
    Horizontal,
    /// Vertical lines.
    Vertical,
}

const HATCHES: [Hatch; 6] = [
    Hatch::Solid,
    Hatch::Rising,
    Hatch::Falling,
    Hatch::Crossed,
    Hatch::Horizontal,
    Hatch::Vertical,
];

/// Everything that tells one series from another.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Style {
    /// The colour.
    pub color: RGBColor,
    /// The marker's shape.
    pub shape: Shape,
    /// Whether the marker is filled (else open: white inside).
    pub filled: bool,
    /// The line's dash pattern (empty: solid).
    pub dash: &'static [i32],
    /// The hatching of bars.
    pub hatch: Hatch,
}

impl Style {
    /// The style of the `i`-th series: colour, marker, dash and hatch each cycle through their
    /// lists, so the first 7 series differ in all of them and any two of the first 40 differ in
    /// at least one besides colour.
    pub fn nth(i: usize) -> Style {
        let (shape, filled) = MARKERS[i % MARKERS.len()];
        Style {
            color: PALETTE[i % PALETTE.len()],
            shape,
            filled,
            dash: DASHES[i % DASHES.len()],
            hatch: HATCHES[i % HATCHES.len()],
        }
    }

    /// The bold series (a combined or headline curve): black, solid, filled circles.
    pub fn bold() -> Style {
        Style {
            color: BLACK,
            shape: Shape::Circle,
            filled: true,
            dash: &[],
            hatch: Hatch::Solid,
        }
    }

    /// A shaded area (what the series happen against): mid grey, drawn faint.
    pub fn shade() -> Style {
        Style {
            color: RGBColor(0x80, 0x80, 0x80),
            shape: Shape::Square,
            filled: true,
            dash: &[],
            hatch: Hatch::Solid,
        }
    }

    /// A reference curve (a published fit): grey, long dashes.
    pub fn reference() -> Style {
        Style {
            color: RGBColor(0x44, 0x44, 0x44),
            shape: Shape::Cross,
            filled: false,
            dash: &[24, 8],
            hatch: Hatch::Solid,
        }
    }
}

/// How strongly a shaded area's grey ([`Style::shade`]) covers the white under it (0 to 1).
pub const SHADE_OPACITY: f64 = 0.3;

/// A polyline with a dash pattern, the pattern laid in pixels along the whole line.
pub struct Stroke<Coord> {
    points: Vec<Coord>,
    dash: &'static [i32],
    style: ShapeStyle,
}

impl<Coord> Stroke<Coord> {
    /// A polyline through `points`.
    pub fn new(points: Vec<Coord>, dash: &'static [i32], style: ShapeStyle) -> Self {
        Stroke {
            points,
            dash,
            style,
        }
    }
}

impl<'a, Coord> PointCollection<'a, Coord> for &'a Stroke<Coord> {
    type Point = &'a Coord;
    type IntoIter = &'a [Coord];
    fn point_iter(self) -> &'a [Coord] {
        &self.points
    }
}

impl<Coord, DB: DrawingBackend> Drawable<DB> for Stroke<Coord> {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        points: I,
        backend: &mut DB,
        _: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let points: Vec<BackendCoord> = points.collect();
        for piece in dashes(&points, self.dash) {
            backend.draw_path(piece, &self.style)?;
        }
        Ok(())
    }
}

/// The pieces of a polyline that a dash pattern draws (the whole line if the pattern is empty),
/// without pieces of no length (a renderer cannot stroke them).
pub fn dashes(points: &[BackendCoord], pattern: &[i32]) -> Vec<Vec<BackendCoord>> {
    let mut pieces = split(points, pattern);
    pieces.retain(|piece| piece.iter().any(|p| *p != piece[0]));
    pieces
}

fn split(points: &[BackendCoord], pattern: &[i32]) -> Vec<Vec<BackendCoord>> {
    if pattern.is_empty() || pattern.iter().all(|&d| d <= 0) {
        return vec![points.to_vec()];
    }
    let mut pieces = Vec::new();
    let mut current: Vec<(f64, f64)> = Vec::new();
    // index into the pattern and the length left in its current entry
    let (mut k, mut left) = (0, f64::from(pattern[0]));
    let on = |k: usize| k % 2 == 0;
    let round = |p: (f64, f64)| (p.0.round() as i32, p.1.round() as i32);
    for pair in points.windows(2) {
        let (a, b) = (
            (f64::from(pair[0].0), f64::from(pair[0].1)),
            (f64::from(pair[1].0), f64::from(pair[1].1)),
        );
        let length = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
        let mut done = 0.0;
        if on(k) && current.is_empty() {
            current.push(a);
        }
        while length - done > left {
            done += left;
            let t = done / length;
            let p = (a.0 + t * (b.0 - a.0), a.1 + t * (b.1 - a.1));
            if on(k) {
                current.push(p);
                pieces.push(current.drain(..).map(round).collect());
            } else {
                current.push(p);
            }
            k = (k + 1) % pattern.len();
            left = f64::from(pattern[k].max(1));
        }
        left -= length - done;
        if on(k) {
            current.push(b);
        }
    }
    if current.len() > 1 {
        pieces.push(current.into_iter().map(round).collect());
    }
    pieces
}

/// A marker of a [`Style`] at a point: `size` is its half width in pixels.
pub struct Marker<Coord> {
    at: Coord,
    style: Style,
    size: i32,
}

impl<Coord> Marker<Coord> {
    /// A marker at `at`.
    pub fn new(at: Coord, style: Style, size: i32) -> Self {
        Marker { at, style, size }
    }
}

impl<'a, Coord> PointCollection<'a, Coord> for &'a Marker<Coord> {
    type Point = &'a Coord;
    type IntoIter = std::iter::Once<&'a Coord>;
    fn point_iter(self) -> Self::IntoIter {
        std::iter::once(&self.at)
    }
}

impl<Coord, DB: DrawingBackend> Drawable<DB> for Marker<Coord> {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        mut points: I,
        backend: &mut DB,
        _: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        match points.next() {
            Some(at) => draw_marker(backend, at, self.style, self.size),
            None => Ok(()),
        }
    }
}

/// Draws a marker of `style` centred on `(x, y)`.
fn draw_marker<DB: DrawingBackend>(
    backend: &mut DB,
    (x, y): BackendCoord,
    style: Style,
    r: i32,
) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
    let color = style.color;
    let line = ShapeStyle::from(&color).stroke_width(2);
    let inside = if style.filled {
        color.filled()
    } else {
        WHITE.filled()
    };
    let polygon: Vec<BackendCoord> = match style.shape {
        Shape::Circle => {
            let radius = r.unsigned_abs();
            backend.draw_circle((x, y), radius, &inside, true)?;
            return backend.draw_circle((x, y), radius, &line, false);
        }
        Shape::Square => {
            let s = r * 9 / 10;
            vec![
                (x - s, y - s),
                (x + s, y - s),
                (x + s, y + s),
                (x - s, y + s),
            ]
        }
        Shape::TriangleUp => {
            let h = r * 6 / 10;
            vec![
                (x, y - r - 1),
                (x + r + 1, y + h + 1),
                (x - r - 1, y + h + 1),
            ]
        }
        Shape::TriangleDown => {
            let h = r * 6 / 10;
            vec![
                (x, y + r + 1),
                (x + r + 1, y - h - 1),
                (x - r - 1, y - h - 1),
            ]
        }
        Shape::Diamond => {
            let d = r + 1;
            vec![(x, y - d), (x + d, y), (x, y + d), (x - d, y)]
        }
        Shape::Cross => {
            let s = r * 8 / 10;
            backend.draw_line((x - s, y - s), (x + s, y + s), &line)?;
            return backend.draw_line((x - s, y + s), (x + s, y - s), &line);
        }
    };
    backend.fill_polygon(polygon.iter().copied(), &inside)?;
    let mut closed = polygon.clone();
    closed.push(polygon[0]);
    backend.draw_path(closed, &line)
}

/// An error bar: a vertical line from low to high with a cap at each end.
pub struct Whisker {
    points: [(f64, f64); 2],
    style: ShapeStyle,
    cap: i32,
}

impl Whisker {
    /// The interval `low..high` at `x`, with caps `cap` pixels wide on each side.
    pub fn new(x: f64, low: f64, high: f64, style: ShapeStyle, cap: i32) -> Self {
        Whisker {
            points: [(x, low), (x, high)],
            style,
            cap,
        }
    }
}

impl<'a> PointCollection<'a, (f64, f64)> for &'a Whisker {
    type Point = &'a (f64, f64);
    type IntoIter = &'a [(f64, f64)];
    fn point_iter(self) -> &'a [(f64, f64)] {
        &self.points
    }
}

impl<DB: DrawingBackend> Drawable<DB> for Whisker {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        points: I,
        backend: &mut DB,
        _: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let ends: Vec<BackendCoord> = points.collect();
        if let [low, high] = ends[..] {
            if low != high {
                backend.draw_line(low, high, &self.style)?;
            }
            for (x, y) in [low, high] {
                backend.draw_line((x - self.cap, y), (x + self.cap, y), &self.style)?;
            }
        }
        Ok(())
    }
}

/// A filled rectangle at least one pixel wide and high (a job of a few seconds on one of
/// thousands of processors still shows, and no renderer meets a rectangle of no size).
pub struct Block {
    corners: [(f64, f64); 2],
    style: ShapeStyle,
}

impl Block {
    /// The rectangle with corners `corners` (data units), drawn in `style`.
    pub fn new(corners: [(f64, f64); 2], style: ShapeStyle) -> Self {
        Block { corners, style }
    }
}

impl<'a> PointCollection<'a, (f64, f64)> for &'a Block {
    type Point = &'a (f64, f64);
    type IntoIter = &'a [(f64, f64)];
    fn point_iter(self) -> &'a [(f64, f64)] {
        &self.corners
    }
}

impl<DB: DrawingBackend> Drawable<DB> for Block {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        points: I,
        backend: &mut DB,
        _: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let corners: Vec<BackendCoord> = points.collect();
        if let [a, b] = corners[..] {
            let (left, top) = (a.0.min(b.0), a.1.min(b.1));
            let (right, bottom) = (a.0.max(b.0).max(left + 1), a.1.max(b.1).max(top + 1));
            backend.draw_rect((left, top), (right, bottom), &self.style, self.style.filled)?;
        }
        Ok(())
    }
}

/// A bar: a rectangle filled with its group's [`Hatch`] in its colour, outlined.
pub struct Hatched {
    corners: [(f64, f64); 2],
    style: Style,
}

impl Hatched {
    /// The bar with corners `corners` (data units).
    pub fn new(corners: [(f64, f64); 2], style: Style) -> Self {
        Hatched { corners, style }
    }
}

impl<'a> PointCollection<'a, (f64, f64)> for &'a Hatched {
    type Point = &'a (f64, f64);
    type IntoIter = &'a [(f64, f64)];
    fn point_iter(self) -> &'a [(f64, f64)] {
        &self.corners
    }
}

impl<DB: DrawingBackend> Drawable<DB> for Hatched {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        points: I,
        backend: &mut DB,
        _: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let corners: Vec<BackendCoord> = points.collect();
        if let [a, b] = corners[..] {
            draw_hatched(backend, a, b, self.style)?;
        }
        Ok(())
    }
}

/// Fills the rectangle between the corners `a` and `b` with `style`'s hatch and outlines it.
fn draw_hatched<DB: DrawingBackend>(
    backend: &mut DB,
    a: BackendCoord,
    b: BackendCoord,
    style: Style,
) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
    let (left, right) = (a.0.min(b.0), a.0.max(b.0));
    let (top, bottom) = (a.1.min(b.1), a.1.max(b.1));
    let color = style.color;
    if style.hatch == Hatch::Solid {
        backend.draw_rect(
            (left, top),
            (right, bottom),
            &color.mix(0.85).filled(),
            true,
        )?;
    } else {
        backend.draw_rect(
            (left, top),
            (right, bottom),
            &color.mix(0.15).filled(),
            true,
        )?;
        let line = ShapeStyle::from(&color).stroke_width(1);
        let step = 7;
        let (w, h) = (right - left, bottom - top);
        let mut lines: Vec<(BackendCoord, BackendCoord)> = Vec::new();
        match style.hatch {
            Hatch::Horizontal => {
                lines.extend(
                    (1..)
                        .map(|k| top + k * step)
                        .take_while(|&y| y < bottom)
                        .map(|y| ((left, y), (right, y))),
                );
            }
            Hatch::Vertical => {
                lines.extend(
                    (1..)
                        .map(|k| left + k * step)
                        .take_while(|&x| x < right)
                        .map(|x| ((x, top), (x, bottom))),
                );
            }
            Hatch::Rising | Hatch::Falling | Hatch::Crossed => {
                // diagonals x - y = c (falling) and x + y = c (rising), clipped to the box
                let rising = matches!(style.hatch, Hatch::Rising | Hatch::Crossed);
                let falling = matches!(style.hatch, Hatch::Falling | Hatch::Crossed);
                let mut c = -h;
                while c <= w {
                    let c0 = c;
                    c += step;
                    // falling: from (left + c0, top) going down-right
                    if falling {
                        let (x0, y0) = if c0 >= 0 { (c0, 0) } else { (0, -c0) };
                        let run = (w - x0).min(h - y0);
                        if run > 0 {
                            lines.push(((left + x0, top + y0), (left + x0 + run, top + y0 + run)));
                        }
                    }
                    if rising {
                        let (x0, y0) = if c0 >= 0 { (c0, h) } else { (0, h + c0) };
                        let run = (w - x0).min(y0);
                        if run > 0 {
                            lines.push(((left + x0, top + y0), (left + x0 + run, top + y0 - run)));
                        }
                    }
                }
            }
            Hatch::Solid => {}
        }
        for (from, to) in lines {
            backend.draw_line(from, to, &line)?;
        }
    }
    let outline = ShapeStyle::from(&color).stroke_width(1);
    backend.draw_rect((left, top), (right, bottom), &outline, false)
}

/// What a legend entry shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// A line sample (dashed as the series), with a marker when `marker`.
    Line {
        /// Whether a marker sits on the sample.
        marker: bool,
        /// The line's width.
        width: u32,
    },
    /// A marker with an error bar through it.
    Point,
    /// A bar sample with the group's hatch.
    Bar,
    /// A sample of a shaded area: a faint grey box.
    Area,
}

/// A legend entry's sample, drawn at the legend row's position (backend pixels).
pub struct Key {
    at: BackendCoord,
    style: Style,
    kind: KeyKind,
}

impl Key {
    /// The sample at `at` (the left end of the legend's sample).
    pub fn new(at: BackendCoord, style: Style, kind: KeyKind) -> Self {
        Key { at, style, kind }
    }
}

impl<'a> PointCollection<'a, BackendCoord> for &'a Key {
    type Point = &'a BackendCoord;
    type IntoIter = std::iter::Once<&'a BackendCoord>;
    fn point_iter(self) -> Self::IntoIter {
        std::iter::once(&self.at)
    }
}

impl<DB: DrawingBackend> Drawable<DB> for Key {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        mut points: I,
        backend: &mut DB,
        _: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let Some((x, y)) = points.next() else {
            return Ok(());
        };
        let color = self.style.color;
        match self.kind {
            KeyKind::Line { marker, width } => {
                let line = ShapeStyle::from(&color).stroke_width(width);
                for piece in dashes(&[(x, y), (x + 32, y)], self.style.dash) {
                    backend.draw_path(piece, &line)?;
                }
                if marker {
                    draw_marker(backend, (x + 16, y), self.style, 5)?;
                }
            }
            KeyKind::Point => {
                let line = ShapeStyle::from(&color).stroke_width(2);
                backend.draw_line((x + 16, y - 7), (x + 16, y + 7), &line)?;
                for cap in [y - 7, y + 7] {
                    backend.draw_line((x + 11, cap), (x + 21, cap), &line)?;
                }
                draw_marker(backend, (x + 16, y), self.style, 5)?;
            }
            KeyKind::Bar => draw_hatched(backend, (x + 2, y - 8), (x + 30, y + 8), self.style)?,
            KeyKind::Area => backend.draw_rect(
                (x + 2, y - 8),
                (x + 30, y + 8),
                &color.mix(SHADE_OPACITY).filled(),
                true,
            )?,
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_series_differ_in_more_than_colour() {
        for i in 0..40 {
            for j in (i + 1)..40 {
                let (a, b) = (Style::nth(i), Style::nth(j));
                let same_mark = a.shape == b.shape && a.filled == b.filled;
                assert!(
                    !same_mark || a.dash != b.dash,
                    "series {i} and {j} share marker and dashes"
                );
            }
        }
        for i in 0..5 {
            for j in (i + 1)..5 {
                let (a, b) = (Style::nth(i), Style::nth(j));
                assert_ne!(a.color, b.color);
                assert_ne!((a.shape, a.filled), (b.shape, b.filled));
                assert_ne!(a.dash, b.dash);
                assert_ne!(a.hatch, b.hatch);
            }
        }
    }

    #[test]
    fn dashes_follow_the_pattern_along_the_line() {
        // a 40 px line in pieces of 10 on, 5 off
        let pieces = dashes(&[(0, 0), (40, 0)], &[10, 5]);
        assert_eq!(
            pieces,
            vec![
                vec![(0, 0), (10, 0)],
                vec![(15, 0), (25, 0)],
                vec![(30, 0), (40, 0)]
            ]
        );
        // the pattern goes on around a corner
        let pieces = dashes(&[(0, 0), (6, 0), (6, 10)], &[10, 5]);
        assert_eq!(pieces[0], vec![(0, 0), (6, 0), (6, 4)]);
        assert_eq!(pieces[1], vec![(6, 9), (6, 10)]);
        assert_eq!(dashes(&[(0, 0), (5, 5)], &[]), vec![vec![(0, 0), (5, 5)]]);
    }
}
