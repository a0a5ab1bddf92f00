//! Writing a figure's files: plotters draws the figure once, as SVG; the PNG (at the chosen
//! resolution) and the PDF are rendered from that SVG with the embedded font (resvg and svg2pdf,
//! through usvg), so the three show the same picture with the same text; the CSV beside them
//! holds the points drawn ([`Tidy`], written with the `csv` crate).

use std::io::BufWriter;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::error::PlotError;

/// DejaVu Sans, see `assets/fonts/LICENSE`: the only font of every figure, in every format.
pub static FONT: &[u8] = include_bytes!("../assets/fonts/DejaVuSans.ttf");

/// The font's family name, as the SVG renderers look it up.
const FAMILY: &str = "DejaVu Sans";

/// The resolution a figure's size is given at: a figure of 960 x 640 SVG pixels is 6.4 x 4.27
/// inches; its PNG at `dpi` has `dpi / 150` times as many pixels each way, its PDF page is
/// 6.4 x 4.27 inches.
pub const BASE_DPI: u32 = 150;

/// The PNG resolutions accepted (`--dpi`).
pub const DPI_RANGE: RangeInclusive<u32> = 30..=1200;

/// The default PNG resolution (`--dpi`).
pub const DEFAULT_DPI: u32 = BASE_DPI;

/// The default print width of a figure, inches (`--width`): 960 x 640 SVG pixels.
pub const DEFAULT_WIDTH: f64 = 6.4;

/// The print widths accepted (`--width`), inches: below 2 inches the axes and their 7 pt labels
/// leave no room for the data.
pub const WIDTH_RANGE: RangeInclusive<f64> = 2.0..=20.0;

/// Named print widths (`--width PRESET`), inches, each narrow enough for the journals' layouts
/// it serves so that a figure is never scaled down to fit (which would shrink its text below
/// the sizes it was drawn with):
///
/// - `column`, 3.3 in: one column of a two-column page: ACM's `acmart` (3.33 in), IEEE's
///   transactions and conferences (3.5 in), Elsevier's single column (90 mm, 3.54 in), Springer
///   and Nature's single column (84 and 89 mm, 3.3 and 3.5 in);
/// - `page`, 6.8 in: the text width of those two-column pages (ACM 7.0 in, IEEE 7.16 in,
///   Elsevier's double column 190 mm, 7.48 in; Nature 183 mm, 7.2 in) and of a one-column
///   letter or A4 page with 1-inch margins (6.5 in is the narrowest; 6.8 in is placed at 96 %).
pub const WIDTH_PRESETS: [(&str, f64); 2] = [("column", 3.3), ("page", 6.8)];

/// The smallest text of a figure at print size, points: every tick label, legend entry, key,
/// axis label and title is at least this large at the width the figure is drawn for.
pub const MIN_FONT_PT: f64 = 7.0;

/// A print width from `--width`: a number of inches in [`WIDTH_RANGE`] or a preset of
/// [`WIDTH_PRESETS`]; the error names the option and says what it takes.
pub fn parse_width(text: &str) -> Result<f64, PlotError> {
    let text = text.trim();
    let presets = WIDTH_PRESETS
        .iter()
        .map(|(name, inches)| format!("{name} ({inches} in)"))
        .collect::<Vec<_>>()
        .join(", ");
    if let Some(&(_, inches)) = WIDTH_PRESETS
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(text))
    {
        return Ok(inches);
    }
    let inches: f64 = text.strip_suffix("in").unwrap_or(text).trim().parse().map_err(|_| {
        PlotError::Invalid(format!(
            "--width {text:?} is neither a number of inches nor a preset; the presets are {presets}"
        ))
    })?;
    check_width(inches)?;
    Ok(inches)
}

/// Refuses a print width outside [`WIDTH_RANGE`] (or not a number).
pub fn check_width(inches: f64) -> Result<(), PlotError> {
    crate::error::ensure!(
        inches.is_finite() && inches > 0.0,
        "--width must be a number of inches > 0 (from {} to {}) or a preset, got {inches}",
        WIDTH_RANGE.start(),
        WIDTH_RANGE.end()
    );
    crate::error::ensure!(
        WIDTH_RANGE.contains(&inches),
        "--width must be from {} to {} inches, got {inches}",
        WIDTH_RANGE.start(),
        WIDTH_RANGE.end()
    );
    Ok(())
}

/// How a figure is printed: its width in inches (the height follows at 2:3) and its PNG's
/// resolution. The SVG holds [`BASE_DPI`] pixels per inch of print, so a font of `p` points is
/// `p * 150 / 72` SVG pixels at every width: the text keeps its printed size and a narrower
/// figure has less room for the data, not smaller text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Print {
    /// The print width, inches.
    pub width: f64,
    /// The PNG's resolution, dots per inch.
    pub dpi: u32,
}

