//! A plotters backend that writes a one-page vector PDF: lines, polygons,
//! circles and text become PDF path and text operators (through
//! `pdf-writer`), so a figure scales in a paper without pixels.
//!
//! The page is the figure's size in pixels times [`POINTS_PER_PIXEL`]
//! (1200 x 800 px gives 900 x 600 pt, 12.5 x 8.3 in). Text is set in
//! Helvetica, one of the 14 fonts every PDF reader has, so nothing is
//! embedded; characters outside its WinAnsi encoding print as `?`.
//! Positions and anchors use the metrics of the font the PNG is drawn
//! with, so the layout is the same in every format.

use std::collections::BTreeSet;

use pdf_writer::{Content, Finish, Name, Pdf, Rect, Ref, Str};
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind, FontTransform,
};

/// PDF points per figure pixel: a CSS pixel (1/96 in), as SVG viewers take
/// the SVG's size; exact in binary, so the page size is too.
pub const POINTS_PER_PIXEL: f32 = 0.75;

/// Why a PDF could not be drawn (never in practice: the page is in memory).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct PdfError(String);

/// Draws into a PDF page held in memory; `present` puts the file's bytes
/// into the buffer it was made with.
pub struct PdfBackend<'a> {
    out: &'a mut Vec<u8>,
    size: (u32, u32),
    content: Content,
    /// Opacities used, in percent: one graphics state each.
    alphas: BTreeSet<u8>,
    /// The graphics state set last, so that it is written only on changes.
    fill: Option<(u8, u8, u8)>,
    stroke: Option<(u8, u8, u8)>,
    alpha: Option<u8>,
    width: Option<u32>,
}

impl<'a> PdfBackend<'a> {
    pub fn new(out: &'a mut Vec<u8>, size: (u32, u32)) -> Self {
        PdfBackend {
            out,
            size,
            content: Content::new(),
            alphas: BTreeSet::new(),
            fill: None,
            stroke: None,
            alpha: None,
            width: None,
        }
    }

    /// The PDF file: catalog, one page, its content, the font and the
    /// opacity states it uses.
    fn finish(&mut self) -> Vec<u8> {
        let (catalog, pages, page, contents, font) = (
            Ref::new(1),
            Ref::new(2),
            Ref::new(3),
            Ref::new(4),
            Ref::new(5),
        );
        let mut next = 6;
        let states: Vec<(u8, Ref)> = self
            .alphas
            .iter()
            .map(|&a| {
                next += 1;
                (a, Ref::new(next - 1))
            })
            .collect();
        let info = Ref::new(next);
        let mut pdf = Pdf::new();
        pdf.catalog(catalog).pages(pages);
        pdf.pages(pages).kids([page]).count(1);
        let (w, h) = self.page_size();
        {
            let mut p = pdf.page(page);
            p.parent(pages)
                .media_box(Rect::new(0.0, 0.0, w, h))
                .contents(contents);
            let mut resources = p.resources();
            resources.fonts().pair(Name(b"F1"), font);
            let mut gs = resources.ext_g_states();
            for (a, r) in &states {
                gs.pair(Name(alpha_name(*a).as_bytes()), *r);
            }
            gs.finish();
        }
        let content = std::mem::replace(&mut self.content, Content::new());
        pdf.stream(contents, &content.finish());
        pdf.type1_font(font)
            .base_font(Name(b"Helvetica"))
            .encoding_predefined(Name(b"WinAnsiEncoding"));
        for (a, r) in &states {
            let f = f32::from(*a) / 100.0;
            pdf.ext_graphics(*r).stroking_alpha(f).non_stroking_alpha(f);
        }
        pdf.document_info(info)
            .creator(pdf_writer::TextStr("netloop plot"));
        pdf.finish()
    }

    fn page_size(&self) -> (f32, f32) {
        (
            self.size.0 as f32 * POINTS_PER_PIXEL,
            self.size.1 as f32 * POINTS_PER_PIXEL,
        )
    }

    /// A figure point (pixels, y down) in page points (y up).
    fn at(&self, (x, y): (i32, i32)) -> (f32, f32) {
        self.at_f(x as f32, y as f32)
    }

