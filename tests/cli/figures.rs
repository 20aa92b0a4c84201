//! Reading back what `netloop plot` drew: a figure's PNG (size, not blank),
//! its SVG (texts, bands) and its PDF (a well-formed file whose page holds
//! the same texts).

use std::path::{Path, PathBuf};

/// One figure's three files, checked and read.
pub struct Figure {
    pub svg: String,
    /// The SVG's `<text>` contents, in order.
    pub texts: Vec<String>,
}

impl Figure {
    /// The number of `<polygon>` elements: confidence bands.
    pub fn bands(&self) -> usize {
        let doc = roxmltree::Document::parse(&self.svg).unwrap();
        doc.descendants()
            .filter(|n| n.has_tag_name("polygon"))
            .count()
    }

    pub fn has_text(&self, text: &str) -> bool {
        self.texts.iter().any(|t| t == text)
    }

    pub fn count_text(&self, text: &str) -> usize {
        self.texts.iter().filter(|t| *t == text).count()
    }
}

fn with_ext(stem: &Path, ext: &str) -> PathBuf {
    stem.with_file_name(format!(
        "{}.{ext}",
        stem.file_name().unwrap().to_string_lossy()
    ))
}

/// Checks the PNG, SVG and PDF of `stem` (a path without extension) and
/// returns what they hold.
pub fn check_figure(stem: &Path) -> Figure {
    check_png(&with_ext(stem, "png"));
    let svg_path = with_ext(stem, "svg");
    let svg = std::fs::read_to_string(&svg_path)
        .unwrap_or_else(|e| panic!("{}: {e}", svg_path.display()));
    let texts = {
        let doc = roxmltree::Document::parse(&svg)
            .unwrap_or_else(|e| panic!("{} is not XML: {e}", svg_path.display()));
        let root = doc.root_element();
        assert_eq!(root.attribute("width"), Some("1200"));
        assert_eq!(root.attribute("height"), Some("800"));
        assert!(
            doc.descendants().any(|n| n.has_tag_name("polyline")),
            "{} has no lines",
            svg_path.display()
        );
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| n.text().unwrap_or("").trim().to_string())
            .collect::<Vec<_>>()
    };
    assert!(!texts.is_empty(), "{} has no text", svg_path.display());
    let pdf_content = check_pdf(&with_ext(stem, "pdf"));
    // The title, the first text, is on the page: as a literal string, or
    // as a hex one where it holds bytes beyond ASCII (`…` in WinAnsi);
    // checked up to the `…`.
    let title = texts[0].split('…').next().unwrap_or("");
    let hex: String = title.bytes().map(|b| format!("{b:02X}")).collect();
    assert!(
        pdf_content.contains(title) || pdf_content.contains(&hex),
        "{}: the PDF lacks the title {title:?}",
        stem.display()
    );
    // Every text of the SVG is one text-showing operator of the PDF.
    assert_eq!(
        pdf_content.matches(" Tj\n").count(),
        texts.len(),
        "{}: the PDF and the SVG hold different texts",
        stem.display()
    );
    Figure { svg, texts }
}

/// A 1200 x 800 PNG that is not blank: many pixels are not white, in
/// several colours.
fn check_png(path: &Path) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder
        .read_info()
        .unwrap_or_else(|e| panic!("{} is not a PNG: {e}", path.display()));
    let (w, h) = (reader.info().width, reader.info().height);
    assert_eq!((w, h), (1200, 800), "{}", path.display());
    let mut pixels = vec![0u8; (w * h * 4) as usize];
    let frame = reader.next_frame(&mut pixels).unwrap();
    assert_eq!(frame.color_type, png::ColorType::Rgb, "{}", path.display());
    let pixels = &pixels[..frame.buffer_size()];
    let mut colours = std::collections::BTreeSet::new();
    let mut inked = 0;
    for p in pixels.chunks(3) {
        if p != [255, 255, 255] {
            inked += 1;
            colours.insert((p[0], p[1], p[2]));
        }
    }
    assert!(
        inked > (w * h / 100) as usize && colours.len() > 3,
        "{} is (almost) blank: {inked} pixels not white, {} colours",
        path.display(),
        colours.len()
    );
}

