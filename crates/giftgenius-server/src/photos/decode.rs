//! From a merchant's bytes to our two JPEGs: the format sniffed from the bytes (JPEG, PNG or
//! WebP; anything else, SVG and HTML included, is refused whatever its Content-Type said), the
//! dimensions read from the header and capped before a pixel is decoded (a small file can
//! declare a huge image), the decoder's allocations capped too, then a square crop from the
//! middle at both sizes, flattened onto white, as JPEG. CPU work: run it on a blocking thread.

use std::io::Cursor;

use axum::body::Bytes;
use image::codecs::jpeg::JpegEncoder;
use image::imageops::FilterType;
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, Limits, RgbImage, RgbaImage};

/// JPEG quality of our photos: small files at card sizes with no visible blocking.
const QUALITY: u8 = 82;

/// The formats we accept, told by their first bytes.
pub fn sniff(bytes: &[u8]) -> Option<ImageFormat> {
    if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(ImageFormat::Jpeg)
    } else if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(ImageFormat::Png)
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some(ImageFormat::WebP)
    } else {
        None
    }
}

/// Why a body did not become a photo; for the log only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Undecodable {
    /// Not JPEG, PNG or WebP by its bytes.
    NotAnImage,
    /// More pixels than the cap (width × height from the header).
    TooManyPixels { width: u32, height: u32 },
    /// The decoder failed (corrupt data, or its allocation limit).
    Broken(String),
}

impl std::fmt::Display for Undecodable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Undecodable::NotAnImage => f.write_str("not a JPEG, PNG or WebP image"),
            Undecodable::TooManyPixels { width, height } => write!(f, "{width}x{height} is over the pixel cap"),
            Undecodable::Broken(e) => write!(f, "cannot decode: {e}"),
        }
    }
}

/// One photo at both sizes.
#[derive(Debug, Clone)]
pub struct Resized {
    /// `side` × `side` pixels.
    pub small: Bytes,
    /// 2 × `side` square.
    pub large: Bytes,
}

/// Decodes `bytes` (at most `max_pixels` pixels) and makes the two squares of `side` and
/// `2 * side` pixels.
pub fn resize(bytes: &[u8], max_pixels: u64, side: u32) -> Result<Resized, Undecodable> {
    let format = sniff(bytes).ok_or(Undecodable::NotAnImage)?;
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    let mut limits = Limits::default();
    // Decoded RGBA of the largest image allowed, and a little for the decoder's own buffers.
    limits.max_alloc = Some(max_pixels.saturating_mul(4).saturating_add(16 << 20));
    reader.limits(limits);
    let broken = |e: image::ImageError| Undecodable::Broken(e.to_string());
    let mut decoder = reader.into_decoder().map_err(broken)?;
    let (width, height) = decoder.dimensions();
    if u64::from(width) * u64::from(height) > max_pixels || width == 0 || height == 0 {
        return Err(Undecodable::TooManyPixels { width, height });
    }
    let orientation = decoder.orientation().map_err(broken)?;
    let mut image = DynamicImage::from_decoder(decoder).map_err(broken)?;
    image.apply_orientation(orientation);
    let large = image.resize_to_fill(side * 2, side * 2, FilterType::Triangle);
    let small = large.resize_exact(side, side, FilterType::Triangle);
    Ok(Resized { small: jpeg(&small.to_rgba8())?, large: jpeg(&large.to_rgba8())? })
}

/// The picture on white (transparent parts of a PNG or WebP would otherwise turn black), as JPEG.
fn jpeg(rgba: &RgbaImage) -> Result<Bytes, Undecodable> {
    let rgb = RgbImage::from_fn(rgba.width(), rgba.height(), |x, y| {
        let [r, g, b, a] = rgba.get_pixel(x, y).0;
        let on_white = |c: u8| ((u16::from(c) * u16::from(a) + 255 * (255 - u16::from(a)) + 127) / 255) as u8;
        image::Rgb([on_white(r), on_white(g), on_white(b)])
    });
    let mut out = Vec::new();
    JpegEncoder::new_with_quality(&mut out, QUALITY)
        .encode_image(&rgb)
        .map_err(|e| Undecodable::Broken(e.to_string()))?;
    Ok(Bytes::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_told_by_their_bytes() {
        assert_eq!(sniff(&[0xFF, 0xD8, 0xFF, 0xE0]), Some(ImageFormat::Jpeg));
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n...."), Some(ImageFormat::Png));
        assert_eq!(sniff(b"RIFF\x10\0\0\0WEBPVP8 "), Some(ImageFormat::WebP));
        assert_eq!(sniff(b"<svg xmlns='http://www.w3.org/2000/svg'/>"), None);
        assert_eq!(sniff(b"<!doctype html><html>"), None);
        assert_eq!(sniff(b"GIF89a"), None);
        assert_eq!(sniff(b""), None);
    }

    #[test]
    fn a_transparent_png_lands_on_white() {
        let clear = RgbaImage::from_pixel(4, 4, image::Rgba([0, 0, 0, 0]));
        let mut png = Vec::new();
        DynamicImage::ImageRgba8(clear).write_to(&mut Cursor::new(&mut png), ImageFormat::Png).unwrap();
        let out = resize(&png, 1_000, 8).unwrap();
        let back = image::load_from_memory_with_format(&out.small, ImageFormat::Jpeg).unwrap().to_rgb8();
        assert_eq!((back.width(), back.height()), (8, 8));
        assert!(back.pixels().all(|p| p.0.iter().all(|&c| c > 245)), "not white: {:?}", back.get_pixel(0, 0));
    }

    #[test]
    fn pixels_are_counted_from_the_header_before_decoding() {
        let mut png = Vec::new();
        DynamicImage::ImageRgb8(RgbImage::new(300, 200))
            .write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
            .unwrap();
        assert_eq!(resize(&png, 59_999, 8).unwrap_err(), Undecodable::TooManyPixels { width: 300, height: 200 });
        assert!(resize(&png, 60_000, 8).is_ok());
    }

    #[test]
    fn corrupt_bytes_after_a_good_signature_are_an_error_not_a_panic() {
        let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
        bytes.extend_from_slice(&[0xAB; 64]);
        assert!(matches!(resize(&bytes, 1_000_000, 8), Err(Undecodable::Broken(_))));
        assert!(matches!(resize(&[0xFF, 0xD8, 0xFF, 0x00], 1_000_000, 8), Err(Undecodable::Broken(_))));
    }
}