impl Print {
    /// A print size, both values checked.
    pub fn new(width: f64, dpi: u32) -> Result<Print, PlotError> {
        check_width(width)?;
        check_dpi(dpi)?;
        Ok(Print { width, dpi })
    }

    /// The figure's size in SVG pixels: [`BASE_DPI`] per inch; 2:3 from the default width up
    /// (960 x 640 at 6.4 in), taller below it, since the title and the axes' labels keep their
    /// printed size and would leave a narrow figure little height for the data: up to 0.8 in
    /// more (0.39 in at 3.3 in: 495 x 388).
    pub fn size(&self) -> (u32, u32) {
        let width = (self.width * f64::from(BASE_DPI)).round().max(1.0);
        let extra = 0.8 * (1.0 - self.width / DEFAULT_WIDTH).max(0.0);
        let height = (self.width * 2.0 / 3.0 + extra) * f64::from(BASE_DPI);
        (width as u32, height.round() as u32)
    }

    /// The SVG pixels of a print length of `points`.
    pub fn pixels(points: f64) -> f64 {
        points * f64::from(BASE_DPI) / 72.0
    }
}

impl Default for Print {
    fn default() -> Print {
        Print {
            width: DEFAULT_WIDTH,
            dpi: DEFAULT_DPI,
        }
    }
}

/// Refuses a resolution outside [`DPI_RANGE`].
pub fn check_dpi(dpi: u32) -> Result<(), PlotError> {
    crate::error::ensure!(
        DPI_RANGE.contains(&dpi),
        "--dpi must be from {} to {}, got {dpi}",
        DPI_RANGE.start(),
        DPI_RANGE.end()
    );
    Ok(())
}

/// A tidy table of the points a figure draws: a header, then one row per point.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tidy {
    /// Column names.
    pub header: Vec<String>,
    /// The rows, as many fields as the header.
    pub rows: Vec<Vec<String>>,
}

impl Tidy {
    /// An empty table with these columns.
    pub fn new(header: &[&str]) -> Tidy {
        Tidy {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }
}

/// A number for the CSV: 12 significant digits at most (so 10^log10(3) is 3), empty for NaN.
pub fn number(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let rounded: f64 = format!("{v:.11e}").parse().unwrap_or(v);
    if rounded == 0.0 {
        "0".to_string()
    } else {
        rounded.to_string()
    }
}

/// The font database of the SVG renderers: the embedded font alone, as every generic family.
fn fonts() -> Arc<usvg::fontdb::Database> {
    static FONTS: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = usvg::fontdb::Database::new();
            db.load_font_data(FONT.to_vec());
            db.set_sans_serif_family(FAMILY);
            db.set_serif_family(FAMILY);
            db.set_monospace_family(FAMILY);
            Arc::new(db)
        })
        .clone()
}