fn fail(path: &Path, what: &str) -> ! {
    panic!("{}: {what}", path.display())
}

/// The body of indirect object `id` (up to its `endobj`).
fn object<'t>(path: &Path, text: &'t str, offsets: &[usize], id: usize) -> &'t str {
    let body = &text[offsets[id]..];
    &body[..body
        .find("endobj")
        .unwrap_or_else(|| fail(path, "an object without endobj"))]
}

/// The number after `key` in `body` (an object number, a length).
fn number_after(path: &Path, body: &str, key: &str) -> usize {
    let at = body
        .find(key)
        .unwrap_or_else(|| fail(path, &format!("no {key}")));
    body[at + key.len()..]
        .split_whitespace()
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| fail(path, &format!("{key} is not followed by a number")))
}

/// Follows a PDF from its trailer: the cross-reference table points at
/// every object, the catalog at the page tree, the tree at one page of
/// 900 x 600 pt, the page at its content stream, whose text is returned.
fn check_pdf(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    // Bytes above ASCII (the header's marker, WinAnsi text) as one
    // character each, so offsets into the text are offsets into the file.
    let text: String = bytes
        .iter()
        .map(|&b| if b < 0x80 { b as char } else { '?' })
        .collect();
    if !text.starts_with("%PDF-1.") || !text.trim_end().ends_with("%%EOF") {
        fail(path, "no PDF header or end");
    }
    let start = text
        .rfind("startxref")
        .unwrap_or_else(|| fail(path, "no startxref"));
    let xref = number_after(path, &text[start..], "startxref");
    let mut lines = text[xref..].lines();
    if lines.next() != Some("xref") {
        fail(path, "startxref does not point at the xref table");
    }
    let count: usize = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or_else(|| fail(path, "no xref subsection"));
    let mut offsets = vec![0usize; count];
    for (i, offset) in offsets.iter_mut().enumerate() {
        let entry = lines.next().unwrap_or_else(|| fail(path, "short xref"));
        *offset = entry[..10]
            .parse()
            .unwrap_or_else(|_| fail(path, "bad xref entry"));
        if i > 0 && !text[*offset..].starts_with(&format!("{i} 0 obj")) {
            fail(
                path,
                &format!("xref entry {i} does not point at object {i}"),
            );
        }
    }
    let trailer = &text[text
        .rfind("trailer")
        .unwrap_or_else(|| fail(path, "no trailer"))..];
    let catalog = object(path, &text, &offsets, number_after(path, trailer, "/Root"));
    assert!(catalog.contains("/Type /Catalog"), "{}", path.display());
    let pages = object(path, &text, &offsets, number_after(path, catalog, "/Pages"));
    assert!(pages.contains("/Count 1"), "{}: one page", path.display());
    let page = object(path, &text, &offsets, number_after(path, pages, "/Kids ["));
    assert!(
        page.contains("/MediaBox [0 0 900 600]"),
        "{}: the page is 900 x 600 pt",
        path.display()
    );
    let contents = object(path, &text, &offsets, number_after(path, page, "/Contents"));
    let length = number_after(path, contents, "/Length");
    let data = contents
        .find("stream\n")
        .unwrap_or_else(|| fail(path, "no stream"))
        + 7;
    let stream = &contents[data..data + length];
    assert!(
        contents[data + length..]
            .trim_start()
            .starts_with("endstream"),
        "{}: the stream's /Length is wrong",
        path.display()
    );
    assert!(
        stream.contains(" l\n") && stream.contains(" Tf\n"),
        "{}: no lines or no text on the page",
        path.display()
    );
    stream.to_string()
}