    fn at_f(&self, x: f32, y: f32) -> (f32, f32) {
        (
            x * POINTS_PER_PIXEL,
            (self.size.1 as f32 - y) * POINTS_PER_PIXEL,
        )
    }

    /// Sets the colour (and its opacity) for stroking or filling; false
    /// when the colour is fully transparent and nothing should be drawn.
    fn paint(&mut self, color: BackendColor, fill: bool) -> bool {
        if color.alpha <= 0.0 {
            return false;
        }
        let rgb = color.rgb;
        let (r, g, b) = (
            f32::from(rgb.0) / 255.0,
            f32::from(rgb.1) / 255.0,
            f32::from(rgb.2) / 255.0,
        );
        if fill && self.fill != Some(rgb) {
            self.content.set_fill_rgb(r, g, b);
            self.fill = Some(rgb);
        } else if !fill && self.stroke != Some(rgb) {
            self.content.set_stroke_rgb(r, g, b);
            self.stroke = Some(rgb);
        }
        let percent = (color.alpha.clamp(0.0, 1.0) * 100.0).round() as u8;
        if self.alpha != Some(percent) {
            self.alphas.insert(percent);
            self.content
                .set_parameters(Name(alpha_name(percent).as_bytes()));
            self.alpha = Some(percent);
        }
        true
    }

    fn stroke_style<S: BackendStyle>(&mut self, style: &S) -> bool {
        if !self.paint(style.color(), false) {
            return false;
        }
        let width = style.stroke_width().max(1);
        if self.width != Some(width) {
            self.content.set_line_width(width as f32 * POINTS_PER_PIXEL);
            self.width = Some(width);
        }
        true
    }
}

fn alpha_name(percent: u8) -> String {
    format!("A{percent}")
}

/// Text in Helvetica's WinAnsi encoding: Latin-1 as is, a few typographic
/// characters at their WinAnsi codes, anything else as `?`.
fn win_ansi(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| match c {
            ' '..='~' | '\u{a0}'..='\u{ff}' => c as u8,
            '\u{2026}' => 0x85,
            '\u{2022}' => 0x95,
            '\u{2013}' => 0x96,
            '\u{2014}' => 0x97,
            '\u{2212}' => b'-',
            _ => b'?',
        })
        .collect()
}

type Result<T> = std::result::Result<T, DrawingErrorKind<PdfError>>;

