//! Reading F32 tensors from a `.safetensors` file: an 8-byte little-endian header length, a JSON
//! header naming each tensor's dtype, shape and byte range, then the data. Every number in the
//! header is checked against the file before anything is read, so a damaged or hostile file
//! gives a [`ModelError`], never a panic or an allocation the file cannot back.

use crate::error::ModelError;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Headers are ~11 KB for this model; the format's own limit is 100 MB.
const MAX_HEADER: u64 = 100 << 20;

/// An open safetensors file and its parsed header.
pub(crate) struct Weights {
    file: File,
    path: PathBuf,
    header: serde_json::Map<String, serde_json::Value>,
    data_start: u64,
    data_len: u64,
    /// The header's bytes (a fingerprint of the file's layout, for the model id).
    pub(crate) header_bytes: Vec<u8>,
}

impl Weights {
    pub(crate) fn open(path: &Path) -> Result<Weights, ModelError> {
        let io = |source| ModelError::Io { path: path.to_path_buf(), source };
        let malformed = |reason: String| ModelError::Malformed { path: path.to_path_buf(), reason };
        let mut file = File::open(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => ModelError::MissingFile { path: path.to_path_buf() },
            _ => io(e),
        })?;
        let file_len = file.metadata().map_err(io)?.len();
        let mut len = [0u8; 8];
        if file_len < 8 {
            return Err(malformed(format!("{file_len} bytes is too short for a safetensors file")));
        }
        file.read_exact(&mut len).map_err(io)?;
        let header_len = u64::from_le_bytes(len);
        if header_len > MAX_HEADER || header_len > file_len - 8 {
            return Err(malformed(format!("the safetensors header claims {header_len} bytes in a file of {file_len}")));
        }
        let mut header_bytes = vec![0u8; header_len as usize];
        file.read_exact(&mut header_bytes).map_err(io)?;
        let header: serde_json::Value = serde_json::from_slice(&header_bytes)
            .map_err(|e| malformed(format!("the safetensors header is not JSON: {e}")))?;
        let serde_json::Value::Object(header) = header else {
            return Err(malformed("the safetensors header is not a JSON object".into()));
        };
        let data_start = 8 + header_len;
        Ok(Weights {
            file,
            path: path.to_path_buf(),
            header,
            data_start,
            data_len: file_len - data_start,
            header_bytes,
        })
    }

    /// The F32 tensor `name`, which must have exactly `shape`, as a flat row-major vector.
    pub(crate) fn tensor(&mut self, name: &str, shape: &[usize]) -> Result<Vec<f32>, ModelError> {
        let fail = |reason: String| ModelError::Tensor { path: self.path.clone(), name: name.to_string(), reason };
        let entry = self.header.get(name).ok_or_else(|| fail("not in the file".into()))?;
        let dtype = entry.get("dtype").and_then(|d| d.as_str());
        if dtype != Some("F32") {
            return Err(fail(format!("dtype {dtype:?}, expected \"F32\"")));
        }
        let found: Option<Vec<usize>> = entry
            .get("shape")
            .and_then(|s| s.as_array())
            .and_then(|dims| dims.iter().map(|d| d.as_u64().and_then(|d| usize::try_from(d).ok())).collect());
        if found.as_deref() != Some(shape) {
            return Err(fail(format!("shape {:?}, expected {shape:?}", entry.get("shape"))));
        }
        let offsets = entry.get("data_offsets").and_then(|o| o.as_array());
        let (begin, end) = match offsets.map(|o| o.as_slice()) {
            Some([b, e]) => (b.as_u64(), e.as_u64()),
            _ => (None, None),
        };
        let (Some(begin), Some(end)) = (begin, end) else {
            return Err(fail(format!("data_offsets {:?} are not two numbers", entry.get("data_offsets"))));
        };
        // A config and header may agree on absurd sizes: refuse any whose bytes overflow.
        let count = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        let Some((count, want)) = count.and_then(|c| Some((c, u64::try_from(c).ok()?.checked_mul(4)?))) else {
            return Err(fail(format!("shape {shape:?} is too large")));
        };
        if end < begin || end - begin != want || end > self.data_len {
            return Err(fail(format!(
                "data_offsets [{begin}, {end}] do not hold {want} bytes inside the {} data bytes",
                self.data_len
            )));
        }
        let io = |source| ModelError::Io { path: self.path.clone(), source };
        self.file.seek(SeekFrom::Start(self.data_start + begin)).map_err(io)?;
        // Read through a small buffer: the whole model never sits in memory twice.
        let mut values = Vec::with_capacity(count);
        let mut buf = vec![0u8; (1 << 20).min(want as usize)];
        let mut left = want as usize;
        while left > 0 {
            let chunk = &mut buf[..left.min(1 << 20)];
            self.file.read_exact(chunk).map_err(io)?;
            values.extend(chunk.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])));
            left -= chunk.len();
        }
        if let Some(bad) = values.iter().position(|v| !v.is_finite()) {
            return Err(fail(format!("value {bad} is not a finite number")));
        }
        Ok(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A safetensors file with the given header JSON and data bytes, in a fresh temp file.
    fn file(name: &str, header: &str, data: &[u8]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("gg-meaning-weights-{}-{name}", std::process::id()));
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(data);
        std::fs::write(&dir, bytes).expect("temp file");
        dir
    }

    fn two_floats() -> Vec<u8> {
        [1.5f32, -2.0].iter().flat_map(|f| f.to_le_bytes()).collect()
    }

    #[test]
    fn a_tensor_is_read_in_order_when_header_and_data_agree() {
        let path = file("ok", r#"{"t":{"dtype":"F32","shape":[1,2],"data_offsets":[0,8]}}"#, &two_floats());
        let mut w = Weights::open(&path).expect("opens");
        assert_eq!(w.tensor("t", &[1, 2]).expect("reads"), [1.5, -2.0]);
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn each_inconsistency_is_an_error_naming_the_tensor() {
        let cases = [
            (r#"{"t":{"dtype":"F16","shape":[1,2],"data_offsets":[0,8]}}"#, "dtype"),
            (r#"{"t":{"dtype":"F32","shape":[2,1],"data_offsets":[0,8]}}"#, "shape"),
            (r#"{"t":{"dtype":"F32","shape":[1,2],"data_offsets":[0,16]}}"#, "data_offsets"),
            (r#"{"t":{"dtype":"F32","shape":[1,2],"data_offsets":[4,12]}}"#, "data_offsets"),
            (r#"{"t":{"dtype":"F32","shape":[1,2],"data_offsets":[8,0]}}"#, "data_offsets"),
            (r#"{"t":{"dtype":"F32","shape":[1,2],"data_offsets":"x"}}"#, "data_offsets"),
            (r#"{"u":{}}"#, "not in the file"),
        ];
        for (i, (header, expected)) in cases.into_iter().enumerate() {
            let path = file(&format!("bad{i}"), header, &two_floats());
            let err = Weights::open(&path).and_then(|mut w| w.tensor("t", &[1, 2])).err();
            let text = err.as_ref().map(|e| e.to_string()).unwrap_or_default();
            assert!(matches!(err, Some(ModelError::Tensor { ref name, .. }) if name == "t"), "{header}: {err:?}");
            assert!(text.contains(expected), "{header}: {text}");
            let _ = std::fs::remove_file(path);
        }
    }

    #[test]
    fn a_header_longer_than_the_file_or_not_json_is_malformed() {
        let mut bytes = u64::MAX.to_le_bytes().to_vec();
        bytes.extend_from_slice(b"{}");
        let path = std::env::temp_dir().join(format!("gg-meaning-weights-{}-huge", std::process::id()));
        std::fs::write(&path, bytes).expect("temp file");
        assert!(matches!(Weights::open(&path), Err(ModelError::Malformed { .. })));
        let path2 = file("notjson", "{nope", &[]);
        assert!(matches!(Weights::open(&path2), Err(ModelError::Malformed { .. })));
        let path3 = file("short", "", &[]);
        std::fs::write(&path3, [1u8, 2]).expect("temp file");
        assert!(matches!(Weights::open(&path3), Err(ModelError::Malformed { .. })));
        for p in [path, path2, path3] {
            let _ = std::fs::remove_file(p);
        }
    }

    #[test]
    fn a_shape_whose_size_overflows_is_refused_not_allocated() {
        let header = format!(r#"{{"t":{{"dtype":"F32","shape":[{m},{m}],"data_offsets":[0,8]}}}}"#, m = usize::MAX);
        let path = file("huge", &header, &two_floats());
        let err = Weights::open(&path).and_then(|mut w| w.tensor("t", &[usize::MAX, usize::MAX]));
        assert!(matches!(err, Err(ModelError::Tensor { ref reason, .. }) if reason.contains("too large")), "{err:?}");
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn a_non_finite_weight_is_refused() {
        let data: Vec<u8> = [1.0f32, f32::NAN].iter().flat_map(|f| f.to_le_bytes()).collect();
        let path = file("nan", r#"{"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#, &data);
        let err = Weights::open(&path).and_then(|mut w| w.tensor("t", &[2]));
        assert!(matches!(err, Err(ModelError::Tensor { .. })), "{err:?}");
        let _ = std::fs::remove_file(path);
    }
}
