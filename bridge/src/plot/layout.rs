//! The frame every figure shares: a title shrunk (then shortened) until it
//! fits the width, and a legend in a column right of the data area, so it
//! never hides data, with each entry drawn in its series' own style.

use plotters::coord::Shift;
use plotters::prelude::*;

/// Title font size, pixels, when it fits.
const TITLE_SIZE: u32 = 18;
/// The smallest title size before the title is shortened instead.
const MIN_TITLE_SIZE: u32 = 12;
/// Legend font size, pixels.
const LEGEND_SIZE: u32 = 13;
/// Height of one legend row, pixels.
const LEGEND_ROW: i32 = 20;
/// The legend column takes at most this fraction of the width.
const MAX_LEGEND_FRACTION: f64 = 0.3;

/// How a series looks, in its legend entry as in the data area.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Mark {
    /// A line of this width, solid or dashed.
    Line { width: u32, dashed: bool },
    /// Filled circles.
    Dot,
    /// Crosses (lost packets).
    Cross,
    /// Filled bars.
    Bar,
    /// A shaded band around a line (a confidence band).
    Band,
}

/// One row of a legend.
#[derive(Clone, Debug)]
pub(crate) struct LegendEntry {
    pub label: String,
    pub color: RGBColor,
    pub mark: Mark,
}

impl LegendEntry {
    pub fn new(label: impl Into<String>, color: RGBColor, mark: Mark) -> Self {
        LegendEntry {
            label: label.into(),
            color,
            mark,
        }
    }
}

/// What drawing returns: plotters' errors differ per backend, so boxed.
pub(crate) type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn text_width<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, text: &str, size: u32) -> u32
where
    DB::ErrorType: 'static,
{
    area.estimate_text_size(text, &TextStyle::from(("sans-serif", size).into_font()))
        .map(|s| s.0)
        // Without font metrics, a generous guess: 0.6 em per character.
        .unwrap_or((text.chars().count() as f64 * 0.6 * f64::from(size)) as u32)
}

/// `text` at `size`, shortened in the middle with "…" until it is at most
/// `width` pixels wide (the ends of a label say most: the metric, the unit).
pub(crate) fn shorten<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    size: u32,
    width: u32,
) -> String
where
    DB::ErrorType: 'static,
{
    if text_width(area, text, size) <= width {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let mut keep = chars.len();
    while keep > 2 {
        keep -= 1;
        let head = keep.div_ceil(2);
        let tail = keep - head;
        let candidate: String = chars[..head]
            .iter()
            .chain(std::iter::once(&'…'))
            .chain(chars[chars.len() - tail..].iter())
            .collect();
        if text_width(area, &candidate, size) <= width {
            return candidate;
        }
    }
    "…".to_string()
}

/// The title and font size that fit `width`: the full title at the
/// largest size from [`TITLE_SIZE`] down to [`MIN_TITLE_SIZE`] that fits,
/// else the title shortened at the smallest.
pub(crate) fn fit_title<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    width: u32,
) -> (String, u32)
where
    DB::ErrorType: 'static,
{
    for size in (MIN_TITLE_SIZE..=TITLE_SIZE).rev() {
        if text_width(area, title, size) <= width {
            return (title.to_string(), size);
        }
    }
    (shorten(area, title, MIN_TITLE_SIZE, width), MIN_TITLE_SIZE)
}

/// Draws `title` across the top of `root` and returns the area below it.
pub(crate) fn titled<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
) -> Res<DrawingArea<DB, Shift>>
where
    DB::ErrorType: 'static,
{
    let width = root.dim_in_pixel().0.saturating_sub(24);
    let (text, size) = fit_title(root, title, width);
    Ok(root.titled(&text, ("sans-serif", size))?)
}

/// One legend entry per item, each in the colour of its index.
pub(crate) fn legend<T>(items: &[T], mark: Mark, label: impl Fn(&T) -> String) -> Vec<LegendEntry> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| LegendEntry::new(label(item), super::color(i), mark))
        .collect()
}

/// The label of a categorical axis at `x`: category `i` stands at `x = i`,
/// and plotters puts labels on round numbers, so such an axis asks for
/// many labels and shows only those on a category.
pub(crate) fn category_label<S: AsRef<str>>(categories: &[S], x: f64) -> String {
    let i = x.round();
    if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < categories.len() {
        categories[i as usize].as_ref().to_string()
    } else {
        String::new()
    }
}

/// Draws `entries` in a column at the right of `area` and returns the rest
/// for the chart; `area` itself when there is nothing to list. `top` is
/// where the first entry goes (below a panel's caption).
pub(crate) fn with_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[LegendEntry],
    top: i32,
) -> Res<DrawingArea<DB, Shift>>
where
    DB::ErrorType: 'static,
{
    if entries.is_empty() {
        return Ok(area.clone());
    }
    let (w, h) = area.dim_in_pixel();
    let widest = entries
        .iter()
        .map(|e| text_width(area, &e.label, LEGEND_SIZE))
        .max()
        .unwrap_or(0);
    let max_column = (f64::from(w) * MAX_LEGEND_FRACTION) as u32;
    let column = (widest + 56).clamp(120, max_column.max(120));
    let (plot, side) = area.split_horizontally(w.saturating_sub(column));
    let label_width = column.saturating_sub(56);
    let font = ("sans-serif", LEGEND_SIZE).into_font();
    let rows = ((h as i32 - top - 8) / LEGEND_ROW).max(1) as usize;
    let shown = if entries.len() > rows {
        rows - 1
    } else {
        entries.len()
    };
    for (i, e) in entries.iter().take(shown).enumerate() {
        let y = top + i as i32 * LEGEND_ROW + LEGEND_ROW / 2;
        draw_mark(&side, e, (8, y))?;
        side.draw(&Text::new(
            shorten(&side, &e.label, LEGEND_SIZE, label_width),
            (44, y - LEGEND_SIZE as i32 / 2 - 1),
            font.clone(),
        ))?;
    }
    if shown < entries.len() {
        let y = top + shown as i32 * LEGEND_ROW + 2;
        side.draw(&Text::new(
            format!("… and {} more", entries.len() - shown),
            (44, y),
            font.clone(),
        ))?;
    }
    Ok(plot)
}

/// An entry's mark, 28 pixels wide from `(x, y)` (its vertical middle).
fn draw_mark<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    e: &LegendEntry,
    (x, y): (i32, i32),
) -> Res<()>
where
    DB::ErrorType: 'static,
{
    let c = e.color;
    match e.mark {
        Mark::Line {
            width,
            dashed: false,
        } => area.draw(&PathElement::new(
            vec![(x, y), (x + 28, y)],
            c.stroke_width(width),
        ))?,
        Mark::Line {
            width,
            dashed: true,
        } => {
            for s in [0, 11, 22] {
                area.draw(&PathElement::new(
                    vec![(x + s, y), (x + s + 6, y)],
                    c.stroke_width(width),
                ))?;
            }
        }
        Mark::Dot => area.draw(&Circle::new((x + 14, y), 4, c.filled()))?,
        Mark::Cross => area.draw(&Cross::new((x + 14, y), 4, c.stroke_width(2)))?,
        Mark::Bar => area.draw(&Rectangle::new(
            [(x + 6, y - 6), (x + 22, y + 6)],
            c.filled(),
        ))?,
        Mark::Band => {
            area.draw(&Rectangle::new(
                [(x, y - 6), (x + 28, y + 6)],
                c.mix(0.2).filled(),
            ))?;
            area.draw(&PathElement::new(
                vec![(x, y), (x + 28, y)],
                c.stroke_width(2),
            ))?;
        }
    }
    Ok(())
}
