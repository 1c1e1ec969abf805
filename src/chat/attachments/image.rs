//! What an image is, judged by its bytes: the four types vision models read (PNG, JPEG, GIF,
//! WebP) recognised by their magic numbers, whatever a client or a server claimed; `data:`
//! URLs decoded; and the part a stored user message carries for each image. Pure functions,
//! no I/O.

use base64::Engine;
use entities::ids::AttachmentId;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::AttachmentError;

/// The image types Colloquy stores and sends to models: those OpenAI's vision API, llama.cpp
/// (stb_image) and vLLM (Pillow) all read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageType {
    Png,
    Jpeg,
    Gif,
    Webp,
}

impl ImageType {
    /// Every type, for error messages and the limits the UI reads.
    pub const ALL: [Self; 4] = [Self::Png, Self::Jpeg, Self::Gif, Self::Webp];

    pub fn mime_type(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
            Self::Gif => "image/gif",
            Self::Webp => "image/webp",
        }
    }

    /// The type `bytes` are, by their full signatures (infer's checks are looser: three
    /// bytes for GIF, no `RIFF` for WebP, which plain text can match); `None` for anything
    /// else (an SVG, a HEIC photo, a PDF, text).
    pub fn sniff(bytes: &[u8]) -> Option<Self> {
        const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";
        if bytes.starts_with(PNG) {
            Some(Self::Png)
        } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some(Self::Jpeg)
        } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
            Some(Self::Gif)
        } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
            Some(Self::Webp)
        } else {
            None
        }
    }
}

/// What `bytes` may be stored as: an image of one of the four types, of at most `max_bytes`.
pub fn check(bytes: &[u8], max_bytes: usize) -> Result<ImageType, AttachmentError> {
    if bytes.len() > max_bytes {
        return Err(AttachmentError::TooLarge {
            size: bytes.len(),
            limit: max_bytes,
        });
    }
    ImageType::sniff(bytes).ok_or_else(|| AttachmentError::NotAnImage {
        found: infer::get(bytes).map(|kind| kind.mime_type().to_string()),
    })
}

/// The bytes of a `data:<type>;base64,<payload>` URL, checked as an image of at most
/// `max_bytes` (the size is judged from the payload's length before it is decoded). The
/// declared type is not trusted: the bytes decide.
pub fn decode_data_url(
    url: &str,
    max_bytes: usize,
) -> Result<(Vec<u8>, ImageType), AttachmentError> {
    let invalid = |reason: &str| AttachmentError::InvalidUrl(reason.to_string());
    let rest = url
        .strip_prefix("data:")
        .ok_or_else(|| invalid("not a data: URL"))?;
    let (header, payload) = rest
        .split_once(',')
        .ok_or_else(|| invalid("a data: URL needs a comma before its payload"))?;
    if !header.split(';').any(|p| p.eq_ignore_ascii_case("base64")) {
        return Err(invalid(
            "an image data: URL must be base64 (data:image/png;base64,…)",
        ));
    }
    let payload: String = payload
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    // Four base64 characters are three bytes: refuse a payload too large before decoding it.
    let decoded_at_least = (payload.trim_end_matches('=').len() * 3) / 4;
    if decoded_at_least > max_bytes {
        return Err(AttachmentError::TooLarge {
            size: decoded_at_least,
            limit: max_bytes,
        });
    }
    let engine = base64::engine::general_purpose::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::general_purpose::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    let bytes = engine
        .decode(payload.as_bytes())
        .or_else(|_| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload.trim_end_matches('='))
        })
        .map_err(|err| invalid(&format!("its base64 payload does not decode: {err}")))?;
    let kind = check(&bytes, max_bytes)?;
    Ok((bytes, kind))
}

/// The `data:` URL a model is sent for an image.
pub fn data_url(kind: ImageType, bytes: &[u8]) -> String {
    let mut url = format!("data:{};base64,", kind.mime_type());
    base64::engine::general_purpose::STANDARD.encode_string(bytes, &mut url);
    url
}

/// What a model request carries in place of a stored image until it is sent: an `image_url`
/// part whose URL names the attachment (`attachment:att_…`). The run reads the bytes and
/// puts a `data:` URL there just before each model call (`agent::images`), so checkpoints
/// and the loop's messages stay small.
pub const REFERENCE_SCHEME: &str = "attachment:";