impl DrawingBackend for PdfBackend<'_> {
    type ErrorType = PdfError;

    fn get_size(&self) -> (u32, u32) {
        self.size
    }

    fn ensure_prepared(&mut self) -> Result<()> {
        Ok(())
    }

    fn present(&mut self) -> Result<()> {
        *self.out = self.finish();
        Ok(())
    }

    fn draw_pixel(&mut self, point: (i32, i32), color: BackendColor) -> Result<()> {
        if self.paint(color, true) {
            let (x, y) = self.at(point);
            self.content
                .rect(x, y - POINTS_PER_PIXEL, POINTS_PER_PIXEL, POINTS_PER_PIXEL)
                .fill_nonzero();
        }
        Ok(())
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: (i32, i32),
        to: (i32, i32),
        style: &S,
    ) -> Result<()> {
        self.draw_path([from, to], style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: (i32, i32),
        bottom_right: (i32, i32),
        style: &S,
        fill: bool,
    ) -> Result<()> {
        let (x0, y0) = self.at(upper_left);
        let (x1, y1) = self.at(bottom_right);
        if fill {
            if self.paint(style.color(), true) {
                // Plotters' rectangles include their last pixel.
                let (x1, y1) = self.at_f(bottom_right.0 as f32 + 1.0, bottom_right.1 as f32 + 1.0);
                self.content.rect(x0, y1, x1 - x0, y0 - y1).fill_nonzero();
            }
        } else if self.stroke_style(style) {
            self.content.rect(x0, y1, x1 - x0, y0 - y1).stroke();
        }
        Ok(())
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = (i32, i32)>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<()> {
        let points: Vec<(f32, f32)> = path.into_iter().map(|p| self.at(p)).collect();
        if points.len() < 2 || !self.stroke_style(style) {
            return Ok(());
        }
        self.content.move_to(points[0].0, points[0].1);
        for p in &points[1..] {
            self.content.line_to(p.0, p.1);
        }
        self.content.stroke();
        Ok(())
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: (i32, i32),
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<()> {
        let ok = if fill {
            self.paint(style.color(), true)
        } else {
            self.stroke_style(style)
        };
        if !ok {
            return Ok(());
        }
        // Four Bézier quarter arcs.
        let (cx, cy) = self.at(center);
        let r = radius as f32 * POINTS_PER_PIXEL;
        let k = 0.552_284_8 * r;
        let c = &mut self.content;
        c.move_to(cx + r, cy);
        c.cubic_to(cx + r, cy + k, cx + k, cy + r, cx, cy + r);
        c.cubic_to(cx - k, cy + r, cx - r, cy + k, cx - r, cy);
        c.cubic_to(cx - r, cy - k, cx - k, cy - r, cx, cy - r);
        c.cubic_to(cx + k, cy - r, cx + r, cy - k, cx + r, cy);
        c.close_path();
        if fill {
            c.fill_nonzero();
        } else {
            c.stroke();
        }
        Ok(())
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = (i32, i32)>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<()> {
        let points: Vec<(f32, f32)> = vert.into_iter().map(|p| self.at(p)).collect();
        if points.len() < 3 || !self.paint(style.color(), true) {
            return Ok(());
        }
        self.content.move_to(points[0].0, points[0].1);
        for p in &points[1..] {
            self.content.line_to(p.0, p.1);
        }
        self.content.close_path().fill_nonzero();
        Ok(())
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: (i32, i32),
    ) -> Result<()> {
        if !self.paint(style.color(), true) {
            return Ok(());
        }
        // The size plotters asks for includes line spacing, as in its SVG backend.
        let size = style.size() as f32 / 1.24;
        let ((x0, _), (x1, _)) = style
            .layout_box(text)
            .map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        let width = (x1 - x0) as f32;
        let along = match style.anchor().h_pos {
            HPos::Left => 0.0,
            HPos::Center => -width / 2.0,
            HPos::Right => -width,
        };
        let down = match style.anchor().v_pos {
            VPos::Top => 0.76 * size,
            VPos::Center => 0.27 * size,
            VPos::Bottom => -0.25 * size,
        };
        // The text's advance and "down" directions on the figure (y down).
        let (adv, dn): ((f32, f32), (f32, f32)) = match style.transform() {
            FontTransform::None => ((1.0, 0.0), (0.0, 1.0)),
            FontTransform::Rotate90 => ((0.0, 1.0), (-1.0, 0.0)),
            FontTransform::Rotate180 => ((-1.0, 0.0), (0.0, -1.0)),
            FontTransform::Rotate270 => ((0.0, -1.0), (1.0, 0.0)),
        };
        let start_x = pos.0 as f32 + adv.0 * along + dn.0 * down;
        let start_y = pos.1 as f32 + adv.1 * along + dn.1 * down;
        let (x, y) = self.at_f(start_x, start_y);
        let s = size * POINTS_PER_PIXEL;
        // On the page y points up: flip the vertical components.
        let matrix = [s * adv.0, -s * adv.1, -s * dn.0, s * dn.1, x, y];
        let bytes = win_ansi(text);
        self.content
            .begin_text()
            .set_font(Name(b"F1"), 1.0)
            .set_text_matrix(matrix)
            .show(Str(&bytes))
            .end_text();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_outside_win_ansi_prints_as_a_question_mark() {
        assert_eq!(win_ansi("a–b ≤ 5 µs…"), b"a\x96b ? 5 \xb5s\x85".to_vec());
    }

    #[test]
    fn a_page_is_the_figure_in_points() {
        let mut bytes = Vec::new();
        let mut b = PdfBackend::new(&mut bytes, (100, 50));
        b.draw_line(
            (0, 0),
            (100, 50),
            &BackendColor {
                alpha: 0.5,
                rgb: (255, 0, 0),
            },
        )
        .unwrap();
        b.present().unwrap();
        drop(b);
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.starts_with("%PDF-"));
        assert!(text.contains("/MediaBox [0 0 75 37.5]"), "{text}");
        // From the top-left corner (0, 37.5 pt) to the bottom-right one (75, 0).
        assert!(text.contains("0 37.5 m\n75 0 l\nS"), "{text}");
        assert!(text.contains("/CA 0.5"), "{text}");
    }
}
