//! The TrueType font PNG charts draw their text with, loaded from a file at run time and registered with
//! plotters' glyph renderer once per file.
//!
//! Why a system font rather than one compiled in: Debian ships DejaVu Sans in `fonts-dejavu-core` (installed by
//! `scripts/debian-packages.sh`), so the binary stays small and the font's licence stays Debian's business. SVG
//! charts need no font at all (see `svg.rs`).

use crate::PlotError;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Where Debian's `fonts-dejavu-core` puts DejaVu Sans.
pub const DEJAVU_SANS: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
/// The Debian package that provides [`DEJAVU_SANS`].
pub const FONT_PACKAGE: &str = "fonts-dejavu-core";

/// A font registered with the renderer under a family name of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Font {
    family: String,
}

/// Fonts registered so far, by file: registering leaks the font's bytes (the renderer wants them for the rest of
/// the process), so each file is read and registered once.
static REGISTERED: Mutex<Vec<(PathBuf, String)>> = Mutex::new(Vec::new());

impl Font {
    /// DejaVu Sans from `fonts-dejavu-core`.
    pub fn system() -> Result<Font, PlotError> {
        Font::from_file(Path::new(DEJAVU_SANS))
    }

    /// A TrueType or OpenType font file.
    pub fn from_file(path: &Path) -> Result<Font, PlotError> {
        let mut registered = REGISTERED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((_, family)) = registered.iter().find(|(p, _)| p == path) {
            return Ok(Font { family: family.clone() });
        }
        let bytes = std::fs::read(path).map_err(|e| PlotError::FontMissing {
            path: path.to_path_buf(),
            package: FONT_PACKAGE,
            reason: e.to_string(),
        })?;
        let family = format!("culprit-font-{}", registered.len());
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        plotters::style::register_font(&family, plotters::style::FontStyle::Normal, bytes)
            .map_err(|_| PlotError::FontUnreadable { path: path.to_path_buf(), package: FONT_PACKAGE })?;
        registered.push((path.to_path_buf(), family.clone()));
        Ok(Font { family })
    }

    /// The family name to draw text with.
    pub fn family(&self) -> &str {
        &self.family
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_font_names_the_package_to_install() {
        let err = Font::from_file(Path::new("/nonexistent/culprit/DejaVuSans.ttf")).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("fonts-dejavu-core"), "{text}");
        assert!(text.contains("/nonexistent/culprit/DejaVuSans.ttf"), "{text}");
    }

    #[test]
    fn a_file_that_is_no_font_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("not-a-font.ttf");
        std::fs::write(&path, b"hello, I am not a font").unwrap();
        assert!(matches!(Font::from_file(&path), Err(PlotError::FontUnreadable { .. })));
    }
}