/// One image of a stored user message, as its `parts` hold it:
/// `{"type": "image", "attachment_id": "att_…", "mime_type": "image/png"}`, with the
/// `detail` (`auto`, `low`, `high`) an OpenAI client asked for, sent on with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImagePart {
    pub attachment_id: AttachmentId,
    pub mime_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl ImagePart {
    /// The message part stored for it.
    pub fn to_part(&self) -> Value {
        let mut part = json!({"type": "image", "attachment_id": self.attachment_id,
            "mime_type": self.mime_type});
        if let Some(detail) = &self.detail {
            part["detail"] = json!(detail);
        }
        part
    }

    /// The model's content part standing for it until the run inlines the bytes.
    pub fn reference(&self) -> Value {
        let mut image_url = json!({"url": format!("{REFERENCE_SCHEME}{}", self.attachment_id)});
        if let Some(detail) = &self.detail {
            image_url["detail"] = json!(detail);
        }
        json!({"type": "image_url", "image_url": image_url})
    }

    /// The images among a stored message's `parts` (artifacts and other parts are skipped).
    pub fn of_parts(parts: Option<&Value>) -> Vec<Self> {
        parts
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|part| part["type"] == "image")
            .filter_map(|part| serde_json::from_value(part.clone()).ok())
            .collect()
    }

    /// A user message's `parts` for these images; `None` for none.
    pub fn parts_of(images: &[Self]) -> Option<Value> {
        (!images.is_empty()).then(|| Value::Array(images.iter().map(Self::to_part).collect()))
    }
}

/// The attachment an `attachment:` URL names, if it is one.
pub fn referenced(url: &str) -> Option<AttachmentId> {
    url.strip_prefix(REFERENCE_SCHEME)
        .and_then(AttachmentId::parse)
}

/// The smallest PNG, a 1×1 transparent pixel, for tests.
#[cfg(test)]
pub(crate) const TEST_PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
    0x42, 0x60, 0x82,
];

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = TEST_PNG;

    #[test]
    fn the_bytes_decide_the_type_not_the_name_or_the_claim() {
        assert_eq!(ImageType::sniff(PNG), Some(ImageType::Png));
        assert_eq!(
            ImageType::sniff(&[0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10]),
            Some(ImageType::Jpeg)
        );
        assert_eq!(ImageType::sniff(b"GIF89a\x01\x00"), Some(ImageType::Gif));
        assert_eq!(
            ImageType::sniff(b"RIFF\x24\x00\x00\x00WEBPVP8 "),
            Some(ImageType::Webp)
        );
        assert_eq!(
            ImageType::sniff(b"<svg xmlns='http://www.w3.org/2000/svg'/>"),
            None
        );
        assert_eq!(ImageType::sniff(b"%PDF-1.7"), None);
        // A WAV file is RIFF too, and not an image.
        assert_eq!(ImageType::sniff(b"RIFF\x24\x00\x00\x00WAVEfmt "), None);
    }

    #[test]
    fn a_file_over_the_limit_or_not_an_image_is_refused_by_name() {
        assert!(matches!(
            check(PNG, 10),
            Err(AttachmentError::TooLarge { limit: 10, .. })
        ));
        let pdf = check(b"%PDF-1.7\n1 0 obj", 1000).unwrap_err();
        assert!(pdf.to_string().contains("application/pdf"), "{pdf}");
        assert!(check(b"", 1000).is_err());
    }

    #[test]
    fn a_data_url_is_decoded_and_checked_by_its_bytes() {
        let url = data_url(ImageType::Png, PNG);
        assert!(url.starts_with("data:image/png;base64,iVBOR"));
        assert_eq!(
            decode_data_url(&url, 1000).unwrap(),
            (PNG.to_vec(), ImageType::Png)
        );
        // The declared type is not trusted.
        let lying = url.replace("image/png", "image/jpeg");
        assert_eq!(decode_data_url(&lying, 1000).unwrap().1, ImageType::Png);
        let text = "data:image/png;base64,aGVsbG8gd29ybGQ=";
        assert!(matches!(
            decode_data_url(text, 1000),
            Err(AttachmentError::NotAnImage { .. })
        ));
        assert!(matches!(
            decode_data_url("data:image/png,rawbytes", 1000),
            Err(AttachmentError::InvalidUrl(_))
        ));
        assert!(matches!(
            decode_data_url("data:image/png;base64,!!!", 1000),
            Err(AttachmentError::InvalidUrl(_))
        ));
        // Too large is known from the payload's length, before decoding.
        let big = format!("data:image/png;base64,{}", "A".repeat(4_000));
        assert!(matches!(
            decode_data_url(&big, 1000),
            Err(AttachmentError::TooLarge { .. })
        ));
    }

    #[test]
    fn stored_parts_and_model_references_name_the_attachment() {
        let image = ImagePart {
            attachment_id: AttachmentId::generate(),
            mime_type: "image/png".into(),
            detail: Some("low".into()),
        };
        let parts = ImagePart::parts_of(std::slice::from_ref(&image)).unwrap();
        assert_eq!(parts[0]["type"], "image");
        let mixed = json!([{"type": "artifact", "identifier": "x"}, parts[0].clone()]);
        assert_eq!(ImagePart::of_parts(Some(&mixed)), vec![image.clone()]);
        let url = image.reference()["image_url"]["url"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(referenced(&url), Some(image.attachment_id));
        assert_eq!(referenced("attachment:../../etc/passwd"), None);
        assert_eq!(ImagePart::parts_of(&[]), None);
    }
}