/// Writes `dir/stem.png` (at `dpi`), `.svg`, `.pdf` and `.csv` from the figure's SVG text and
/// its points, and returns their paths in that order.
pub fn write_figure(
    svg: &str,
    tidy: &Tidy,
    dir: &Path,
    stem: &str,
    dpi: u32,
) -> Result<Vec<PathBuf>, PlotError> {
    check_dpi(dpi)?;
    let path = |extension: &str| dir.join(format!("{stem}.{extension}"));
    let (png, svg_path, pdf, csv) = (path("png"), path("svg"), path("pdf"), path("csv"));
    let failed = |path: &Path, message: String| PlotError::Draw {
        path: path.to_path_buf(),
        message,
    };
    let options = usvg::Options {
        font_family: FAMILY.to_string(),
        fontdb: fonts(),
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(svg, &options).map_err(|e| failed(&svg_path, e.to_string()))?;

    write_png(&tree, dpi, &png)?;
    write(&svg_path, svg.as_bytes())?;
    let page = svg2pdf::PageOptions {
        dpi: BASE_DPI as f32,
    };
    let bytes = svg2pdf::to_pdf(&tree, svg2pdf::ConversionOptions::default(), page)
        .map_err(|e| failed(&pdf, e.to_string()))?;
    write(&pdf, &bytes)?;
    write_csv(tidy, &csv)?;
    Ok(vec![png, svg_path, pdf, csv])
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), PlotError> {
    std::fs::write(path, bytes).map_err(|source| PlotError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Renders the tree at `dpi` on white and writes it as an 8-bit RGB PNG that records its
/// resolution (a pHYs chunk), so a document places it at its size in inches.
fn write_png(tree: &usvg::Tree, dpi: u32, path: &Path) -> Result<(), PlotError> {
    let failed = |message: String| PlotError::Draw {
        path: path.to_path_buf(),
        message,
    };
    let scale = dpi as f32 / BASE_DPI as f32;
    let size = tree.size();
    let (width, height) = (
        (size.width() * scale).round().max(1.0) as u32,
        (size.height() * scale).round().max(1.0) as u32,
    );
    let mut pixmap = resvg::tiny_skia::Pixmap::new(width, height)
        .ok_or_else(|| failed(format!("cannot make an image of {width} x {height} pixels")))?;
    pixmap.fill(resvg::tiny_skia::Color::WHITE);
    resvg::render(
        tree,
        resvg::tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    // Opaque everywhere (white underneath), so the premultiplied pixels are the colours.
    let rgb: Vec<u8> = pixmap
        .data()
        .chunks_exact(4)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    let file = std::fs::File::create(path).map_err(|source| PlotError::Write {
        path: path.to_path_buf(),
        source,
    })?;
    let mut encoder = png::Encoder::new(BufWriter::new(file), width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Best);
    encoder.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
    let per_metre = (f64::from(dpi) / 0.0254).round() as u32;
    encoder.set_pixel_dims(Some(png::PixelDimensions {
        xppu: per_metre,
        yppu: per_metre,
        unit: png::Unit::Meter,
    }));
    let mut writer = encoder.write_header().map_err(|e| failed(e.to_string()))?;
    writer
        .write_image_data(&rgb)
        .map_err(|e| failed(e.to_string()))?;
    writer.finish().map_err(|e| failed(e.to_string()))
}

fn write_csv(tidy: &Tidy, path: &Path) -> Result<(), PlotError> {
    let failed = |source: csv::Error| PlotError::Csv {
        path: path.to_path_buf(),
        source,
    };
    let mut writer = csv::Writer::from_path(path).map_err(failed)?;
    writer.write_record(&tidy.header).map_err(failed)?;
    for row in &tidy.rows {
        writer.write_record(row).map_err(failed)?;
    }
    writer.flush().map_err(|source| PlotError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// The SVG's width attribute (pixels) and every `font-size` in it, in points at print size:
/// the SVG's width printed at `inches`. For the tests that every text is legible.
#[cfg(test)]
pub(crate) fn font_points(svg: &str, inches: f64) -> (f64, Vec<f64>) {
    let value = |from: &str| -> f64 {
        let end = from.find('"').unwrap_or(from.len());
        from[..end].parse().unwrap_or(f64::NAN)
    };
    let width = svg.strip_prefix("<svg width=\"").map_or(f64::NAN, value);
    let points = svg
        .match_indices("font-size=\"")
        .map(|(at, attribute)| value(&svg[at + attribute.len()..]) * inches * 72.0 / width)
        .collect();
    (width, points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_numbers_are_short() {
        assert_eq!(number(10f64.powf(3f64.log10())), "3");
        assert_eq!(number(0.1 + 0.2), "0.3");
        assert_eq!(number(62.40123456789), "62.4012345679");
        assert_eq!(number(-0.0), "0");
        assert_eq!(number(f64::NAN), "");
        assert_eq!(number(2.5e-7), "0.00000025");
    }

    #[test]
    fn widths_are_inches_or_presets_and_bad_ones_are_named() {
        assert_eq!(parse_width("column").unwrap(), 3.3);
        assert_eq!(parse_width("Page").unwrap(), 6.8);
        assert_eq!(parse_width("5").unwrap(), 5.0);
        assert_eq!(parse_width("3.5in").unwrap(), 3.5);
        let refused = |text: &str| parse_width(text).unwrap_err().to_string();
        assert_eq!(
            refused("0"),
            "--width must be a number of inches > 0 (from 2 to 20) or a preset, got 0"
        );
        assert!(refused("-3").starts_with("--width must be a number of inches > 0"));
        assert_eq!(refused("1"), "--width must be from 2 to 20 inches, got 1");
        assert_eq!(
            refused("colum"),
            "--width \"colum\" is neither a number of inches nor a preset; the presets are column (3.3 in), page (6.8 in)"
        );
        assert!(refused("NaN").starts_with("--width must be"));
        assert_eq!(Print::default().size(), (960, 640));
        assert_eq!(Print::new(3.3, 150).unwrap().size(), (495, 388));
        assert_eq!(Print::new(12.8, 150).unwrap().size(), (1920, 1280));
        assert!(Print::new(3.3, 0).is_err());
    }

    #[test]
    fn resolutions_outside_the_range_are_refused() {
        assert!(check_dpi(150).is_ok());
        assert!(check_dpi(300).is_ok());
        assert_eq!(
            check_dpi(0).unwrap_err().to_string(),
            "--dpi must be from 30 to 1200, got 0"
        );
        assert!(check_dpi(5000).is_err());
    }
}
